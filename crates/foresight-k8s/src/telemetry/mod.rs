//! What the controller tells its operators: Prometheus metrics (served on `/metrics` with
//! `/healthz` and `/readyz`), and logs (JSON in the cluster, human on a terminal).
//!
//! Every series is listed with its labels in `docs/metrics.md` (a test compares the two):
//! per autoscaler ([`autoscalers`]), controller-wide (here), Prometheus and forecasts
//! ([`forecasts`]), and the process ([`process`]).

pub mod autoscalers;
pub mod forecasts;
pub mod hpa;
pub mod process;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::info::Info;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use crate::autoscaler_key::{AutoscalerKey, PerAutoscaler};
use crate::forecasts::ForecastCache;
use crate::prometheus::PrometheusClient;
use crate::reconcile::Clock;
use autoscalers::AutoscalerSeries;

/// A Kubernetes API request the reconciles send (watches are kube-runtime's and not counted).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// GET of a workload's `/scale`.
    GetScale,
    /// PATCH of a workload's `/scale`.
    PatchScale,
    /// Discovery of a workload kind's resource.
    Discovery,
    /// PATCH of an autoscaler's `/status`.
    PatchStatus,
    /// POST of an `events.k8s.io` Event.
    CreateEvent,
    /// LIST of a namespace's PodMetrics.
    ListPodMetrics,
    /// GET of a custom metric.
    GetCustomMetric,
    /// GET of an external metric.
    GetExternalMetric,
}

impl Call {
    /// The request's verb and resource, as the labels of
    /// `foresight_kubernetes_requests_total`.
    pub fn verb_and_resource(self) -> (&'static str, &'static str) {
        match self {
            Call::GetScale => ("get", "scale"),
            Call::PatchScale => ("patch", "scale"),
            Call::Discovery => ("get", "discovery"),
            Call::PatchStatus => ("patch", "effectivehorizontalpodautoscalers/status"),
            Call::CreateEvent => ("create", "events"),
            Call::ListPodMetrics => ("list", "pods.metrics.k8s.io"),
            Call::GetCustomMetric => ("get", "custom.metrics.k8s.io"),
            Call::GetExternalMetric => ("get", "external.metrics.k8s.io"),
        }
    }
}

/// Labels of `foresight_kubernetes_requests_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    verb: &'static str,
    resource: &'static str,
}

/// Labels of `foresight_decisions_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct DecisionLabels {
    /// `up`, `down` or `none`.
    pub direction: String,
    /// What shaped the decision last: a limit's reason (`ScaleDownStabilized`,
    /// `ScaleUpLimit`, ...), a failure's reason, or `Recommendation` when nothing did.
    pub reason: String,
}

/// Labels of `foresight_reconcile_errors_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ErrorLabels {
    kind: &'static str,
}

/// Labels of the metric-source series.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SourceLabels {
    source: &'static str,
}

/// The Kubernetes release the decisions are made as, and where that came from.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KubernetesLabels {
    /// The API server's `gitVersion` (`v1.37.2`), or `unknown` when it could not be read.
    server_version: String,
    /// The release decided as (`1.37`).
    decides_as: String,
    /// `server` (read from the API server), `flag` (`--kubernetes-version`) or `default` (the
    /// newest: the server could not be read and no flag was given).
    source: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BuildLabels {
    version: String,
    revision: String,
}

/// Which build runs, for `foresight_build_info`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Build {
    /// The release (`CARGO_PKG_VERSION`).
    pub version: String,
    /// The source revision (git commit), or `unknown`.
    pub revision: String,
}

impl Default for Build {
    fn default() -> Self {
        Build {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            revision: "unknown".to_owned(),
        }
    }
}

/// The controller's metrics.
pub struct Telemetry {
    registry: Registry,
    /// Reconciles run.
    pub reconciles: Counter,
    reconcile_errors: Family<ErrorLabels, Counter>,
    /// Reconcile wall time, seconds.
    pub reconcile_duration: Histogram,
    /// How late each sync started against when it was due.
    pub sync_lateness: Histogram,
    /// Decisions by direction and reason.
    pub decisions: Family<DecisionLabels, Counter>,
    requests: Family<RequestLabels, Counter>,
    source_duration: Family<SourceLabels, Histogram>,
    source_errors: Family<SourceLabels, Counter>,
    leader: Gauge,
    /// `foresight_kubernetes_info`: 1 for the release decided as.
    kubernetes: Family<KubernetesLabels, Gauge>,
    /// The per-autoscaler series.
    pub autoscalers: AutoscalerSeries,
    /// The series kube-controller-manager exports for its HPAs.
    pub hpa: hpa::HpaMetrics,
    queue: Arc<Queue>,
    ready: AtomicBool,
    /// The length of the last `/metrics` text: the next one is about as long.
    encoded_len: AtomicUsize,
}

impl Default for Telemetry {
    fn default() -> Self {
        Self::new(Build::default())
    }
}

fn latency_buckets() -> [f64; 12] {
    [
        0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
    ]
}

impl Telemetry {
    /// Fresh metrics in a fresh registry, `build` naming the running build.
    pub fn new(build: Build) -> Self {
        let mut registry = Registry::default();
        let t = Telemetry {
            registry: Registry::default(),
            reconciles: Counter::default(),
            reconcile_errors: Family::default(),
            reconcile_duration: Histogram::new(latency_buckets()),
            sync_lateness: Histogram::new(latency_buckets()),
            decisions: Family::default(),
            requests: Family::default(),
            source_duration: Family::new_with_constructor(|| Histogram::new(latency_buckets())),
            source_errors: Family::default(),
            leader: Gauge::default(),
            kubernetes: Family::default(),
            autoscalers: AutoscalerSeries::default(),
            hpa: hpa::HpaMetrics::default(),
            queue: Arc::new(Queue::default()),
            ready: AtomicBool::new(false),
            encoded_len: AtomicUsize::new(0),
        };
        let r = registry.sub_registry_with_prefix("foresight");
        r.register(
            "build",
            "The running build: version and source revision",
            Info::new(BuildLabels {
                version: build.version,
                revision: build.revision,
            }),
        );
        r.register(
            "kubernetes_info",
            "The Kubernetes release whose HPA the decisions reproduce (decides_as), the API \
             server's version (server_version), and where the release came from (source: \
             server, flag or default)",
            t.kubernetes.clone(),
        );
        r.register("reconciles", "Reconciles run", t.reconciles.clone());
        r.register(
            "reconcile_errors",
            "Reconciles that ended in an error, by kind (status_write: status could not be \
             written; timeout: an API request went unanswered)",
            t.reconcile_errors.clone(),
        );
        r.register(
            "reconcile_duration_seconds",
            "Wall time of one reconcile",
            t.reconcile_duration.clone(),
        );
        r.register(
            "sync_lateness_seconds",
            "How late each sync started against the time it was due (a sync period after the \
             previous one ended): what a backed-up queue costs",
            t.sync_lateness.clone(),
        );
        r.register(
            "decisions",
            "Decisions by direction and the reason that shaped them",
            t.decisions.clone(),
        );
        r.register(
            "kubernetes_requests",
            "Kubernetes API requests sent by reconciles, by verb and resource",
            t.requests.clone(),
        );
        r.register(
            "metric_source_request_duration_seconds",
            "Time to read one metric of one autoscaler, by source (resource, pods, object, \
             external, prometheus)",
            t.source_duration.clone(),
        );
        r.register(
            "metric_source_errors",
            "Metric reads that failed, by source",
            t.source_errors.clone(),
        );
        r.register(
            "leader",
            "1 while this replica holds the lease and reconciles, 0 while it stands by",
            t.leader.clone(),
        );
        r.register_collector(Box::new(QueueCollector(t.queue.clone())));
        t.autoscalers.register(r);
        t.hpa.register(&mut registry);
        registry.register_collector(Box::new(process::ProcessCollector));
        Telemetry { registry, ..t }
    }

    /// A handle that counts API calls.
    pub fn calls(self: &Arc<Self>) -> ApiCall {
        ApiCall(Some(self.clone()))
    }

    /// How many requests of `call` were counted.
    pub fn requests(&self, call: Call) -> u64 {
        let (verb, resource) = call.verb_and_resource();
        self.requests
            .get_or_create(&RequestLabels { verb, resource })
            .get()
    }

    /// Counts a failed reconcile of `kind`.
    pub fn reconcile_failed(&self, kind: &'static str) {
        self.reconcile_errors
            .get_or_create(&ErrorLabels { kind })
            .inc();
    }

    /// Records the Kubernetes release decided as: `server_version` is what the API server
    /// reported (`None` when it could not be read), `source` where `decides_as` came from.
    pub fn set_kubernetes(&self, server_version: Option<&str>, decides_as: &str, source: &str) {
        self.kubernetes.clear();
        self.kubernetes
            .get_or_create(&KubernetesLabels {
                server_version: server_version.unwrap_or("unknown").to_owned(),
                decides_as: decides_as.to_owned(),
                source: source.to_owned(),
            })
            .set(1);
    }

    /// Records whether this replica leads.
    pub fn set_leader(&self, leading: bool) {
        self.leader.set(i64::from(leading));
    }

    /// Notes that one autoscaler's next sync is due after `delay`.
    pub fn sync_due(&self, key: &AutoscalerKey, delay: Duration) {
        self.queue
            .due
            .lock()
            .insert(key.clone(), Instant::now() + delay);
    }

    /// Notes that one autoscaler's sync started.
    pub fn sync_started(&self, key: &AutoscalerKey) {
        let was_due = self.queue.due.lock().remove(key);
        if let Some(at) = was_due {
            let late = Instant::now().saturating_duration_since(at);
            self.sync_lateness.observe(late.as_secs_f64());
        }
    }

    /// The metrics in OpenMetrics text.
    ///
    /// The text is written into a buffer sized from the last one, with room for some growth.
    /// Grown from empty by doubling, the buffer of 6.8 MB of text at 10,000 autoscalers
    /// passed through 4 and 8 MiB with every smaller size before them, each copied into the
    /// next: about 16 MiB touched for a moment on every scrape instead of 7.
    pub fn encode(&self) -> String {
        let mut out = String::with_capacity(expected_len(self.encoded_len.load(Ordering::Relaxed)));
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
        self.encoded_len.store(out.len(), Ordering::Relaxed);
        out
    }

    /// Adds what `client` asked Prometheus and how `cache` refreshes to the metrics, read at
    /// each scrape; `clock` says when "now" is for the forecasts' states.
    pub fn register_prometheus(
        &mut self,
        client: PrometheusClient,
        cache: ForecastCache,
        clock: Clock,
    ) {
        self.registry
            .sub_registry_with_prefix("foresight")
            .register_collector(Box::new(forecasts::PrometheusCollector {
                client,
                cache,
                clock,
            }));
    }

    /// Marks the controller ready (`/readyz` answers 200): caches listed, leadership settled.
    pub fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::Release);
    }

    /// Whether `/readyz` answers 200.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }
}

/// An autoscaler's series and its place in the queue go with it; when this replica stops
/// leading, every autoscaler's go (the leader's are the current ones).
impl PerAutoscaler for Telemetry {
    fn forget(&self, key: &AutoscalerKey) {
        self.autoscalers.forget(key);
        self.queue.due.lock().remove(key);
    }

    fn retain(&self, keep: &dyn Fn(&AutoscalerKey) -> bool) {
        self.autoscalers.retain(keep);
        self.queue.due.lock().retain(|k, _| keep(k));
    }
}

/// The buffer for a `/metrics` text when the last one was `last` bytes long: 1/16 more, so
/// that autoscalers created meanwhile fit without the buffer doubling.
fn expected_len(last: usize) -> usize {
    last.saturating_add(last / 16)
}

/// When each autoscaler's next sync is due. The controller's queue (kube-runtime's) cannot
/// be inspected, so its depth is measured here: syncs due but not started.
#[derive(Debug, Default)]
struct Queue {
    due: Mutex<HashMap<AutoscalerKey, Instant>>,
}

#[derive(Debug)]
struct QueueCollector(Arc<Queue>);

impl Collector for QueueCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let now = Instant::now();
        let waiting = self.0.due.lock().values().filter(|&&at| at <= now).count();
        ConstGauge::new(i64::try_from(waiting).unwrap_or(i64::MAX)).encode(
            encoder.encode_descriptor(
                "queue_depth",
                "Autoscalers whose sync is due but has not started (waiting for a worker)",
                None,
                MetricType::Gauge,
            )?,
        )
    }
}

/// Counts API requests and times metric reads; a no-op when built without telemetry.
#[derive(Clone, Default)]
pub struct ApiCall(Option<Arc<Telemetry>>);

impl ApiCall {
    /// Counts one request.
    pub fn record(&self, call: Call) {
        if let Some(t) = &self.0 {
            let (verb, resource) = call.verb_and_resource();
            t.requests
                .get_or_create(&RequestLabels { verb, resource })
                .inc();
        }
    }

    /// Records one metric read from `source` that took `elapsed` and failed or not.
    pub fn metric_read(&self, source: &'static str, elapsed: Duration, failed: bool) {
        if let Some(t) = &self.0 {
            let labels = SourceLabels { source };
            t.source_duration
                .get_or_create(&labels)
                .observe(elapsed.as_secs_f64());
            if failed {
                t.source_errors.get_or_create(&labels).inc();
            }
        }
    }
}

/// The HTTP endpoints: `/metrics`, `/healthz` (the process answers), `/readyz` (it is ready
/// to act or to stand by as a follower).
pub fn router(telemetry: Arc<Telemetry>) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .with_state(telemetry)
}

async fn metrics(State(t): State<Arc<Telemetry>>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        t.encode(),
    )
}

async fn readyz(State(t): State<Arc<Telemetry>>) -> impl IntoResponse {
    if t.is_ready() {
        (StatusCode::OK, "ready")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "not ready")
    }
}

/// How logs are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// JSON lines, for log collectors.
    Json,
    /// Human-readable text.
    Human,
    /// JSON unless stderr is a terminal.
    Auto,
}

/// The directive that silences kube's per-request error lines.
const QUIET_KUBE_CLIENT: &str = "kube_client::client::builder=off";

/// Installs the global log subscriber. `filter` is an `EnvFilter` directive
/// (`info,foresight_k8s=debug`). Human-readable lines are coloured only on a terminal (and
/// not when `NO_COLOR` is set): escape codes in a pipe or a log file are noise.
pub fn init_logging(format: LogFormat, filter: &str) {
    use std::io::IsTerminal;
    use tracing_subscriber::EnvFilter;
    let json = match format {
        LogFormat::Json => true,
        LogFormat::Human => false,
        LogFormat::Auto => !std::io::stderr().is_terminal(),
    };
    // kube's client logs every failed request at ERROR; the controller logs what failed
    // once, with context, so kube's line is off unless the filter names kube_client itself.
    let filter = if filter.contains("kube_client") {
        filter.to_owned()
    } else {
        format!("{filter},{QUIET_KUBE_CLIENT}")
    };
    let filter = EnvFilter::try_new(&filter).unwrap_or_else(|_| EnvFilter::new("info"));
    let colour = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(colour)
        .with_writer(std::io::stderr);
    // A second install (tests, a re-run in the same process) is harmless: keep the first.
    let _ = if json {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_calls_and_encodes_them() {
        let t = Arc::new(Telemetry::default());
        let calls = t.calls();
        calls.record(Call::PatchStatus);
        calls.record(Call::PatchStatus);
        assert_eq!(t.requests(Call::PatchStatus), 2);
        let text = t.encode();
        assert!(
            text.contains(
                "foresight_kubernetes_requests_total{verb=\"patch\",\
                 resource=\"effectivehorizontalpodautoscalers/status\"} 2"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_scrape_sizes_its_text_from_the_last_and_does_not_change_it() {
        let t = Arc::new(Telemetry::default());
        t.calls().record(Call::PatchStatus);
        let first = t.encode();
        let second = t.encode();
        // The same text (but the process's own readings, which move between scrapes) ...
        let steady = |text: &str| {
            text.lines()
                .filter(|l| !l.starts_with("process_"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(steady(&first), steady(&second));
        assert!(second.contains("foresight_kubernetes_requests_total"));
        // ... written into a buffer of the expected size, without growing it.
        assert_eq!(second.capacity(), expected_len(first.len()));
    }
}
