//! The `/metrics` view of the Prometheus client and the forecast cache, read at each
//! scrape: what the controller asked Prometheus, and how the forecasts fare.

use std::fmt;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;

use crate::forecasts::ForecastCache;
use crate::prometheus::PrometheusClient;
use crate::reconcile::Clock;

/// The `/metrics` view of the Prometheus client and the forecast cache.
pub struct PrometheusCollector {
    /// The client whose requests are counted.
    pub client: PrometheusClient,
    /// The forecasts.
    pub cache: ForecastCache,
    /// "Now", for the forecasts' states.
    pub clock: Clock,
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
