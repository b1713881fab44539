//! Reading an autoscaler's metrics from the metrics APIs.
//!
//! - [`resource`] reads metrics.k8s.io PodMetrics, one list per namespace per sync;
//! - [`custom`] reads custom.metrics.k8s.io Pods and Object metrics;
//! - [`external`] reads external.metrics.k8s.io;
//! - [`prometheus`] evaluates `type: Prometheus` queries (when the controller has a
//!   Prometheus);
//! - a `type: Formula` metric's inputs are read by the two above, and the core evaluates the
//!   formula.
//!
//! A source that fails gives `MetricData::Failed` with the API's error, never a number: the
//! decision then refuses to scale down on partial data and says why in `ScalingActive` and
//! in `lastDecision`.

pub mod custom;
pub mod external;
pub mod prometheus;
pub mod resource;

use std::sync::Arc;
use std::time::Instant;

use foresight_core::autoscaler::{Autoscaler, Metric, MetricSource};
use foresight_core::formula::{FormulaInput, InputSource};
use foresight_core::metrics::{MetricData, PodResourceSample};
use jiff::Timestamp;
use kube::Client;

use crate::prometheus::PrometheusClient;
use crate::target::ScaleClient;
use crate::telemetry::ApiCall;
use foresight_api::selector::Selector;
use resource::PodMetricsBatch;

/// What was read for one autoscaler.
#[derive(Clone, Debug)]
pub struct Readings {
    /// PodMetrics of the selected pods (empty when no metric needs them).
    pub resource_metrics: Result<Vec<PodResourceSample>, String>,
    /// One entry per spec metric.
    pub metrics: Vec<MetricData>,
    /// How long each spec metric's reads took (a Resource metric's: the shared PodMetrics
    /// list's), for the HPA's metric computation series.
    pub durations: Vec<std::time::Duration>,
}

/// The metrics APIs, and Prometheus when the controller has one.
pub struct MetricSources {
    client: Client,
    pod_metrics: PodMetricsBatch,
    scales: Arc<ScaleClient>,
    prometheus: Option<PrometheusClient>,
}

impl MetricSources {
    /// Sources over `client`, without Prometheus; PodMetrics lists are shared for `max_age`.
    pub fn new(client: Client, scales: Arc<ScaleClient>, max_age: std::time::Duration) -> Self {
        MetricSources {
            pod_metrics: PodMetricsBatch::new(client.clone(), max_age),
            client,
            scales,
            prometheus: None,
        }
    }

    /// The same sources, reading `type: Prometheus` metrics through `prometheus`.
    pub fn with_prometheus(mut self, prometheus: PrometheusClient) -> Self {
        self.prometheus = Some(prometheus);
        self
    }

    /// Reads every metric of `autoscaler` for the pods `selector` selects (`selector_text`
    /// is the scale's selector as written, passed on to the custom metrics API); PromQL
    /// queries are evaluated at `now`.
    pub async fn read(
        &self,
        autoscaler: &Autoscaler,
        selector: &Selector,
        selector_text: &str,
        now: Timestamp,
        calls: &ApiCall,
    ) -> Readings {
        let ns = autoscaler.namespace.as_str();
        let needs_resource = autoscaler
            .metrics
            .iter()
            .any(|m| matches!(m.source, MetricSource::Resource { .. }));
        let resource_metrics = async {
            let started = Instant::now();
            if needs_resource {
                let read = self.pod_metrics.select(ns, selector, calls).await;
                calls.metric_read("resource", started.elapsed(), read.is_err());
                (read, started.elapsed())
            } else {
                (Ok(Vec::new()), started.elapsed())
            }
        };
        let per_metric = futures::future::join_all(autoscaler.metrics.iter().map(|m| async {
            let started = Instant::now();
            let (source, data) = self.read_one(m, ns, selector_text, now, calls).await;
            if let Some(source) = source {
                let failed = matches!(data, MetricData::Failed(_));
                calls.metric_read(source, started.elapsed(), failed);
            }
            (data, started.elapsed())
        }));
        let ((resource_metrics, resource_took), read) =
            futures::join!(resource_metrics, per_metric);
        let durations = autoscaler
            .metrics
            .iter()
            .zip(&read)
            .map(|(m, (_, took))| match m.source {
                MetricSource::Resource { .. } => resource_took,
                _ => *took,
            })
            .collect();
        Readings {
            resource_metrics,
            metrics: read.into_iter().map(|(data, _)| data).collect(),
            durations,
        }
    }

    /// Reads one metric that is not served by the shared PodMetrics list, and names its
    /// source for the latency series (`None` for what needs no request of its own).
    async fn read_one(
        &self,
        m: &Metric,
        ns: &str,
        selector_text: &str,
        now: Timestamp,
        calls: &ApiCall,
    ) -> (Option<&'static str>, MetricData) {
        let source = match &m.source {
            MetricSource::Resource { .. } | MetricSource::Unknown { .. } => None,
            MetricSource::Pods { .. } => Some("pods"),
            MetricSource::Object { .. } => Some("object"),
            MetricSource::External { .. } => Some("external"),
            MetricSource::Prometheus { .. } => Some("prometheus"),
            MetricSource::Formula { .. } => Some("formula"),
        };
        let data = match &m.source {
            MetricSource::Resource { .. } | MetricSource::Unknown { .. } => MetricData::None,
            MetricSource::Pods { metric } => {
                custom::pod_values(&self.client, ns, selector_text, metric, calls).await
            }
            MetricSource::Object {
                metric,
                described_object,
            } => {
                custom::object_value(
                    &self.client,
                    &self.scales,
                    ns,
                    described_object,
                    metric,
                    calls,
                )
                .await
            }
            MetricSource::External { metric } => {
                external::values(&self.client, ns, metric, calls).await
            }
            MetricSource::Prometheus { query, .. } => {
                prometheus::value(self.prometheus.as_ref(), query, now).await
            }
            MetricSource::Formula { formula, .. } => {
                self.read_inputs(&formula.inputs, ns, now, calls).await
            }
        };
        (source, data)
    }

    /// A formula's inputs, read concurrently, each as the metric of its kind would be; the
    /// core evaluates the formula over them (and reports an input that failed).
    async fn read_inputs(
        &self,
        inputs: &[FormulaInput],
        ns: &str,
        now: Timestamp,
        calls: &ApiCall,
    ) -> MetricData {
        let read = futures::future::join_all(inputs.iter().map(|input| async {
            match &input.source {
                InputSource::External { metric } => {
                    external::values(&self.client, ns, metric, calls).await
                }
                InputSource::Prometheus { query } => {
                    prometheus::value(self.prometheus.as_ref(), query, now).await
                }
            }
        }))
        .await;
        MetricData::Inputs(read)
    }
}

/// A quantity string in thousandths.
fn milli(q: &str) -> Option<i64> {
    foresight_api::Quantity(q.to_owned()).milli_value().ok()
}

/// Percent-encodes one path segment (`*` stays, as the custom metrics API wants it).
fn encode(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'*' | b':') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `?k=v&...` with the non-empty parameters, encoded as Go's `url.Values` encodes them.
fn query(params: &[(&str, String)]) -> String {
    let mut s = form_urlencoded::Serializer::new(String::new());
    let mut any = false;
    for (k, v) in params {
        if !v.is_empty() {
            s.append_pair(k, v);
            any = true;
        }
    }
    if any {
        format!("?{}", s.finish())
    } else {
        String::new()
    }
}

/// A metrics API's failure in words, as client-go prints it: the server's message and the
/// HTTP code, not kube's Debug form of the whole Status. The decision adds which API it was.
pub fn api_error(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(status) if !status.message.is_empty() => {
            format!("{} (HTTP {})", status.message.trim(), status.code)
        }
        kube::Error::Api(status) => format!("the server answered HTTP {}", status.code),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_paths_and_queries() {
        assert_eq!(encode("pods/*"), "pods%2F*");
        assert_eq!(encode("http_requests"), "http_requests");
        assert_eq!(
            query(&[
                ("labelSelector", "app=web,tier in (a,b)".to_owned()),
                ("x", String::new())
            ]),
            "?labelSelector=app%3Dweb%2Ctier+in+%28a%2Cb%29"
        );
        assert_eq!(query(&[("x", String::new())]), "");
    }
}
