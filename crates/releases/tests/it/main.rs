//! The releases crate's integration tests: every release format in `formats()` held to the one
//! shape (`formats`).

mod formats;
