//! Running the Python checks (e.g. a release's pandas loader) over what a test wrote.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

/// Whether `python3` can import pandas. When it cannot, says so on stderr with a line starting
/// `SKIPPED:`, so a test that returns early is visibly skipped rather than silently passed.
pub fn pandas_available() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import pandas"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!(
            "SKIPPED: python3 with pandas is not available (`python3 -c \"import pandas\"` failed)"
        );
    }
    ok
}

/// Run `python3 <script> <args>…` and parse its stdout as JSON. Panics with the script's stderr
/// if it fails, and with its stdout if that is not JSON.
pub fn run_python_json<I>(script: &Path, args: I) -> serde_json::Value
where
    I: IntoIterator,
    I::Item: AsRef<OsStr>,
{
    let out = Command::new("python3")
        .arg(script)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 {}: {e}", script.display()));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{} printed no JSON ({e}): {}",
            script.display(),
            String::from_utf8_lossy(&out.stdout)
        )
    })
}
