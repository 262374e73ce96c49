//! Serving an axum router on a background thread with its own runtime.

use std::net::SocketAddr;

/// A server running on its own thread; stops (gracefully) and joins when dropped.
pub struct BackgroundServer {
    addr: SocketAddr,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl BackgroundServer {
    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
    /// `http://ADDR`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
    /// Stops the server and waits for its thread.
    pub fn stop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for BackgroundServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Serves `app` on an already bound `listener` from a thread named `name` with a runtime of
/// `workers` worker threads. Returns once the thread runs; the socket is bound before, so
/// clients may connect at once.
pub fn serve_in_background(
    listener: std::net::TcpListener,
    app: axum::Router,
    name: &str,
    workers: usize,
) -> std::io::Result<BackgroundServer> {
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers.max(1))
        .max_blocking_threads(16)
        .enable_all()
        .thread_name(name)
        .build()?;
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            rt.block_on(async move {
                let Ok(l) = tokio::net::TcpListener::from_std(listener) else {
                    return;
                };
                let _ = axum::serve(l, app)
                    .with_graceful_shutdown(async move {
                        let _ = rx.await;
                    })
                    .await;
            });
        })?;
    Ok(BackgroundServer {
        addr,
        shutdown: Some(tx),
        thread: Some(thread),
    })
}
