//! The handle's own two-worker tokio runtime ([`Runtime`], owned by the transport part), started
//! on first use, on which remote calls run so stage code stays synchronous;
//! [`Runtime::block_on`] also works when called inside another runtime.

use std::sync::OnceLock;

/// A tokio runtime started on first use and shut down in the background when dropped.
#[derive(Default)]
pub(crate) struct Runtime {
    runtime: OnceLock<tokio::runtime::Runtime>,
}

impl Runtime {
    pub(crate) fn get(&self) -> &tokio::runtime::Runtime {
        self.runtime.get_or_init(|| {
            match tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("noisebench-llm")
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                // Invariant: building a runtime fails only when the OS refuses threads, after
                // which nothing in this process could run anyway.
                Err(e) => panic!("cannot start the LLM runtime: {e}"),
            }
        })
    }

    /// Run a future on the runtime, also when called from inside another runtime.
    pub(crate) fn block_on<F>(&self, f: F) -> F::Output
    where
        F: std::future::Future + Send,
        F::Output: Send,
    {
        let rt = self.get();
        if tokio::runtime::Handle::try_current().is_ok() {
            std::thread::scope(|s| match s.spawn(|| rt.block_on(f)).join() {
                Ok(v) => v,
                Err(p) => std::panic::resume_unwind(p),
            })
        } else {
            rt.block_on(f)
        }
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        // Dropping a runtime inside another runtime's context panics; shutting down in the
        // background never does.
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}
