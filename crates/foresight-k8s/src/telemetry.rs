//! What the controller tells its operators: Prometheus metrics (served on `/metrics` with
//! `/healthz` and `/readyz`), and logs (JSON in the cluster, human on a terminal).
//!
//! With Prometheus configured, `/metrics` also shows what the controller asked Prometheus
//! (`foresight_prometheus_requests_total{endpoint}`,
//! `foresight_prometheus_query_errors_total{endpoint,kind}`) and how the forecast cache fares
//! (`foresight_forecast_refreshes_total{outcome}`, `foresight_forecast_refreshes_in_flight`,
//! `foresight_forecasts{state}`), read from the client and the cache at each scrape.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use crate::forecasts::ForecastCache;
use crate::prometheus::PrometheusClient;
use crate::reconcile::Clock;

/// Labels of `foresight_api_requests_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CallLabels {
    /// The call, e.g. `list_pod_metrics`, `patch_status`.
    pub call: String,
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

/// The controller's metrics.
pub struct Telemetry {
    registry: Registry,
    /// Reconciles run.
    pub reconciles: Counter,
    /// Reconciles that ended in an error (reported in status and events too).
    pub reconcile_errors: Counter,
    /// Reconcile wall time, seconds.
    pub reconcile_duration: Histogram,
    /// Decisions by direction and reason.
    pub decisions: Family<DecisionLabels, Counter>,
    /// Kubernetes API requests by call.
    pub api_requests: Family<CallLabels, Counter>,
    ready: AtomicBool,
}

impl Default for Telemetry {
    fn default() -> Self {
        Self::new()
    }
}

impl Telemetry {
    /// Fresh metrics in a fresh registry.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("foresight");
        let reconciles = Counter::default();
        let reconcile_errors = Counter::default();
        let reconcile_duration = Histogram::new([
            0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
        ]);
        let decisions = Family::<DecisionLabels, Counter>::default();
        let api_requests = Family::<CallLabels, Counter>::default();
        registry.register("reconciles", "Reconciles run", reconciles.clone());
        registry.register(
            "reconcile_errors",
            "Reconciles that ended in an error",
            reconcile_errors.clone(),
        );
        registry.register(
            "reconcile_duration_seconds",
            "Wall time of one reconcile",
            reconcile_duration.clone(),
        );
        registry.register(
            "decisions",
            "Decisions by direction and the reason that shaped them",
            decisions.clone(),
        );
        registry.register(
            "api_requests",
            "Kubernetes API requests by call",
            api_requests.clone(),
        );
        Telemetry {
            registry,
            reconciles,
            reconcile_errors,
            reconcile_duration,
            decisions,
            api_requests,
            ready: AtomicBool::new(false),
        }
    }

    /// A handle that counts API calls.
    pub fn calls(self: &Arc<Self>) -> ApiCall {
        ApiCall(Some(self.clone()))
    }

    /// How many requests of `call` were counted.
    pub fn requests(&self, call: &str) -> u64 {
        self.api_requests
            .get_or_create(&CallLabels {
                call: call.to_owned(),
            })
            .get()
    }

    /// The metrics in OpenMetrics text.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
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
            .register_collector(Box::new(PrometheusCollector {
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

/// Counts API requests; a no-op when built without telemetry.
#[derive(Clone, Default)]
pub struct ApiCall(Option<Arc<Telemetry>>);

impl ApiCall {
    /// Counts one request of `call`.
    pub fn record(&self, call: &str) {
        if let Some(t) = &self.0 {
            t.api_requests
                .get_or_create(&CallLabels {
                    call: call.to_owned(),
                })
                .inc();
        }
    }
}

/// The `/metrics` view of the Prometheus client and the forecast cache.
struct PrometheusCollector {
    client: PrometheusClient,
    cache: ForecastCache,
    clock: Clock,
}

impl fmt::Debug for PrometheusCollector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PrometheusCollector")
            .field("client", &self.client)
            .finish_non_exhaustive()
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EndpointLabels {
    endpoint: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueryErrorLabels {
    endpoint: &'static str,
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StateLabels {
    state: &'static str,
}

/// Writes one metric family: `samples` under `name`, each with its labels.
fn encode_family<L: EncodeLabelSet, M: EncodeMetric>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    metric_type: MetricType,
    samples: impl IntoIterator<Item = (L, M)>,
) -> Result<(), fmt::Error> {
    let mut family = encoder.encode_descriptor(name, help, None, metric_type)?;
    for (labels, metric) in samples {
        metric.encode(family.encode_family(&labels)?)?;
    }
    Ok(())
}

fn gauge(n: u64) -> ConstGauge<i64> {
    ConstGauge::new(i64::try_from(n).unwrap_or(i64::MAX))
}

impl Collector for PrometheusCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), fmt::Error> {
        let requests = self.client.request_stats();
        encode_family(
            &mut encoder,
            "prometheus_requests",
            "HTTP requests sent to Prometheus, by API endpoint",
            MetricType::Counter,
            requests.requests.iter().map(|(endpoint, n)| {
                (
                    EndpointLabels {
                        endpoint: endpoint.as_str(),
                    },
                    ConstCounter::new(*n),
                )
            }),
        )?;
        encode_family(
            &mut encoder,
            "prometheus_query_errors",
            "Prometheus queries that failed, by API endpoint and kind of failure",
            MetricType::Counter,
            requests.errors.iter().map(|(&(endpoint, kind), &n)| {
                (
                    QueryErrorLabels {
                        endpoint: endpoint.as_str(),
                        kind,
                    },
                    ConstCounter::new(n),
                )
            }),
        )?;
        let stats = self.cache.stats();
        encode_family(
            &mut encoder,
            "forecast_refreshes",
            "Forecast refreshes finished, by outcome (ready: a forecast; not_ready: the \
             predictor could not make one yet; failed: history could not be read)",
            MetricType::Counter,
            [
                ("ready", stats.succeeded),
                ("not_ready", stats.not_ready),
                ("failed", stats.failed),
            ]
            .map(|(outcome, n)| (OutcomeLabels { outcome }, ConstCounter::new(n))),
        )?;
        gauge(stats.in_flight).encode(encoder.encode_descriptor(
            "forecast_refreshes_in_flight",
            "Forecast refreshes running now",
            None,
            MetricType::Gauge,
        )?)?;
        let states = self.cache.states((self.clock)());
        encode_family(
            &mut encoder,
            "forecasts",
            "Forecasts tracked (one per autoscaler and predicted metric), by what they give \
             the decision now",
            MetricType::Gauge,
            [
                ("ready", states.ready),
                ("not_ready", states.not_ready),
                ("failed", states.failed),
            ]
            .map(|(state, n)| (StateLabels { state }, gauge(n))),
        )
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

/// Installs the global log subscriber. `filter` is an `EnvFilter` directive
/// (`info,foresight_k8s=debug`).
/// The directive that silences kube's per-request error lines.
const QUIET_KUBE_CLIENT: &str = "kube_client::client::builder=off";

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
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
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
        let t = Arc::new(Telemetry::new());
        let calls = t.calls();
        calls.record("patch_status");
        calls.record("patch_status");
        assert_eq!(t.requests("patch_status"), 2);
        let text = t.encode();
        assert!(
            text.contains("foresight_api_requests_total{call=\"patch_status\"} 2"),
            "{text}"
        );
    }
}
