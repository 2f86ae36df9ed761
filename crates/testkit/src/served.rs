//! Serving an axum `Router` on 127.0.0.1 for the length of one test.

use std::net::SocketAddr;

use axum::Router;
use axum::body::Body;
use axum::http::header;
use axum::response::Response;

/// An axum router served on a loopback address by a background thread with its own runtime.
/// Dropping it shuts the server down and joins the thread, so no server outlives its test.
pub struct Served {
    addr: SocketAddr,
    url: String,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Served {
    /// Serve `app` on a free port of 127.0.0.1.
    pub fn start(app: Router) -> Served {
        Self::start_on(loopback_any(), app)
    }

    /// Serve `app` on `addr` (port 0: any free port), e.g. a port a client was already refused
    /// on. Panics if `addr` cannot be bound.
    pub fn start_on(addr: SocketAddr, app: Router) -> Served {
        let listener = std::net::TcpListener::bind(addr)
            .unwrap_or_else(|e| panic!("cannot bind the fake server to {addr}: {e}"));
        let addr = listener.local_addr().unwrap();
        Self::serve(listener, addr, app)
    }

    /// Serve the router `make` builds from the server's own URL (for services whose answers
    /// link back to themselves), on a free port of 127.0.0.1.
    pub fn start_with(make: impl FnOnce(&str) -> Router) -> Served {
        let listener = std::net::TcpListener::bind(loopback_any()).unwrap();
        let addr = listener.local_addr().unwrap();
        let app = make(&base_url(addr));
        Self::serve(listener, addr, app)
    }

    /// The address listened on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:<port>`, no trailing slash.
    pub fn url(&self) -> &str {
        &self.url
    }

    fn serve(listener: std::net::TcpListener, addr: SocketAddr, app: Router) -> Served {
        listener.set_nonblocking(true).unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = rx.await;
                    })
                    .await
                    .unwrap();
            });
        });
        Served {
            addr,
            url: base_url(addr),
            shutdown: Some(tx),
            thread: Some(thread),
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn loopback_any() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

fn base_url(addr: SocketAddr) -> String {
    format!("http://{addr}")
}

/// A response with a status, a content type and a body.
pub fn respond(status: u16, content_type: &str, body: impl Into<Body>) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, content_type)
        .body(body.into())
        .unwrap()
}

/// A local address nothing listens on: the port of a listener bound and closed at once, so a
/// connection to it is refused (until someone binds it again).
pub fn refused_addr() -> SocketAddr {
    let probe = std::net::TcpListener::bind(loopback_any()).unwrap();
    let addr = probe.local_addr().unwrap();
    drop(probe);
    addr
}
