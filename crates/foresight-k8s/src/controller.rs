//! The running controller: caches, the `/metrics` server, leader election, and the kube-rs
//! `Controller` that schedules reconciles.
//!
//! Reconciles run concurrently up to `concurrency`, one at a time per object (kube-rs
//! guarantees it), with no lock held across a reconcile. Each object is triggered by a
//! change of its spec (status writes do not retrigger: the watch is filtered on
//! `metadata.generation`) and otherwise by its own requeue on the sync grid.
//!
//! With `--prometheus-url`, one Prometheus client serves `type: Prometheus` metrics and the
//! forecast cache. The cache lives as long as the process, so a replica that becomes leader
//! again starts with the forecasts it had; an autoscaler's forecasts are forgotten when it is
//! deleted, and after each full list of autoscalers (a new term, a watch that started over)
//! those of autoscalers no longer listed.

use foresight_core::version::KubernetesVersion;
use std::collections::HashSet;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use kube::runtime::controller::{Config as ControllerConfig, Controller};
use kube::runtime::reflector;
use kube::runtime::{predicates, watcher, WatchStreamExt};
use kube::{Api, Client};
use tokio::sync::watch;

use crate::autoscaler_key::{AutoscalerKey, PerAutoscaler};
use crate::client::Clients;
use crate::conflicts::TargetIndex;
use crate::due::DueAutoscaler;
use crate::events::EventPublisher;
use crate::forecasts::{CorePredictor, ForecastCache, ForecastSettings};
use crate::leader::{self, LeaderError, LeaderOptions};
use crate::pods::PodCache;
use crate::prometheus::{PrometheusClient, PrometheusError, PrometheusOptions};
use crate::reconcile::{self, Clock, Memories, ReconcileContext, ReconcileSettings};
use crate::slim::WatchedAutoscaler;
use crate::sources::MetricSources;
use crate::target::{ScaleClient, WorkloadCache, WorkloadKind};
use crate::telemetry::{self, Telemetry};
use foresight_api::EffectiveHorizontalPodAutoscaler;

/// How long a new replica waits for its first election before saying it stands by.
const FIRST_ELECTION: Duration = Duration::from_secs(2);

/// How the controller runs.
#[derive(Clone, Debug)]
pub struct ControllerOptions {
    /// Decision and status settings.
    pub settings: ReconcileSettings,
    /// Reconciles in flight at most.
    pub concurrency: u16,
    /// Leader election; `None` runs as the only replica.
    pub leader: Option<LeaderOptions>,
    /// Where `/metrics`, `/healthz` and `/readyz` are served; `None` serves nothing.
    pub metrics_address: Option<SocketAddr>,
    /// Workload kinds whose scale is read from a watch instead of `GET /scale`.
    pub cached_workloads: Vec<WorkloadKind>,
    /// This replica's name in events (the pod name).
    pub instance: Option<String>,
    /// Prometheus, for `type: Prometheus` metrics and prediction; `None` runs without: those
    /// metrics fail and prediction reports that it has no source of history.
    pub prometheus: Option<PrometheusSettings>,
    /// The running build, for `foresight_build_info`.
    pub build: telemetry::Build,
    /// The Kubernetes release to decide as (`--kubernetes-version`); `None` reads it from the
    /// API server at start.
    pub kubernetes_version: Option<KubernetesVersion>,
}

/// Where and how the controller reads Prometheus.
#[derive(Clone, Debug)]
pub struct PrometheusSettings {
    /// The base URL (`http://prometheus.monitoring:9090`, or with a path prefix).
    pub url: String,
    /// Credentials, timeout and limits of the client.
    pub client: PrometheusOptions,
    /// How forecasts are refreshed, and the controller's history-query templates.
    pub forecasts: ForecastSettings,
}

/// The controller's Prometheus: one client, shared by the metric reads and the forecast
/// cache (so `/metrics` counts every request once).
#[derive(Clone)]
struct Prometheus {
    client: PrometheusClient,
    forecasts: ForecastCache,
}

impl Prometheus {
    fn connect(settings: &PrometheusSettings) -> Result<Self, PrometheusError> {
        let client = PrometheusClient::new(&settings.url, settings.client.clone())?;
        let forecasts = ForecastCache::new(
            client.clone(),
            Arc::new(CorePredictor),
            settings.forecasts.clone(),
        );
        Ok(Prometheus { client, forecasts })
    }
}

/// Why the controller stopped.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// The metrics address could not be bound.
    #[error("serving metrics on {address}: {source}")]
    Serve {
        /// The address.
        address: SocketAddr,
        /// The cause.
        source: std::io::Error,
    },
    /// Leader election could not start.
    #[error(transparent)]
    Leader(#[from] LeaderError),
    /// The Prometheus client could not be built (a malformed URL, unreadable CA certificates).
    #[error(transparent)]
    Prometheus(#[from] PrometheusError),
}

/// Runs the controller until `shutdown` completes.
pub async fn run(
    clients: Clients,
    options: ControllerOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ControllerError> {
    let mut options = options;
    let Clients {
        requests: client,
        watches,
    } = clients;
    let server = server_version(&client).await;
    let (decides_as, source) = decides_as(server.as_deref(), options.kubernetes_version);
    options.settings.core.kubernetes = decides_as;
    let prometheus = connect_prometheus(&options)?;
    let telemetry = serve_telemetry(&options, prometheus.as_ref()).await?;
    telemetry.set_kubernetes(server.as_deref(), &decides_as.to_string(), source);
    let (pods, scales) = start_caches(&client, &watches, &options, &telemetry);

    let (_hold, mut leading) = match &options.leader {
        Some(opts) => (None, leader::elect(client.clone(), opts).await?),
        None => {
            let (tx, rx) = leader::always_leader();
            (Some(tx), rx)
        }
    };
    let (stop_tx, stop_rx) = watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop_tx.send(true);
    });

    loop {
        // Wait for leadership (or shutdown).
        let mut stop = stop_rx.clone();
        if *stop.borrow() {
            break;
        }
        if !*leading.borrow() {
            // The first acquisition takes a request or two: only a replica that is still not
            // leading after that stands by behind another.
            let first = tokio::time::timeout(FIRST_ELECTION, leading.wait_for(|l| *l)).await;
            if matches!(first, Ok(Ok(_))) {
                continue;
            }
        }
        if !*leading.borrow() {
            tracing::info!("standing by: another replica holds the lease");
            tokio::select! {
                r = leading.wait_for(|l| *l) => if r.is_err() { break },
                _ = stop.wait_for(|s| *s) => break,
            }
        }
        tracing::info!("leading: starting reconciles");
        telemetry.set_leader(true);
        let ctx = context(
            &client,
            &options,
            &pods,
            &scales,
            &telemetry,
            prometheus.as_ref(),
        );
        let mut lost = leading.clone();
        let mut stop_now = stop_rx.clone();
        let until = async move {
            tokio::select! {
                _ = lost.wait_for(|l| !*l) => tracing::warn!("leadership lost: stopping reconciles"),
                _ = stop_now.wait_for(|s| *s) => tracing::info!("shutting down"),
            }
        };
        run_leading(watches.clone(), ctx, until).await;
        // A replica that stands by exports no per-autoscaler series: the leader's are the
        // current ones.
        telemetry.set_leader(false);
        telemetry.retain(&|_| false);
        if *stop_rx.borrow() {
            break;
        }
    }
    Ok(())
}

/// The API server's `gitVersion` (`v1.37.2`), or `None` (logged) when it cannot be read.
async fn server_version(client: &Client) -> Option<String> {
    match client.apiserver_version().await {
        Ok(info) => Some(info.git_version),
        Err(e) => {
            tracing::warn!(error = %e, "cannot read the API server's version");
            None
        }
    }
}

/// The release to decide as, and where it came from: the flag when given, else the server's
/// release (the nearest supported one outside 1.28 … 1.37), else the newest. Logged.
fn decides_as(
    server: Option<&str>,
    flag: Option<KubernetesVersion>,
) -> (KubernetesVersion, &'static str) {
    let known = server.and_then(KubernetesVersion::nearest);
    let (version, source) = match (flag, known) {
        (Some(v), _) => (v, "flag"),
        (None, Some((v, _))) => (v, "server"),
        (None, None) => (KubernetesVersion::default(), "default"),
    };
    let server_text = server.unwrap_or("unknown");
    match known {
        Some((v, false)) if flag.is_none() => tracing::warn!(
            server = server_text,
            decides_as = %v,
            "the API server's Kubernetes is outside 1.28 to 1.37: deciding as the nearest release \
             (set --kubernetes-version to choose)"
        ),
        None if flag.is_none() && server.is_some() => tracing::warn!(
            server = server_text,
            decides_as = %version,
            "the API server's version does not name a Kubernetes release: deciding as the newest"
        ),
        _ => {}
    }
    tracing::info!(
        server = server_text,
        decides_as = %version,
        source,
        "deciding as the HPA of Kubernetes {version}"
    );
    (version, source)
}

/// The Prometheus client and forecast cache, when `--prometheus-url` names one.
fn connect_prometheus(options: &ControllerOptions) -> Result<Option<Prometheus>, ControllerError> {
    match &options.prometheus {
        Some(settings) => {
            let p = Prometheus::connect(settings)?;
            tracing::info!(url = p.client.base_url(), "reading Prometheus");
            Ok(Some(p))
        }
        None => {
            tracing::info!(
                "no --prometheus-url: type: Prometheus metrics fail and prediction has no history"
            );
            Ok(None)
        }
    }
}

/// The controller's metrics, served on `--metrics-address` (with the health endpoints).
async fn serve_telemetry(
    options: &ControllerOptions,
    prometheus: Option<&Prometheus>,
) -> Result<Arc<Telemetry>, ControllerError> {
    let mut telemetry = Telemetry::new(options.build.clone());
    if let Some(p) = prometheus {
        telemetry.register_prometheus(
            p.client.clone(),
            p.forecasts.clone(),
            Arc::new(jiff::Timestamp::now),
        );
    }
    let telemetry = Arc::new(telemetry);
    if let Some(address) = options.metrics_address {
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(|source| ControllerError::Serve { address, source })?;
        let app = telemetry::router(telemetry.clone());
        tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::error!(error = %e, "metrics server stopped");
            }
        });
        tracing::info!(%address, "serving /metrics, /healthz, /readyz");
    }
    Ok(telemetry)
}

/// Starts the pod and workload caches. They run on every replica, leader or not, so that a
/// new leader starts warm; the replica is ready once the first pod list is in (before that, a
/// new leader could not decide).
/// The caches' watches run on `watches`; the scale client's reads and writes on `client`.
fn start_caches(
    client: &Client,
    watches: &Client,
    options: &ControllerOptions,
    telemetry: &Arc<Telemetry>,
) -> (Arc<PodCache>, Arc<ScaleClient>) {
    let pods = Arc::new(PodCache::new());
    tokio::spawn(pods.clone().run(watches.clone()));
    let workloads = Arc::new(WorkloadCache::new(&options.cached_workloads));
    for kind in workloads.kinds() {
        tokio::spawn(workloads.clone().run(watches.clone(), kind));
    }
    let scales = Arc::new(ScaleClient::new(client.clone(), workloads));
    let (ready, telemetry) = (pods.clone(), telemetry.clone());
    tokio::spawn(async move {
        while !ready.is_ready() {
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        telemetry.set_ready(true);
    });
    (pods, scales)
}

fn context(
    client: &Client,
    options: &ControllerOptions,
    pods: &Arc<PodCache>,
    scales: &Arc<ScaleClient>,
    telemetry: &Arc<Telemetry>,
    prometheus: Option<&Prometheus>,
) -> (
    Arc<ReconcileContext>,
    reflector::store::Writer<EffectiveHorizontalPodAutoscaler>,
) {
    let (store, writer) = reflector::store();
    let clock: Clock = Arc::new(jiff::Timestamp::now);
    let mut sources = MetricSources::new(
        client.clone(),
        scales.clone(),
        options.settings.metrics_max_age,
    );
    if let Some(p) = prometheus {
        sources = sources.with_prometheus(p.client.clone());
    }
    let ctx = ReconcileContext {
        client: client.clone(),
        settings: options.settings.clone(),
        pods: pods.clone(),
        scales: scales.clone(),
        sources,
        forecasts: prometheus.map(|p| p.forecasts.clone()),
        events: EventPublisher::new(client.clone(), options.instance.clone()),
        telemetry: telemetry.clone(),
        // Fresh memory on every leadership term: history comes back from status.
        memories: Memories::default(),
        targets: TargetIndex::new(),
        store,
        clock,
        decision_errors: Default::default(),
        reconcile_errors: Default::default(),
        permits: tokio::sync::Semaphore::new(options.concurrency.into()),
    };
    (Arc::new(ctx), writer)
}

/// Runs reconciles until `until` completes. `client` runs the autoscaler watch (the
/// reconciles use the context's).
async fn run_leading(
    client: Client,
    (ctx, writer): (
        Arc<ReconcileContext>,
        reflector::store::Writer<EffectiveHorizontalPodAutoscaler>,
    ),
    until: impl Future<Output = ()> + Send + Sync + 'static,
) {
    // Decoded without `managedFields` (see `crate::slim`); then what else is not read goes.
    let api: Api<WatchedAutoscaler> = Api::all(client);
    let forget = ctx.clone();
    let mut failures = crate::backoff::FailureLog::new("autoscaler watch");
    let events = watcher(api, crate::client::watch_config())
        .backoff(crate::backoff::watch_backoff())
        .map_ok(unwrap_autoscaler)
        .modify(keep_what_is_read);
    // In place: a relist after an API server restart must not hold a second copy of every
    // autoscaler until it completes.
    let events = crate::relist::reflect_in_place(writer, events);
    // The runner holds handles, not autoscalers (see `crate::due`).
    let (handles, handle_writer) = reflector::store();
    let trigger = crate::due::reflect_handles(handle_writer, events)
        .inspect(move |ev| {
            let ev = match ev {
                Ok(ev) => {
                    failures.succeeded();
                    ev
                }
                Err(e) => {
                    failures.failed(e);
                    return;
                }
            };
            match ev {
                watcher::Event::Delete(obj) => {
                    if let Some(key) = AutoscalerKey::of_object(obj) {
                        forget.forget(&key);
                    }
                }
                // The store now holds the full list (it was applied first): what is kept of
                // autoscalers deleted while no watch ran is forgotten.
                watcher::Event::InitDone => {
                    let listed: HashSet<AutoscalerKey> = forget
                        .store
                        .state()
                        .iter()
                        .filter_map(|o| AutoscalerKey::of_object(o))
                        .collect();
                    forget.retain(&|key| listed.contains(key));
                }
                _ => {}
            }
        })
        .applied_objects()
        // Status writes bump resourceVersion, not generation: they must not retrigger.
        .predicate_filter(predicates::generation, Default::default())
        .map_ok(|autoscaler| DueAutoscaler::of(&autoscaler));
    Controller::for_stream(trigger, handles)
        // Unlimited here: `ReconcileContext::permits` holds reconciles to `--concurrency`,
        // in the order they came due.
        .with_config(ControllerConfig::default().concurrency(0))
        .graceful_shutdown_on(until)
        .run(reconcile::reconcile_due, reconcile::error_policy, ctx)
        .for_each(|result| async move {
            if let Err(e) = result {
                tracing::debug!(error = %e, "reconcile not run");
            }
        })
        .await;
}

/// The autoscaler of a watch event.
fn unwrap_autoscaler(
    event: watcher::Event<WatchedAutoscaler>,
) -> watcher::Event<EffectiveHorizontalPodAutoscaler> {
    match event {
        watcher::Event::Apply(o) => watcher::Event::Apply(o.0),
        watcher::Event::Delete(o) => watcher::Event::Delete(o.0),
        watcher::Event::Init => watcher::Event::Init,
        watcher::Event::InitApply(o) => watcher::Event::InitApply(o.0),
        watcher::Event::InitDone => watcher::Event::InitDone,
    }
}

/// The annotations the controller reads (the pause annotations), by their prefix.
const OUR_ANNOTATIONS: &str = "autoscaling.foresight.dev/";

/// Drops the metadata nothing reads from a cached autoscaler: who manages which field,
/// labels, owners, finalizers, and annotations other than ours (client-side `kubectl apply`
/// keeps a JSON copy of the whole object in one). At 10,000 autoscalers that is megabytes.
fn keep_what_is_read(o: &mut EffectiveHorizontalPodAutoscaler) {
    let meta = &mut o.metadata;
    meta.managed_fields = None;
    meta.labels = None;
    meta.owner_references = None;
    meta.finalizers = None;
    if let Some(annotations) = meta.annotations.as_mut() {
        annotations.retain(|k, _| k.starts_with(OUR_ANNOTATIONS));
        if annotations.is_empty() {
            meta.annotations = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_keeps_the_pause_annotations_and_drops_unread_metadata() {
        let mut o: EffectiveHorizontalPodAutoscaler = serde_json::from_value(serde_json::json!({
            "apiVersion": "autoscaling.foresight.dev/v1alpha1",
            "kind": "EffectiveHorizontalPodAutoscaler",
            "metadata": {
                "name": "web", "namespace": "shop", "generation": 3, "resourceVersion": "7",
                "uid": "u-1", "creationTimestamp": "2026-01-01T00:00:00Z",
                "labels": {"team": "shop"},
                "finalizers": ["example.com/keep"],
                "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u-2"}],
                "managedFields": [{"manager": "kubectl", "operation": "Apply"}],
                "annotations": {
                    "autoscaling.foresight.dev/paused": "true",
                    "kubectl.kubernetes.io/last-applied-configuration": "{\"a\": 1}"
                }
            },
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "maxReplicas": 3
            }
        }))
        .unwrap();
        let spec = serde_json::to_value(&o.spec).unwrap();
        keep_what_is_read(&mut o);
        let m = &o.metadata;
        assert_eq!(
            m.annotations,
            Some([("autoscaling.foresight.dev/paused".into(), "true".into())].into())
        );
        assert_eq!((m.labels.as_ref(), m.finalizers.as_ref()), (None, None));
        assert_eq!(
            (m.owner_references.as_ref(), m.managed_fields.as_ref()),
            (None, None)
        );
        // What the reconcile reads stays.
        assert_eq!(m.name.as_deref(), Some("web"));
        assert_eq!(m.namespace.as_deref(), Some("shop"));
        assert_eq!(m.generation, Some(3));
        assert_eq!(m.resource_version.as_deref(), Some("7"));
        assert_eq!(m.uid.as_deref(), Some("u-1"));
        assert!(m.creation_timestamp.is_some());
        assert_eq!(serde_json::to_value(&o.spec).unwrap(), spec);

        // No annotation of ours: none kept.
        o.metadata.annotations = Some([("a".into(), "b".into())].into());
        keep_what_is_read(&mut o);
        assert_eq!(o.metadata.annotations, None);
    }

    #[test]
    fn the_flag_overrides_the_server_and_the_server_overrides_the_default() {
        let v = |minor| KubernetesVersion::new(minor).unwrap();
        assert_eq!(decides_as(Some("v1.34.2"), Some(v(28))), (v(28), "flag"));
        assert_eq!(decides_as(Some("v1.34.2"), None), (v(34), "server"));
        assert_eq!(
            decides_as(Some("v1.33.1-gke.1100"), None),
            (v(33), "server")
        );
        // Outside the range, the nearest release Foresight reproduces.
        assert_eq!(decides_as(Some("v1.39.0"), None), (v(37), "server"));
        assert_eq!(decides_as(Some("v1.26.3"), None), (v(28), "server"));
        // Unreadable or meaningless: the newest.
        assert_eq!(decides_as(None, None), (v(37), "default"));
        assert_eq!(decides_as(Some("weird"), None), (v(37), "default"));
        assert_eq!(
            decides_as(Some("v0.0.0-master+$Format:%H$"), None),
            (v(37), "default")
        );
    }
}
