//! A real S3 API server for the tests: moto (`pip install 'moto[server]'`) on 127.0.0.1, one per
//! test binary, killed when the binary exits (its shell wrapper waits on our stdin and kills it
//! at EOF, so even a panicking or aborted test leaves no server behind).

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Credentials for the local moto server only, made per test binary at run time (moto accepts
/// any): nothing key-shaped is committed, and the secrets test still has a value to look for.
pub fn access_key() -> &'static str {
    static KEY: OnceLock<String> = OnceLock::new();
    KEY.get_or_init(|| format!("nbtestaccess{}", std::process::id()))
}

pub fn secret_key() -> &'static str {
    static KEY: OnceLock<String> = OnceLock::new();
    KEY.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        format!("nbtestsecret{}x{nanos}", std::process::id())
    })
}

pub struct Moto {
    pub addr: SocketAddr,
    _child: Mutex<Child>,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The binary's moto server, started on first use, with the `AWS_*` variables pointing at it.
pub fn moto() -> &'static Moto {
    static MOTO: OnceLock<Moto> = OnceLock::new();
    MOTO.get_or_init(|| {
        let check = Command::new("python3")
            .args(["-c", "import moto.server, flask, werkzeug"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        assert!(
            matches!(check, Ok(s) if s.success()),
            "these tests need a local S3 API server: moto is not installed for python3. \
             Install it with: pip install 'moto[server]'"
        );
        let port = free_port();
        let script = format!(
            "python3 -m moto.server -H 127.0.0.1 -p {port} >/dev/null 2>&1 & pid=$!; \
             cat >/dev/null; kill $pid"
        );
        let child = Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::piped())
            .spawn()
            .expect("sh");
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let start = Instant::now();
        while TcpStream::connect(addr).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "moto did not start on {addr} within 60 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        // SAFETY: set once, before any test of this binary opens a store (each calls moto()
        // first, under this OnceLock); nothing else in these tests writes the environment.
        unsafe {
            std::env::set_var("AWS_ACCESS_KEY_ID", access_key());
            std::env::set_var("AWS_SECRET_ACCESS_KEY", secret_key());
            std::env::set_var("AWS_REGION", "us-east-1");
            std::env::set_var("AWS_ENDPOINT_URL", format!("http://{addr}"));
            std::env::set_var("AWS_ALLOW_HTTP", "true");
        }
        Moto {
            addr,
            _child: Mutex::new(child),
        }
    })
}

/// A new empty bucket (moto does not check signatures on bucket creation: a plain PUT).
pub fn bucket(name: &str) -> String {
    let m = moto();
    let mut s = TcpStream::connect(m.addr).unwrap();
    write!(
        s,
        "PUT /{name} HTTP/1.1\r\nHost: {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        m.addr
    )
    .unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply).unwrap();
    assert!(
        reply.starts_with("HTTP/1.1 200"),
        "create bucket {name}: {reply}"
    );
    name.to_string()
}
