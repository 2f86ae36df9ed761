//! `refresh --if-changed`'s exit status, for cron and systemd timers: 10 when a new version was
//! published, 0 with "no change" when nothing was.

use noisebench_testkit::checkout;

fn refresh(dir: &std::path::Path) -> (Option<i32>, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_noisebench"))
        .args(["refresh", "demo", "--if-changed", "--root"])
        .arg(dir)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn refresh_if_changed_exits_10_with_a_new_version_and_0_without() {
    let dir = checkout();
    let (code, out) = refresh(dir.path());
    assert_eq!(code, Some(10), "{out}");
    assert!(out.contains("published version 1.0.0"), "{out}");
    let (code, out) = refresh(dir.path());
    assert_eq!(code, Some(0), "{out}");
    assert!(out.trim_end().ends_with("no change"), "{out}");
}
