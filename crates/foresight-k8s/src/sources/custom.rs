//! Pods and Object metrics from the custom metrics API (custom.metrics.k8s.io/v1beta2),
//! requested exactly as Kubernetes' custom metrics client requests them.

use foresight_api::hpa::{CrossVersionObjectReference, MetricIdentifier};
use foresight_core::metrics::{MetricData, PodValueSample, ValueSample};
use jiff::SignedDuration;
use k8s_metrics::custom_metrics::v1beta2::MetricValueList;
use k8s_openapi::api::core::v1::Pod;
use kube::Client;

use super::{encode, milli, query};
use crate::target::ScaleClient;
use crate::telemetry::{ApiCall, Call};

const BASE: &str = "/apis/custom.metrics.k8s.io/v1beta2";

/// `GET .../namespaces/{ns}/pods/*/{metric}?labelSelector=...&metricLabelSelector=...`: the
/// metric for every pod the workload's selector selects.
pub async fn pod_values(
    client: &Client,
    namespace: &str,
    pod_selector: &str,
    metric: &MetricIdentifier,
    calls: &ApiCall,
) -> MetricData {
    let path = format!(
        "{BASE}/namespaces/{}/pods/*/{}{}",
        encode(namespace),
        encode(&metric.name),
        query(&[
            ("labelSelector", pod_selector.to_owned()),
            ("metricLabelSelector", metric_selector(metric)),
        ])
    );
    calls.record(Call::GetCustomMetric);
    match get(client, path).await {
        Err(e) => MetricData::Failed(e),
        Ok(list) => {
            let mut out = Vec::with_capacity(list.items.len());
            for item in &list.items {
                let Some(value) = milli(&item.value.0) else {
                    return MetricData::Failed(format!(
                        "invalid quantity {:?} for pod {}",
                        item.value.0,
                        item.described_object.name.as_deref().unwrap_or_default()
                    ));
                };
                out.push(PodValueSample {
                    pod: item.described_object.name.clone().unwrap_or_default(),
                    timestamp: item.timestamp.0,
                    window: item.window_seconds.map(SignedDuration::from_secs),
                    value,
                });
            }
            MetricData::PodValues(out)
        }
    }
}

/// `GET .../namespaces/{ns}/{resource}/{name}/{metric}?metricLabelSelector=...`: one object's
/// metric. The resource is the described object's plural with its group
/// (`ingresses.networking.k8s.io`), found through discovery.
pub async fn object_value(
    client: &Client,
    scales: &ScaleClient,
    namespace: &str,
    object: &CrossVersionObjectReference,
    metric: &MetricIdentifier,
    calls: &ApiCall,
) -> MetricData {
    let ar = match scales.resource_for(object, calls).await {
        Ok(ar) => ar,
        Err(e) => return MetricData::Failed(e.to_string()),
    };
    let resource = if ar.group.is_empty() {
        ar.plural.clone()
    } else {
        format!("{}.{}", ar.plural, ar.group)
    };
    let path = format!(
        "{BASE}/namespaces/{}/{}/{}/{}{}",
        encode(namespace),
        encode(&resource),
        encode(&object.name),
        encode(&metric.name),
        query(&[("metricLabelSelector", metric_selector(metric))])
    );
    calls.record(Call::GetCustomMetric);
    match get(client, path).await {
        Err(e) => MetricData::Failed(e),
        Ok(list) => {
            // v1beta2 answers single-object queries with a list; Kubernetes insists on one item.
            let [item] = list.items.as_slice() else {
                return MetricData::Failed(format!(
                    "the server returned {} results when 1 was expected",
                    list.items.len()
                ));
            };
            match milli(&item.value.0) {
                Some(value) => MetricData::Object(ValueSample {
                    value,
                    timestamp: item.timestamp.0,
                }),
                None => MetricData::Failed(format!("invalid quantity {:?}", item.value.0)),
            }
        }
    }
}

fn metric_selector(metric: &MetricIdentifier) -> String {
    metric
        .selector
        .as_ref()
        .map(|s| s.to_query())
        .unwrap_or_default()
}

async fn get(client: &Client, path: String) -> Result<MetricValueList<Pod>, String> {
    let req = http::Request::get(path)
        .body(Vec::new())
        .map_err(|e| e.to_string())?;
    client
        .request::<MetricValueList<Pod>>(req)
        .await
        .map_err(|e| super::api_error(&e))
}
