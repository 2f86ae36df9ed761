//! The LLM cache's shared layer: `noisebench_llm::cache::RemoteCache` over a [`Remote`].
//!
//! Entries live at `<location>/<shard>/<key>.zst`, the bytes of the local files, so a local cache
//! folder uploaded with any S3 tool is a valid remote cache and the other way round.

use std::sync::Arc;

use noisebench_llm::cache::{RemoteCache, set_remote_opener};

use crate::{Location, Remote};

impl RemoteCache for Remote {
    fn get(&self, name: &str) -> Result<Option<Vec<u8>>, String> {
        Remote::get(self, name).map_err(|e| e.to_string())
    }

    fn put_if_absent(&self, name: &str, bytes: Vec<u8>) -> Result<(), String> {
        self.put_create(name, bytes)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

/// Open `[llm.cache] remote`.
pub(crate) fn open_llm_cache_remote(url: &str) -> Result<Arc<dyn RemoteCache>, String> {
    let location = Location::parse(url).map_err(|e| e.to_string())?;
    Ok(Arc::new(
        Remote::open(&location).map_err(|e| e.to_string())?,
    ))
}

/// Let `[llm.cache] remote` URLs open through this crate. Call once at start-up (the binary does);
/// without it a configured remote is a configuration error, never silently ignored.
pub fn install_llm_cache_remote() {
    set_remote_opener(open_llm_cache_remote);
}
