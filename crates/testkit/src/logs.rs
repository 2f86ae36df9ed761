//! Capturing every log line of a test binary, to check that no secret reaches one.

use std::io::Write;
use std::sync::{Arc, Mutex};

/// The text every `tracing` event of the process wrote since [`capture_logs`].
#[derive(Clone, Default)]
pub struct CapturedLogs(Arc<Mutex<Vec<u8>>>);

impl CapturedLogs {
    /// Everything logged so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl Write for CapturedLogs {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Install a global subscriber at TRACE level writing to memory. Once per test binary (the
/// subscriber is global): give such a test its own binary.
pub fn capture_logs() -> CapturedLogs {
    let logs = CapturedLogs::default();
    let writer = logs.clone();
    tracing_subscriber::fmt()
        .with_max_level(tracing_subscriber::filter::LevelFilter::TRACE)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .init();
    logs
}
