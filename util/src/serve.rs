//! Serving an axum router on a background thread with its own runtime.

use std::future::IntoFuture;
use std::net::SocketAddr;
use std::time::Duration;

/// How long [`BackgroundServer::stop`] lets requests in flight finish, unless set otherwise.
pub const STOP_GRACE: Duration = Duration::from_secs(1);

/// How long stopping waits for blocking work a handler left running (`spawn_blocking`); after
/// that it is left behind, never waited for.
const BLOCKING_WAIT: Duration = Duration::from_secs(1);

/// A server running on its own thread; stops and joins when dropped.
pub struct BackgroundServer {
    addr: SocketAddr,
    shutdown: Option<tokio::sync::oneshot::Sender<Duration>>,
    thread: Option<std::thread::JoinHandle<()>>,
    grace: Duration,
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
    /// How long [`BackgroundServer::stop`] lets requests in flight finish ([`STOP_GRACE`] by
    /// default; zero: not at all).
    pub fn set_stop_grace(&mut self, grace: Duration) {
        self.grace = grace;
    }
    /// Stops the server and waits for its thread. New connections are refused at once, idle
    /// ones closed; a request still in flight after the grace period is dropped (its handler
    /// with everything it awaits, its connection closed), so a handler waiting on something
    /// slow (a backend that takes minutes) never holds the stop up.
    pub fn stop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(self.grace);
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
    start(listener, name, workers, |l, stop| serve_until(l, app, stop))
}

/// Serves each connection accepted on `listener` with `conn`, on a task of its own, from a
/// thread named `name` with a runtime of `workers` worker threads: for a server that speaks
/// HTTP itself (the runner's proxy). Stopping drops every connection and what its task
/// awaits at once, whatever the grace.
pub fn serve_connections_in_background<F, Fut>(
    listener: std::net::TcpListener,
    name: &str,
    workers: usize,
    conn: F,
) -> std::io::Result<BackgroundServer>
where
    F: Fn(tokio::net::TcpStream) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    start(listener, name, workers, |l, stop| {
        accept_until(l, conn, stop)
    })
}

/// Runs `serve` (given the listener and the stop signal) on a new runtime's workers, from a
/// thread of its own.
fn start<S, Fut>(
    listener: std::net::TcpListener,
    name: &str,
    workers: usize,
    serve: S,
) -> std::io::Result<BackgroundServer>
where
    S: FnOnce(std::net::TcpListener, tokio::sync::oneshot::Receiver<Duration>) -> Fut
        + Send
        + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers.max(1))
        .max_blocking_threads(16)
        .enable_all()
        .thread_name(name)
        .build()?;
    let (tx, rx) = tokio::sync::oneshot::channel::<Duration>();
    let thread = std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            // the accept loop runs on a worker: each connection's task then starts on the
            // worker that accepted it, instead of being handed over from this thread (a
            // wake-up of a worker per connection)
            rt.block_on(async move {
                let _ = tokio::spawn(serve(listener, rx)).await;
            });
            // the connections still open and their handlers are dropped here
            rt.shutdown_timeout(BLOCKING_WAIT);
        })?;
    Ok(BackgroundServer {
        addr,
        shutdown: Some(tx),
        thread: Some(thread),
        grace: STOP_GRACE,
    })
}

/// Accepts connections, each served by `conn` on a task of its own, until told to stop.
async fn accept_until<F, Fut>(
    listener: std::net::TcpListener,
    conn: F,
    mut stop: tokio::sync::oneshot::Receiver<Duration>,
) where
    F: Fn(tokio::net::TcpStream) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let Ok(l) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    loop {
        tokio::select! {
            _ = &mut stop => return,
            accepted = l.accept() => match accepted {
                Ok((s, _)) => {
                    tokio::spawn(conn(s));
                }
                // out of descriptors and the like: let the moment pass
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
        }
    }
}

/// Serves until told to stop, then shuts down gracefully for at most the grace it is given.
async fn serve_until(
    listener: std::net::TcpListener,
    app: axum::Router,
    stop: tokio::sync::oneshot::Receiver<Duration>,
) {
    let Ok(l) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    let (graceful_tx, graceful_rx) = tokio::sync::oneshot::channel::<()>();
    let serve = axum::serve(l, app)
        .with_graceful_shutdown(async move {
            let _ = graceful_rx.await;
        })
        .into_future();
    tokio::pin!(serve);
    tokio::select! {
        _ = &mut serve => {}
        grace = stop => {
            let _ = graceful_tx.send(());
            let grace = grace.unwrap_or(Duration::ZERO);
            let _ = tokio::time::timeout(grace, serve).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::time::Instant;

    /// A server whose `/slow` answers after a minute, and whose `/blocking` waits a minute on
    /// a blocking thread; `/` answers at once.
    fn slow_server() -> BackgroundServer {
        let app = axum::Router::new()
            .route("/", axum::routing::get(|| async { "ok" }))
            .route(
                "/slow",
                axum::routing::get(|| async {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                    "late"
                }),
            )
            .route(
                "/blocking",
                axum::routing::get(|| async {
                    let _ =
                        tokio::task::spawn_blocking(|| std::thread::sleep(Duration::from_secs(60)))
                            .await;
                    "late"
                }),
            );
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        serve_in_background(l, app, "test-serve", 1).unwrap()
    }

    /// Sends a GET of `path` and returns the connection once the server has the request.
    fn get(s: &BackgroundServer, path: &str) -> std::net::TcpStream {
        let mut c = std::net::TcpStream::connect(s.addr()).unwrap();
        write!(c, "GET {path} HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
        // the handler runs by the time a request sent later on another connection is answered
        let mut probe = std::net::TcpStream::connect(s.addr()).unwrap();
        write!(
            probe,
            "GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"
        )
        .unwrap();
        let mut answer = String::new();
        probe.read_to_string(&mut answer).unwrap();
        assert!(answer.ends_with("ok"), "{answer}");
        c
    }

    #[test]
    fn stopping_does_not_wait_for_requests_in_flight() {
        for path in ["/slow", "/blocking"] {
            let mut s = slow_server();
            let mut c = get(&s, path);
            let t = Instant::now();
            s.stop();
            let took = t.elapsed();
            // generous against the handlers' minute: the grace is a second
            assert!(took < Duration::from_secs(10), "{path}: stop took {took:?}");
            // the request's connection was closed without an answer
            c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let mut rest = Vec::new();
            let _ = c.read_to_end(&mut rest);
            assert!(
                rest.is_empty(),
                "{path}: {}",
                String::from_utf8_lossy(&rest)
            );
        }
    }

    #[test]
    fn a_zero_grace_stops_at_once_and_an_idle_server_stops_promptly() {
        let mut s = slow_server();
        s.set_stop_grace(Duration::ZERO);
        let _c = get(&s, "/slow");
        let t = Instant::now();
        s.stop();
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        let mut idle = slow_server();
        let _c = get(&idle, "/");
        let t = Instant::now();
        idle.stop();
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    }
}
