use std::time::Instant;
fn main() {
    let mut text = String::new();
    for e in std::fs::read_dir("../../fixtures/reports/edgar").unwrap() {
        let p = e.unwrap().path();
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        text.push_str(v["item_7"].as_str().unwrap());
    }
    let bpe = tiktoken_rs::cl100k_base_singleton();
    let t = Instant::now();
    let n = bpe.encode_ordinary(&text).len();
    let s = t.elapsed().as_secs_f64();
    println!(
        "{} bytes {} tokens {:.2} MB/s",
        text.len(),
        n,
        text.len() as f64 / s / 1e6
    );
    let t = Instant::now();
    let mut n = 0;
    for p in text.split('\n') {
        n += bpe.encode_ordinary(p).len();
    }
    let s = t.elapsed().as_secs_f64();
    println!(
        "per-line {} tokens {:.2} MB/s",
        n,
        text.len() as f64 / s / 1e6
    );
}
