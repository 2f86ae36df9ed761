//! (in progress: helper C)
