//! How long a piece of work took, said at info: the one way stages, the quality card and
//! publishing report where their time goes (`NOISEBENCH_LOG=info` shows the lines).

/// `f`'s result, after logging "`what` in N s" at info with the seconds `f` took.
pub fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    measured(what, f).0
}

/// [`timed`], with the seconds as well (for a caller that also records them).
pub fn measured<T>(what: &str, f: impl FnOnce() -> T) -> (T, f64) {
    let start = std::time::Instant::now();
    let out = f();
    let seconds = start.elapsed().as_secs_f64();
    tracing::info!("{what} in {seconds:.2} s");
    (out, seconds)
}
