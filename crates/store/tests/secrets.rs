//! The S3 secret key reaches no log line, error message or debug output (its own binary: the log
//! capture is process-wide).

#[path = "it/common/mod.rs"]
mod common;

use common::{bucket, moto, secret_key};
use noisebench_core::{Claim, Rows};
use noisebench_pipeline::table_io;
use noisebench_store::{Location, Remote, stage};

#[test]
fn the_secret_key_appears_in_no_log_error_or_debug_output() {
    let logs = noisebench_testkit::capture_logs();
    moto();
    let b = bucket("secrets");
    let mut outputs = Vec::new();
    let remote = Remote::open(&Location::parse(&format!("s3://{b}/work/x")).unwrap()).unwrap();
    outputs.push(format!("{remote:?}"));

    let dir = tempfile::tempdir().unwrap();
    let stage_dir = dir.path().join("x");
    let rows = vec![Claim {
        id: "c1".into(),
        text: "a claim".into(),
        ..Claim::default()
    }];
    table_io::write_table(&stage_dir.join("claims.parquet"), &Rows::Claims(rows)).unwrap();
    std::fs::write(stage_dir.join("stage.json"), b"{}").unwrap();
    outputs.push(format!(
        "{:?}",
        stage::push_stage_dir(&stage_dir, &remote).unwrap()
    ));
    outputs.push(format!(
        "{:?}",
        stage::pull_stage_dir(&remote, &dir.path().join("y")).unwrap()
    ));
    // Failures: a bucket that does not exist, a version that is not there.
    let missing = Remote::open(&Location::parse("s3://no-such-bucket/p").unwrap()).unwrap();
    let err = missing.put("k", b"v".to_vec()).unwrap_err();
    outputs.push(format!("{err} {err:?}"));
    let err = noisebench_store::download(&remote, "ds", &semver::Version::new(1, 0, 0), dir.path())
        .unwrap_err();
    outputs.push(format!("{err} {err:?}"));

    let text = logs.text();
    assert!(text.contains("stage pushed"), "the capture works: {text}");
    assert!(outputs[3].contains("no-such-bucket"), "{}", outputs[3]);
    for (what, out) in std::iter::once(("logs", &text)).chain(outputs.iter().map(|o| ("output", o)))
    {
        assert!(!out.contains(secret_key()), "secret key in {what}: {out}");
    }
}
