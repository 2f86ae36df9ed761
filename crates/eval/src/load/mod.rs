//! (in progress: helper A)
