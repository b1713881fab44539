//! A loopback TCP proxy between a client and the API server that can slow every byte down or
//! cut the line: a slow or partitioned network, made on demand. It forwards bytes, not HTTP,
//! so TLS runs end to end between the client and the API server (whose certificate names
//! 127.0.0.1, any port).

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// What the line does now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Line {
    /// Added to every chunk the client sends before it reaches the server.
    delay: Duration,
    /// Open connections are closed and new ones refused.
    cut: bool,
}

/// A running proxy. Dropping it closes every connection it holds.
pub struct Proxy {
    port: u16,
    line: Arc<watch::Sender<Line>>,
    accept: tokio::task::JoinHandle<()>,
}

impl Proxy {
    /// Listens on a free loopback port and forwards each connection to
    /// `127.0.0.1:upstream_port` (on the current tokio runtime).
    pub async fn start(upstream_port: u16) -> anyhow::Result<Proxy> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .context("binding the proxy's port")?;
        let port = listener.local_addr()?.port();
        let line = Arc::new(watch::channel(Line::default()).0);
        let accept = tokio::spawn(accept_loop(listener, upstream_port, line.clone()));
        Ok(Proxy { port, line, accept })
    }

    /// The port clients connect to.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `https://127.0.0.1:{port}`: the server URL of a kubeconfig that goes through it.
    pub fn url(&self) -> String {
        format!("https://127.0.0.1:{}", self.port)
    }

    /// Delays everything the client sends by `delay` (zero: a plain proxy again). The
    /// answer to a request therefore comes at least `delay` later than it would.
    pub fn set_delay(&self, delay: Duration) {
        self.line.send_modify(|l| l.delay = delay);
    }

    /// Cuts the line (closes every connection, refuses new ones) or mends it.
    pub fn set_cut(&self, cut: bool) {
        self.line.send_modify(|l| l.cut = cut);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.line.send_modify(|l| l.cut = true);
    }
}

async fn accept_loop(listener: TcpListener, upstream_port: u16, line: Arc<watch::Sender<Line>>) {
    loop {
        let Ok((client, _)) = listener.accept().await else {
            continue;
        };
        if line.borrow().cut {
            // A refused connection, as a partitioned network gives.
            drop(client);
            continue;
        }
        tokio::spawn(forward(client, upstream_port, line.subscribe()));
    }
}

/// Carries one connection until either side closes it or the line is cut.
async fn forward(client: TcpStream, upstream_port: u16, mut line: watch::Receiver<Line>) {
    let Ok(server) = TcpStream::connect(("127.0.0.1", upstream_port)).await else {
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    let upstream = delayed_copy(client_read, server_write, line.clone());
    let downstream = plain_copy(server_read, client_write);
    tokio::select! {
        _ = upstream => {}
        _ = downstream => {}
        _ = line.wait_for(|l| l.cut) => {}
    }
}

/// Copies client → server, each chunk held until `delay` after it was read. A reader task
/// stamps the chunks as they come, so the delay adds to every request once rather than
/// piling up behind earlier chunks.
async fn delayed_copy(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    line: watch::Receiver<Line>,
) {
    let (tx, mut rx) = mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
    let reader = async move {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match from.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let due = Instant::now() + line.borrow().delay;
                    if tx.send((due, buf[..n].to_vec())).is_err() {
                        break;
                    }
                }
            }
        }
    };
    let writer = async move {
        while let Some((due, chunk)) = rx.recv().await {
            tokio::time::sleep_until(due).await;
            if to.write_all(&chunk).await.is_err() {
                break;
            }
        }
        let _ = to.shutdown().await;
    };
    tokio::join!(reader, writer);
}

async fn plain_copy(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
) {
    let _ = tokio::io::copy(&mut from, &mut to).await;
    let _ = to.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An echo server, the proxy in front of it, and one round trip's time.
    async fn round_trip(proxy: &Proxy) -> anyhow::Result<Duration> {
        let mut c = TcpStream::connect(("127.0.0.1", proxy.port())).await?;
        let started = Instant::now();
        c.write_all(b"ping").await?;
        let mut buf = [0u8; 4];
        c.read_exact(&mut buf).await?;
        anyhow::ensure!(&buf == b"ping", "echoed {buf:?}");
        Ok(started.elapsed())
    }

    async fn echo_server() -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((s, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let (mut r, mut w) = s.into_split();
                    let _ = tokio::io::copy(&mut r, &mut w).await;
                });
            }
        });
        port
    }

    #[tokio::test]
    async fn delays_each_request_and_cuts_the_line() {
        let proxy = Proxy::start(echo_server().await).await.unwrap();
        assert!(round_trip(&proxy).await.unwrap() < Duration::from_millis(200));
        proxy.set_delay(Duration::from_millis(300));
        let slow = round_trip(&proxy).await.unwrap();
        assert!(
            slow >= Duration::from_millis(300) && slow < Duration::from_millis(900),
            "{slow:?}"
        );
        proxy.set_delay(Duration::ZERO);
        proxy.set_cut(true);
        assert!(round_trip(&proxy).await.is_err(), "a cut line answered");
        proxy.set_cut(false);
        assert!(round_trip(&proxy).await.is_ok());
    }
}
