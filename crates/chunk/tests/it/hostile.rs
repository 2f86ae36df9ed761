//! Hostile input, by construction, for the report readers: HTML and JSON nested 100,000 deep
//! (no stack overflow: each parser runs on a thread with a 2 MiB stack, as test and worker
//! threads have), and invalid UTF-8 where text is read.

use noisebench_chunk::html_blocks;
use noisebench_chunk::markdown_blocks;
use noisebench_chunk::mineru_blocks;
use noisebench_chunk::read_filing;

const DEPTH: usize = 100_000;

/// Run `f` on a thread with a 2 MiB stack; a stack overflow aborts the test binary.
fn small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

fn nested_html(tag: &str) -> String {
    format!(
        "<html><body>{}<p>Calder Port Authority operates Berth 4.</p>{}</body></html>",
        format!("<{tag}>").repeat(DEPTH),
        format!("</{tag}>").repeat(DEPTH)
    )
}

#[test]
fn html_nested_100000_deep_is_read_without_overflowing() {
    for tag in ["div", "span", "table", "ul"] {
        let html = nested_html(tag);
        let report = small_stack(move || html_blocks(&html));
        let text = format!("{:?}", report.blocks);
        assert!(
            text.contains("Calder Port Authority operates Berth 4."),
            "{tag}: {text}"
        );
    }
}

#[test]
fn json_nested_100000_deep_is_refused_not_overflowed() {
    let deep = format!("{}1{}", "[".repeat(DEPTH), "]".repeat(DEPTH));
    let mineru = deep.clone();
    assert!(small_stack(move || mineru_blocks(&mineru)).is_err());
    let edgar = format!(r#"{{"cik": "1", "item_7": {deep}}}"#);
    assert!(small_stack(move || read_filing(&edgar, &["item_7".to_string()])).is_err());
}

#[test]
fn markdown_nested_100000_deep_is_read_without_overflowing() {
    for prefix in ["> ", "- ", "1. "] {
        let text = format!(
            "{}Calder Port Authority operates Berth 4.\n",
            prefix.repeat(DEPTH / 10)
        );
        let _ = small_stack(move || markdown_blocks(&text));
    }
}

#[test]
fn invalid_utf8_in_a_report_is_replaced_not_fatal() {
    let bytes = b"<html><body><p>Revenue \xff\xfe rose to \xc3\x28 $4 million.</p></body></html>";
    let text = String::from_utf8_lossy(bytes).into_owned();
    let report = html_blocks(&text);
    let _ = report;
    let json =
        String::from_utf8_lossy(b"[{\"type\": \"text\", \"text\": \"caf\xe9\"}]").into_owned();
    let _ = mineru_blocks(&json);
}
