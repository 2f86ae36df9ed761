//! Memory a step has freed, handed back to the system at the step's end.
//!
//! The binary's allocator keeps freed memory for a short while before it returns it (so a
//! stage that frees and allocates again reuses its pages instead of faulting in fresh ones),
//! and a thread returns what it freed only when it next allocates. Worker threads that sit
//! idle once a step ends would keep theirs until the next step. The runner and the build call
//! [`release`] at each step's end; the binary installs what it does ([`on_release`]:
//! `noisebench_cli::memory_settings`). Without an installed action, [`release`] does nothing:
//! libraries and tests keep the system allocator's behaviour.

use std::sync::OnceLock;

static RELEASE: OnceLock<fn()> = OnceLock::new();

/// Install what [`release`] does; the first call wins (one allocator per process).
pub fn on_release(action: fn()) {
    let _ = RELEASE.set(action);
}

/// Hand memory freed so far back to the system, on every thread that may hold some.
pub fn release() {
    if let Some(action) = RELEASE.get() {
        action();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    static CALLS: AtomicUsize = AtomicUsize::new(0);

    fn count() {
        CALLS.fetch_add(1, Ordering::SeqCst);
    }

    fn other() {
        CALLS.fetch_add(100, Ordering::SeqCst);
    }

    #[test]
    fn release_runs_the_first_installed_action_each_time() {
        super::on_release(count);
        super::on_release(other);
        let before = CALLS.load(Ordering::SeqCst);
        super::release();
        super::release();
        assert_eq!(CALLS.load(Ordering::SeqCst) - before, 2);
    }
}
