//! The controller's Kubernetes client: kube's, without its default retry policy.
//!
//! kube's default retries 429, 503 and 504 up to 15 times with backoff that grows to minutes.
//! An aggregated metrics API that answers 503 then holds a reconcile for minutes, status keeps
//! saying the metrics are fine, and a spec change waits behind it. The native HPA does not
//! retry within a sync either: a failed read fails that sync, says so in status, and the next
//! sync (a period later) tries again. Watches have their own backoff (see
//! [`crate::backoff`]); status writes retry conflicts themselves.
//!
//! kube sets no read timeout either, so a request that an API server accepted and then
//! never answered (one in flight while it restarts) would wait forever, and a watch stuck
//! that way never sees another spec change. Every read here times out after
//! [`READ_TIMEOUT`]; watches ask the server to end them after [`WATCH_TIMEOUT_SECONDS`], well
//! within it, so a quiet watch is renewed rather than cut.

use std::time::Duration;

use kube::{Client, Config};

/// The longest wait for the next bytes of an answer.
pub const READ_TIMEOUT: Duration = Duration::from_secs(45);

/// How long the server keeps one watch request open before the watcher starts another.
pub const WATCH_TIMEOUT_SECONDS: u32 = 30;

/// The client the controller uses, from a loaded configuration.
pub fn build(mut config: Config) -> Result<Client, kube::Error> {
    config.default_retry = false;
    config.read_timeout = Some(READ_TIMEOUT);
    Client::try_from(config)
}

/// The controller's clients: one for its watches, one for every other request. Each has
/// its own pool of connections.
///
/// hyper keeps a pooled connection's read buffer at the size its largest reads grew it to
/// (up to about 400 KB; a list page arrives in large reads) for as long as the connection
/// stays pooled (90 s idle, with no bound on how many). Over HTTP/1.1 the syncs keep about
/// one connection per concurrent request (`--concurrency`, 64 by default) and, sharing one
/// pool with the watches, a relist's pages were read over whichever of those was free: after
/// a relist most of them held a large buffer (5.1 MB of read buffers at 2,000 autoscalers in
/// a heap profile, 0.6 MB with five times fewer, larger pages). With their own client the
/// watches read their pages over their own few connections (one per watch: its lists and
/// its watch requests take turns), and the syncs' connections only ever read small answers.
/// Bounding the idle connections of one shared pool would not pick the large buffers, and
/// would close and reopen connections (a TLS handshake each, on the API server too) whenever
/// more requests than the bound are in flight.
#[derive(Clone)]
pub struct Clients {
    /// Reads, writes, leader election, discovery: everything but the watches.
    pub requests: Client,
    /// The watches (pods, workloads, autoscalers): their lists and watch requests.
    pub watches: Client,
}

impl Clients {
    /// Both clients from one configuration, each as [`build`] makes it.
    pub fn build(config: Config) -> Result<Clients, kube::Error> {
        Ok(Clients {
            watches: build(config.clone())?,
            requests: build(config)?,
        })
    }
}

/// Objects per page of a watch's (re)list.
///
/// A page is read whole and decoded whole before the watcher hands out its objects, and
/// every watch (pods, autoscalers, each cached workload kind) relists at once after an API
/// server restart, while the API server is still starting (it serves limited lists from
/// etcd until its cache is ready). What the relists hold at once therefore grows with the
/// page, not with the fleet: with pages of 500, a heap profile at 2,000 autoscalers showed
/// 16 MB of list pages (their text and the decoded objects, 6 MB of that `managedFields`,
/// which no cache keeps) on top of 32 MB of steady heap. Pages of 100 hold a fifth of that,
/// for five times the list requests per relist (100 a kind at 10,000 objects).
pub const LIST_PAGE_SIZE: u32 = 100;

/// The watch configuration of every watch the controller runs.
///
/// Lists ask for the most recent state (no `resourceVersion`), in pages of
/// [`LIST_PAGE_SIZE`]. A list at `resourceVersion=0` is served from the API server's watch
/// cache in a single answer whatever the limit (`computeListLimit` in k8s.io/apiserver's
/// cacher ignores it), so a relist of 10,000 pods arrived and was decoded at once: about
/// 15 KB a pod, most of the controller's memory after an API server restart. Without a
/// resourceVersion the limit holds: v1.34 and later serve the pages from the watch cache
/// (consistent reads from cache), older servers from etcd, as they do for a list that
/// starts while the cache is not ready.
pub fn watch_config() -> kube::runtime::watcher::Config {
    kube::runtime::watcher::Config::default()
        .page_size(LIST_PAGE_SIZE)
        .timeout(WATCH_TIMEOUT_SECONDS)
}
