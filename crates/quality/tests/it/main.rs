//! The quality crate's integration tests: planted cases that move each measure the right way.

mod planted;
