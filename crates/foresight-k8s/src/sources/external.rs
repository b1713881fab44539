//! External metrics (external.metrics.k8s.io/v1beta1), requested as Kubernetes' external
//! metrics client requests them.

use foresight_api::hpa::MetricIdentifier;
use foresight_core::metrics::{MetricData, ValueSample};
use k8s_metrics::external_metrics::v1beta1::ExternalMetricValueList;
use k8s_metrics::external_metrics::ExternalMetric;
use kube::Client;

use super::{encode, milli, query};
use crate::telemetry::{ApiCall, Call};

/// Any external metric: the type parameter only names the metric for typed `Api` use, which
/// the raw request does not need.
pub struct AnyExternalMetric;

impl ExternalMetric for AnyExternalMetric {
    const KIND: &'static str = "ExternalMetricValue";
    const URL_PATH_SEGMENT: &'static str = "";
}

/// `GET /apis/external.metrics.k8s.io/v1beta1/namespaces/{ns}/{metric}?labelSelector=...`:
/// every series of the metric that the selector selects (the decision sums them).
pub async fn values(
    client: &Client,
    namespace: &str,
    metric: &MetricIdentifier,
    calls: &ApiCall,
) -> MetricData {
    let selector = metric
        .selector
        .as_ref()
        .map(|s| s.to_query())
        .unwrap_or_default();
    let path = format!(
        "/apis/external.metrics.k8s.io/v1beta1/namespaces/{}/{}{}",
        encode(namespace),
        encode(&metric.name),
        query(&[("labelSelector", selector)])
    );
    calls.record(Call::GetExternalMetric);
    let req = match http::Request::get(path).body(Vec::new()) {
        Ok(r) => r,
        Err(e) => return MetricData::Failed(e.to_string()),
    };
    match client
        .request::<ExternalMetricValueList<AnyExternalMetric>>(req)
        .await
    {
        Err(e) => MetricData::Failed(super::api_error(&e)),
        Ok(list) => {
            let mut out = Vec::with_capacity(list.items.len());
            for item in &list.items {
                match milli(&item.value.0) {
                    Some(value) => out.push(ValueSample {
                        value,
                        timestamp: item.timestamp.0,
                    }),
                    None => {
                        return MetricData::Failed(format!(
                            "invalid quantity {:?} for external metric {}",
                            item.value.0, item.metric_name
                        ))
                    }
                }
            }
            MetricData::Values(out)
        }
    }
}
