//! The handle's own two-worker tokio runtime, started on first use, on which remote calls run so
//! stage code stays synchronous; [`Llm::block_on`] also works when called inside another runtime.

use crate::Llm;

impl Llm {
    pub(crate) fn runtime(&self) -> &tokio::runtime::Runtime {
        self.inner.runtime.get_or_init(|| {
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

    /// Run a future on the internal runtime, also when called from inside another runtime.
    pub(crate) fn block_on<F>(&self, f: F) -> F::Output
    where
        F: std::future::Future + Send,
        F::Output: Send,
    {
        let rt = self.runtime();
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
