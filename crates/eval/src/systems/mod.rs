//! (in progress: helper B)
