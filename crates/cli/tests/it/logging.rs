//! What `noisebench` logs: `NOISEBENCH_LOG`, else `RUST_LOG`, chooses; by default warnings only,
//! and not the HTML parser's notes on a page it repairs (html5ever's "foster parenting not
//! implemented", hundreds a run on real 10-Ks with text loose inside tables).

use std::path::Path;

/// Run `noisebench` under `root` with `env`; its stderr.
fn stderr_of(root: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_noisebench"))
        .arg("--root")
        .arg(root)
        .args(args)
        .env_remove("NOISEBENCH_LOG")
        .env_remove("RUST_LOG")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A checkout holding one HTML report whose table holds loose text (the parser moves it out of
/// the table: "foster parenting"), and a pipeline that reads it.
fn checkout() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("report.html"),
        "<html><body><h1>Annual report</h1><p>Revenue grew in 2024.</p>\
         <table>loose text<tr><td>Revenue</td><td>10</td></tr>more loose text</table>\
         <p>The company operates in Ohio.</p></body></html>",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("logs.toml"),
        "[pipeline]\nname = \"logs\"\n\n[stages.reports]\nkind = \"reports\"\n\
         [stages.reports.config]\nsources = [{ path = \"report.html\", format = \"html\", domain = \"finance\" }]\n",
    )
    .unwrap();
    dir
}

#[test]
fn rust_log_is_honoured_and_the_html_parsers_notes_are_quiet_by_default() {
    let dir = checkout();
    let run = |env: &[(&str, &str)]| {
        stderr_of(
            dir.path(),
            &["run", "reports", "--pipeline", "logs.toml", "--force"],
            env,
        )
    };
    let quiet = run(&[]);
    assert!(!quiet.contains("foster"), "{quiet}");
    assert!(!quiet.contains("DEBUG"), "{quiet}");
    // The parser's notes are there to be had on request.
    let parser = run(&[("RUST_LOG", "html5ever=warn")]);
    assert!(parser.contains("foster"), "{parser}");
    let debug = run(&[("RUST_LOG", "debug")]);
    assert!(debug.contains("DEBUG"), "{debug}");
    // NOISEBENCH_LOG wins over RUST_LOG.
    let both = run(&[("RUST_LOG", "debug"), ("NOISEBENCH_LOG", "error")]);
    assert!(
        !both.contains("DEBUG") && !both.contains("foster"),
        "{both}"
    );
}
