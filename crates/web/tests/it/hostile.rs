//! Hostile input, by construction, for the web layer: a body far over the size cap (an endless
//! chunked stream: stopped while streaming, after about the cap, with memory bounded), a zstd
//! bomb planted in the raw-page archive (refused at the cap, never inflated whole), an archive
//! index with invalid UTF-8 (the bad line skipped), bodies with invalid UTF-8 (decoded with
//! replacements), and URLs with control characters (never sent raw).

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use noisebench_web::archive::{INDEX_FILE, object_path, read_index, read_object_capped};
use noisebench_web::{AddressClass, FetchError, HttpClient, HttpConfig, HttpRequest, Url};

/// A server on 127.0.0.1 answering every request with a chunked body that never ends; counts
/// the bytes it managed to send before the client hung up.
fn endless_server() -> (String, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let sent = Arc::new(AtomicU64::new(0));
    let counter = sent.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let counter = counter.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                while reader.read_line(&mut line).unwrap_or(0) > 2 {
                    line.clear();
                }
                let mut stream = stream;
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ntransfer-encoding: chunked\r\n\r\n";
                if stream.write_all(head.as_bytes()).is_err() {
                    return;
                }
                let chunk = vec![b'<'; 64 * 1024];
                loop {
                    let framed =
                        [format!("{:x}\r\n", chunk.len()).as_bytes(), &chunk, b"\r\n"].concat();
                    if stream.write_all(&framed).is_err() {
                        return;
                    }
                    counter.fetch_add(chunk.len() as u64, Ordering::SeqCst);
                }
            });
        }
    });
    (format!("http://{addr}/page"), sent)
}

fn client(max_body_bytes: u64) -> HttpClient {
    HttpClient::new(HttpConfig {
        rate_per_second: None,
        max_body_bytes,
        timeout: Duration::from_secs(20),
        allow_addresses: vec![AddressClass::Loopback],
        ..HttpConfig::default()
    })
    .unwrap()
}

#[test]
fn an_endless_body_is_stopped_while_streaming_near_the_cap() {
    let (url, sent) = endless_server();
    let cap = 1 << 20;
    let started = Instant::now();
    let result = client(cap).send_blocking(&HttpRequest::get(Url::parse(&url).unwrap()));
    assert!(
        matches!(result, Err(FetchError::TooLarge { limit }) if limit == cap),
        "{result:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    // The client stopped reading soon after the cap: what the server got out is the cap plus
    // what fits in the socket buffers, not an unbounded stream.
    std::thread::sleep(Duration::from_millis(300));
    let sent = sent.load(Ordering::SeqCst);
    assert!(
        sent < 64 << 20,
        "{sent} bytes sent before the client hung up"
    );
}

/// A zstd frame of `blocks` RLE blocks of 128 KiB of `byte` each: a few bytes a block, so a
/// 32 KiB file inflates to 1 GiB.
pub fn zstd_bomb(blocks: usize, byte: u8) -> Vec<u8> {
    let mut out = vec![0x28, 0xB5, 0x2F, 0xFD]; // magic
    out.push(0x00); // frame header: no content size, not single segment, no checksum
    out.push(7 << 3); // window 2^17
    for i in 0..blocks {
        let last = (i + 1 == blocks) as u32;
        let header = last | (1 << 1) | ((128 * 1024) << 3);
        out.extend_from_slice(&header.to_le_bytes()[..3]);
        out.push(byte);
    }
    out
}

#[test]
fn a_zstd_bomb_in_the_archive_is_refused_at_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let sha = "ab".repeat(32);
    let path = object_path(dir.path(), &sha);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // 1 GiB when inflated.
    std::fs::write(&path, zstd_bomb(8192, b'a')).unwrap();
    let cap = 8 << 20;
    let err = read_object_capped(dir.path(), &sha, cap).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
    assert!(err.to_string().contains("refused"), "{err}");
    // A small object under the same reader comes back whole.
    std::fs::write(&path, zstd_bomb(2, b'b')).unwrap();
    assert_eq!(
        read_object_capped(dir.path(), &sha, cap).unwrap(),
        vec![b'b'; 256 * 1024]
    );
}

#[test]
fn an_archive_index_line_of_invalid_utf8_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let good = r#"{"url":"https://a.example/","final_url":"https://a.example/","status":200,"headers":{},"fetched_at":"2024-01-01T00:00:00Z","sha256":"00","size":1}"#;
    let bytes = [
        good.as_bytes(),
        b"\n{\"url\": \"\xff\xfe\"}\n",
        good.as_bytes(),
        b"\n",
    ]
    .concat();
    std::fs::write(dir.path().join(INDEX_FILE), bytes).unwrap();
    assert_eq!(read_index(dir.path()).unwrap().len(), 2);
}

#[test]
fn invalid_utf8_bodies_decode_with_replacements() {
    let body =
        b"<html><head><meta charset=\"utf-8\"></head><body>caf\xe9 \xff\xfe \xc3\x28</body></html>";
    let (text, _) = noisebench_web::charset::decode(body, Some("text/html; charset=utf-8"));
    assert!(text.contains("caf"));
    let (text, _) = noisebench_web::charset::decode(body, None);
    assert!(text.contains("</body>"));
    let (text, _) = noisebench_web::charset::decode(
        b"\xff\xfe\x00<\x00h",
        Some("text/html; charset=bogus\x01"),
    );
    let _ = text;
}

#[test]
fn urls_with_control_characters_are_never_sent_raw() {
    for raw in [
        "https://a.example/pa\u{0}th?q=\u{7}",
        "https://a.example/x\r\nHost: evil.example",
        "https://a.example/\u{1b}[31mred",
        "https://a.example/tab\there",
    ] {
        if let Ok(url) = Url::parse(raw) {
            assert!(
                !url.as_str().chars().any(char::is_control),
                "{:?}",
                url.as_str()
            );
            let request = HttpRequest::get(url);
            assert!(!request.redacted_url().chars().any(char::is_control));
        }
    }
}
