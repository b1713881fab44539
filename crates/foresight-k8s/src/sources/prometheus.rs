//! `type: Prometheus` metrics: one instant query per metric per sync, through the
//! controller's Prometheus client, or a failure that says how to configure one.

use foresight_core::metrics::MetricData;
use jiff::Timestamp;

use crate::forecasts::read_prometheus_metric;
use crate::prometheus::PrometheusClient;

/// Why a `type: Prometheus` metric has no value when the controller runs without
/// `--prometheus-url`.
pub const PROMETHEUS_UNAVAILABLE: &str =
    "Prometheus metrics need a Prometheus: start the controller with --prometheus-url";

/// Evaluates `query` at `now`, or fails with [`PROMETHEUS_UNAVAILABLE`] without a client.
/// Like every failed metric, a failure here stops scale-down and shows in `ScalingActive`.
pub async fn value(client: Option<&PrometheusClient>, query: &str, now: Timestamp) -> MetricData {
    match client {
        Some(client) => read_prometheus_metric(client, query, now).await,
        None => MetricData::Failed(PROMETHEUS_UNAVAILABLE.to_owned()),
    }
}
