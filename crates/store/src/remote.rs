//! A [`Location`] opened as an object store, with blocking operations.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::{StreamExt, TryStreamExt};
use object_store::aws::AmazonS3Builder;
use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use tokio::io::AsyncWriteExt;

use crate::{Location, StoreError};

/// Objects under one location. S3 credentials, region and endpoint come from the environment
/// only (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`,
/// `AWS_ENDPOINT_URL`, `AWS_ALLOW_HTTP`), never from a configuration file, and are never
/// printed: `Debug` shows the location only.
pub struct Remote {
    location: Location,
    store: Arc<dyn ObjectStore>,
    /// The location's prefix inside `store`.
    root: ObjectPath,
    runtime: tokio::runtime::Runtime,
}

impl fmt::Debug for Remote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Remote")
            .field("location", &self.location.to_string())
            .finish()
    }
}

/// An object under a [`Remote`]: its path relative to the location, and size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub key: String,
    pub bytes: u64,
}

/// What a create-only put did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Created {
    Created,
    /// Something was there already; it was left as it was.
    AlreadyExists,
}

impl Remote {
    /// Open a location: an S3 bucket prefix configured from the environment, or a local folder
    /// (created) through the same interface, so every operation works on both.
    pub fn open(location: &Location) -> Result<Remote, StoreError> {
        let err = |e: object_store::Error| StoreError::store(location, "open", e);
        let (store, root): (Arc<dyn ObjectStore>, ObjectPath) = match location {
            Location::Local(dir) => {
                std::fs::create_dir_all(dir).map_err(|e| StoreError::Io {
                    path: dir.clone(),
                    source: e,
                })?;
                let fs = LocalFileSystem::new_with_prefix(dir).map_err(err)?;
                (Arc::new(fs), ObjectPath::default())
            }
            Location::S3 { bucket, prefix } => {
                let mut builder = AmazonS3Builder::from_env().with_bucket_name(bucket);
                if std::env::var_os("AWS_REGION").is_none()
                    && std::env::var_os("AWS_DEFAULT_REGION").is_none()
                {
                    builder = builder.with_region("us-east-1");
                }
                (
                    Arc::new(builder.build().map_err(err)?),
                    ObjectPath::from(prefix.as_str()),
                )
            }
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| StoreError::Io {
                path: PathBuf::from("<tokio runtime>"),
                source: e,
            })?;
        Ok(Remote {
            location: location.clone(),
            store,
            root,
            runtime,
        })
    }

    pub fn location(&self) -> &Location {
        &self.location
    }

    /// Run a future to completion. Callers may themselves be inside a tokio runtime (the LLM
    /// engine's workers read the cache), where blocking on another runtime panics: then it runs
    /// on a scoped thread of its own.
    fn block<T: Send>(&self, fut: impl std::future::Future<Output = T> + Send) -> T {
        if tokio::runtime::Handle::try_current().is_ok() {
            std::thread::scope(|s| {
                s.spawn(|| self.runtime.block_on(fut))
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p))
            })
        } else {
            self.runtime.block_on(fut)
        }
    }

    fn path(&self, key: &str) -> ObjectPath {
        key.split('/')
            .filter(|s| !s.is_empty())
            .fold(self.root.clone(), |p, s| p.join(s))
    }

    fn key_of(&self, path: &ObjectPath) -> String {
        let root: Vec<_> = self.root.parts().collect();
        path.parts()
            .skip(root.len())
            .map(|p| p.as_ref().to_string())
            .collect::<Vec<_>>()
            .join("/")
    }

    fn fail(&self, key: &str, what: &str, e: object_store::Error) -> StoreError {
        StoreError::store(&self.location.join(key), what, e)
    }

    /// The object's bytes, `None` when there is none.
    pub fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.path(key);
        self.block(async {
            match self.store.get(&path).await {
                Ok(r) => r.bytes().await.map(|b| Some(b.to_vec())),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        })
        .map_err(|e| self.fail(key, "get", e))
    }

    pub fn exists(&self, key: &str) -> Result<bool, StoreError> {
        let path = self.path(key);
        self.block(async {
            match self.store.head(&path).await {
                Ok(_) => Ok(true),
                Err(object_store::Error::NotFound { .. }) => Ok(false),
                Err(e) => Err(e),
            }
        })
        .map_err(|e| self.fail(key, "head", e))
    }

    /// Write (or overwrite) an object.
    pub fn put(&self, key: &str, bytes: Vec<u8>) -> Result<(), StoreError> {
        let path = self.path(key);
        self.block(self.store.put(&path, PutPayload::from(bytes)))
            .map(|_| ())
            .map_err(|e| self.fail(key, "put", e))
    }

    /// Write an object only if none exists (`PutMode::Create`: S3's `If-None-Match: *`). Of two
    /// writers racing on one key exactly one gets [`Created::Created`].
    pub fn put_create(&self, key: &str, bytes: Vec<u8>) -> Result<Created, StoreError> {
        let path = self.path(key);
        let opts = PutOptions {
            mode: PutMode::Create,
            ..Default::default()
        };
        match self.block(self.store.put_opts(&path, PutPayload::from(bytes), opts)) {
            Ok(_) => Ok(Created::Created),
            Err(object_store::Error::AlreadyExists { .. }) => Ok(Created::AlreadyExists),
            // S3 answers 412 Precondition Failed to If-None-Match on an existing key.
            Err(object_store::Error::Precondition { .. }) => Ok(Created::AlreadyExists),
            Err(e) => Err(self.fail(key, "conditional put", e)),
        }
    }

    pub fn delete(&self, key: &str) -> Result<(), StoreError> {
        let path = self.path(key);
        match self.block(self.store.delete(&path)) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.fail(key, "delete", e)),
        }
    }

    /// Every object under `dir` (recursively), by key relative to the location, sorted.
    pub fn list(&self, dir: &str) -> Result<Vec<Entry>, StoreError> {
        let path = self.path(dir);
        let metas: Vec<_> = self
            .block(self.store.list(Some(&path)).try_collect::<Vec<_>>())
            .map_err(|e| self.fail(dir, "list", e))?;
        let mut out: Vec<Entry> = metas
            .iter()
            .map(|m| Entry {
                key: self.key_of(&m.location),
                bytes: m.size,
            })
            .collect();
        out.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }

    /// The names of the "folders" directly under `dir`, sorted.
    pub fn list_dirs(&self, dir: &str) -> Result<Vec<String>, StoreError> {
        let path = self.path(dir);
        let listed = self
            .block(self.store.list_with_delimiter(Some(&path)))
            .map_err(|e| self.fail(dir, "list", e))?;
        let mut out: Vec<String> = listed
            .common_prefixes
            .iter()
            .filter_map(|p| p.filename().map(str::to_string))
            .collect();
        out.sort();
        Ok(out)
    }

    /// Upload a local file, streamed (multipart above 10 MB), overwriting.
    pub fn upload(&self, file: &Path, key: &str) -> Result<u64, StoreError> {
        let path = self.path(key);
        let io = |e: std::io::Error| StoreError::Io {
            path: file.to_path_buf(),
            source: e,
        };
        self.block(async {
            let mut src = tokio::fs::File::open(file).await.map_err(io)?;
            let mut dst = object_store::buffered::BufWriter::new(Arc::clone(&self.store), path);
            let n = tokio::io::copy(&mut src, &mut dst).await;
            let n = match n {
                Ok(n) => n,
                Err(e) => {
                    let _ = dst.abort().await;
                    return Err(self.fail(
                        key,
                        "upload",
                        object_store::Error::Generic {
                            store: "upload",
                            source: Box::new(e),
                        },
                    ));
                }
            };
            dst.shutdown().await.map_err(|e| {
                self.fail(
                    key,
                    "upload",
                    object_store::Error::Generic {
                        store: "upload",
                        source: Box::new(e),
                    },
                )
            })?;
            Ok(n)
        })
    }

    /// Download an object to a local file (parents created), streamed.
    pub fn download(&self, key: &str, file: &Path) -> Result<u64, StoreError> {
        let path = self.path(key);
        let io = |e: std::io::Error| StoreError::Io {
            path: file.to_path_buf(),
            source: e,
        };
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        self.block(async {
            let got = self
                .store
                .get(&path)
                .await
                .map_err(|e| self.fail(key, "get", e))?;
            let mut stream = got.into_stream();
            let mut out = tokio::fs::File::create(file).await.map_err(io)?;
            let mut n = 0u64;
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(|e| self.fail(key, "get", e))?;
                n += chunk.len() as u64;
                out.write_all(&chunk).await.map_err(io)?;
            }
            out.sync_all().await.map_err(io)?;
            Ok(n)
        })
    }
}
