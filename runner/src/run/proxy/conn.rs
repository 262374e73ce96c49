//! One connection to the backend: a plain TCP socket (`http://`) or TLS over one (`https://`,
//! rustls with the settings every backend client shares, [`lrab_util::tls`]). An enum, not a
//! boxed trait object, so the plain path costs one match per read or write and nothing else.

use std::io::{Error, ErrorKind, IoSlice, Result};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

/// A socket to the backend.
#[derive(Debug)]
pub enum Conn {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

/// How to open TLS to one backend: the shared settings and the name its certificate must bear.
#[derive(Clone)]
pub struct Tls {
    connector: TlsConnector,
    name: ServerName<'static>,
    /// `https://host:port`, for messages (never with credentials or headers).
    shown: String,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls").field("server", &self.shown).finish()
    }
}

impl Tls {
    /// TLS to `host` (a name or an IP address, IPv6 in brackets), shown as `shown`.
    pub fn new(host: &str, shown: String) -> std::result::Result<Tls, String> {
        let config = lrab_util::tls::client_config()?;
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let name = ServerName::try_from(bare.to_string())
            .map_err(|_| format!("{shown}: {bare:?} is not a valid TLS server name"))?;
        Ok(Tls {
            connector: TlsConnector::from(Arc::clone(&config)),
            name,
            shown,
        })
    }

    /// The handshake over `tcp`; a failure names the backend and says how to trust a CA.
    pub async fn connect(&self, tcp: TcpStream) -> Result<Conn> {
        match self.connector.connect(self.name.clone(), tcp).await {
            Ok(s) => Ok(Conn::Tls(Box::new(s))),
            Err(e) => Err(Error::new(
                ErrorKind::ConnectionRefused,
                format!(
                    "TLS with {} failed: {e} ({})",
                    self.shown,
                    lrab_util::tls::trust_hint()
                ),
            )),
        }
    }
}

impl AsyncRead for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<Result<()>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Conn {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<Result<usize>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<Result<usize>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Conn::Plain(s) => s.is_write_vectored(),
            Conn::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_flush(cx),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}
