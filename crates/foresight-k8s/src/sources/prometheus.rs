//! `type: Prometheus` metrics: one instant query per metric per sync, through the
//! controller's Prometheus client, or a failure that says how to configure one.

use foresight_core::autoscaler::{Autoscaler, MetricSource};
use foresight_core::metrics::{MetricData, ValueSample};
use jiff::Timestamp;

use crate::prometheus::{PrometheusClient, PrometheusError, Series};

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

/// Turns an instant query's answer into what the decision reads for a `type: Prometheus`
/// metric: one series' sample in thousandths, no data for an empty answer (the decision says
/// "no metrics returned"), or the error text. Several series are an error: summing them
/// silently would hide a query that forgot its `sum(...)`.
pub fn metric_data(answer: Result<Vec<Series>, PrometheusError>) -> MetricData {
    let series = match answer {
        Ok(series) => series,
        Err(e) => return MetricData::Failed(e.to_string()),
    };
    match series.as_slice() {
        [] => MetricData::Values(Vec::new()),
        [one] => match to_milli(one.value) {
            Some(value) => MetricData::Values(vec![ValueSample {
                value,
                timestamp: one.timestamp,
            }]),
            None => MetricData::Failed(format!("the value {} is out of range", one.value)),
        },
        several => MetricData::Failed(format!(
            "the query returned {} series; it must return one (aggregate it, e.g. with sum(...))",
            several.len()
        )),
    }
}

/// `value` × 1000, rounded; `None` when it does not fit an `i64`.
fn to_milli(value: f64) -> Option<i64> {
    let milli = (value * 1000.0).round();
    // i64::MAX as f64 rounds up to 2^63, which does not fit: compare strictly below it.
    (milli.is_finite() && milli >= i64::MIN as f64 && milli < i64::MAX as f64)
        .then_some(milli as i64)
}

/// Reads a `type: Prometheus` metric: evaluates `query` at `now`.
pub async fn read_prometheus_metric(
    client: &PrometheusClient,
    query: &str,
    now: Timestamp,
) -> MetricData {
    metric_data(client.query(query, now).await)
}

/// Reads every `type: Prometheus` metric of `autoscaler`, in spec order; other metrics get
/// `MetricData::None` (the shell fills them from the Kubernetes metrics APIs).
pub async fn read_prometheus_metrics(
    client: &PrometheusClient,
    autoscaler: &Autoscaler,
    now: Timestamp,
) -> Vec<MetricData> {
    let mut out = Vec::with_capacity(autoscaler.metrics.len());
    for metric in &autoscaler.metrics {
        out.push(match &metric.source {
            MetricSource::Prometheus { query, .. } => {
                read_prometheus_metric(client, query, now).await
            }
            _ => MetricData::None,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn at(s: i64) -> Timestamp {
        Timestamp::from_second(s).unwrap()
    }

    fn series(value: f64) -> Series {
        Series {
            labels: BTreeMap::new(),
            timestamp: at(100),
            value,
        }
    }

    #[test]
    fn one_series_becomes_milli_units() {
        assert_eq!(
            metric_data(Ok(vec![series(1.2345)])),
            MetricData::Values(vec![ValueSample {
                value: 1235,
                timestamp: at(100)
            }])
        );
        assert_eq!(
            metric_data(Ok(vec![series(-0.0004)])),
            MetricData::Values(vec![ValueSample {
                value: 0,
                timestamp: at(100)
            }])
        );
        assert_eq!(metric_data(Ok(vec![])), MetricData::Values(vec![]));
    }

    #[test]
    fn several_series_huge_values_and_errors_fail() {
        match metric_data(Ok(vec![series(1.0), series(2.0), series(3.0)])) {
            MetricData::Failed(e) => assert!(e.contains("returned 3 series"), "{e}"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            metric_data(Ok(vec![series(1e300)])),
            MetricData::Failed(_)
        ));
        assert!(matches!(
            metric_data(Ok(vec![series(9.3e15)])),
            MetricData::Failed(_)
        ));
        assert_eq!(
            metric_data(Err(PrometheusError::Query {
                error_type: "bad_data".to_owned(),
                error: "parse error".to_owned()
            })),
            MetricData::Failed("Prometheus rejected the query (bad_data): parse error".to_owned())
        );
    }
}
