//! Where stages report progress.

/// A progress bar handed out by [`Progress`].
pub trait ProgressBar: Send + Sync {
    fn inc(&self, n: u64);
    fn finish(&self);
}

/// Where stages report progress on long loops (the CLI draws bars; tests draw nothing).
pub trait Progress: Send + Sync {
    fn bar(&self, label: &str, total: Option<u64>) -> Box<dyn ProgressBar>;
}

/// A [`Progress`] that draws nothing.
pub struct NoProgress;

impl Progress for NoProgress {
    fn bar(&self, _label: &str, _total: Option<u64>) -> Box<dyn ProgressBar> {
        struct Nothing;
        impl ProgressBar for Nothing {
            fn inc(&self, _n: u64) {}
            fn finish(&self) {}
        }
        Box::new(Nothing)
    }
}
