//! The JSON shapes in which observations are written down: snapshot files for
//! `foresight explain`, the conformance cases, and the simulator's recordings. They follow
//! the Kubernetes objects they stand for (pods, PodMetrics, custom and external metric
//! values) and are converted here into the decision's types.

use std::collections::BTreeMap;

use foresight_api::quantity::Quantity;
use foresight_api::status::ConditionStatus;
use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::autoscaler::{Autoscaler, MetricSource};
use crate::decision::Observation;
use crate::metrics::{ContainerUsage, MetricData, PodResourceSample, PodValueSample, ValueSample};
use crate::pods::{Container, Pod, PodPhase, ReadyCondition};
use crate::proposals::Scale;
use crate::time::GO_ZERO_TIME;

/// A pod's `Ready` condition.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadyJson {
    /// `True`, `False` or `Unknown`.
    pub status: ConditionStatus,
    /// When it last changed.
    #[serde(default)]
    pub last_transition_time: Option<Timestamp>,
}

/// A container and its requests.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerJson {
    /// Name.
    #[serde(default)]
    pub name: String,
    /// `resources.requests`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<BTreeMap<String, Quantity>>,
}

/// A pod.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodJson {
    /// Name.
    pub name: String,
    /// `Pending`, `Running`, `Succeeded`, `Failed` or `Unknown`.
    #[serde(default)]
    pub phase: PodPhase,
    /// The `Ready` condition; null when the pod has none.
    #[serde(default)]
    pub ready: Option<ReadyJson>,
    /// `status.startTime`.
    #[serde(default)]
    pub start_time: Option<Timestamp>,
    /// `metadata.deletionTimestamp`.
    #[serde(default)]
    pub deletion_timestamp: Option<Timestamp>,
    /// Containers.
    #[serde(default)]
    pub containers: Vec<ContainerJson>,
    /// Init containers (not used by the v1.28 algorithm).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub init_containers: Vec<ContainerJson>,
}

/// One container's usage in a PodMetrics item.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ContainerUsageJson {
    /// Name.
    #[serde(default)]
    pub name: String,
    /// Usage per resource.
    #[serde(default)]
    pub usage: BTreeMap<String, Quantity>,
}

/// A PodMetrics item.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodResourceMetricJson {
    /// Pod name.
    pub pod: String,
    /// Sample time.
    pub timestamp: Timestamp,
    /// Sample window.
    #[serde(default)]
    pub window_seconds: Option<i64>,
    /// Containers.
    #[serde(default)]
    pub containers: Vec<ContainerUsageJson>,
}

/// A per-pod custom metric value.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodCustomMetricJson {
    /// Pod name.
    pub pod: String,
    /// Sample time.
    pub timestamp: Timestamp,
    /// Sample window (60 s when null).
    #[serde(default)]
    pub window_seconds: Option<i64>,
    /// Value.
    pub value: Quantity,
}

/// A single metric value.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ValueJson {
    /// Value.
    pub value: Quantity,
    /// Sample time.
    pub timestamp: Timestamp,
}

/// An object metric value.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMetricJson {
    /// The described object's name.
    pub object_name: String,
    /// The metric's name.
    pub metric_name: String,
    /// Value.
    pub value: Quantity,
    /// Sample time.
    pub timestamp: Timestamp,
}

/// What the metrics APIs returned, by API.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MetricsJson {
    /// metrics.k8s.io PodMetrics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_resource_metrics: Option<Vec<PodResourceMetricJson>>,
    /// custom.metrics.k8s.io per-pod values, by metric name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_custom_metrics: Option<BTreeMap<String, Vec<PodCustomMetricJson>>>,
    /// custom.metrics.k8s.io object values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_metrics: Option<Vec<ObjectMetricJson>>,
    /// external.metrics.k8s.io values, by metric name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_metrics: Option<BTreeMap<String, Vec<ValueJson>>>,
    /// Prometheus query results, by metric name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prometheus_metrics: Option<BTreeMap<String, Vec<ValueJson>>>,
    /// API failures: `resource`, `pods/<m>`, `object/<m>`, `external/<m>`, `prometheus/<m>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<BTreeMap<String, String>>,
}

/// The target's scale subresource.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScaleJson {
    /// `spec.replicas`.
    pub spec_replicas: i32,
    /// `status.replicas`.
    #[serde(default)]
    pub status_replicas: i32,
    /// `status.selector`.
    #[serde(default)]
    pub selector: String,
    /// Makes reading the scale fail with this error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub get_error: Option<String>,
    /// Makes writing the scale fail with this error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_error: Option<String>,
}

/// A snapshot value that could not be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct SnapshotError {
    /// Where.
    pub path: String,
    /// What.
    pub message: String,
}

fn milli(q: &Quantity, path: impl FnOnce() -> String) -> Result<i64, SnapshotError> {
    q.milli_value().map_err(|e| SnapshotError {
        path: path(),
        message: format!("{:?}: {e}", q.0),
    })
}

impl PodJson {
    /// The pod as the decision sees it.
    pub fn to_pod(&self, path: &str) -> Result<Pod, SnapshotError> {
        let mut containers = Vec::with_capacity(self.containers.len());
        for (i, c) in self.containers.iter().enumerate() {
            let mut requests = Vec::new();
            for (r, q) in c.requests.iter().flatten() {
                requests.push((
                    r.clone(),
                    milli(q, || format!("{path}.containers[{i}].requests.{r}"))?,
                ));
            }
            containers.push(Container {
                name: c.name.clone(),
                requests,
            });
        }
        Ok(Pod {
            name: self.name.clone(),
            phase: self.phase,
            ready: self.ready.as_ref().map(|r| ReadyCondition {
                status: r.status,
                last_transition_time: r.last_transition_time.unwrap_or(GO_ZERO_TIME),
            }),
            start_time: self.start_time,
            deletion_timestamp: self.deletion_timestamp,
            containers,
        })
    }
}

/// Converts pods.
pub fn pods(list: &[PodJson], path: &str) -> Result<Vec<Pod>, SnapshotError> {
    list.iter()
        .enumerate()
        .map(|(i, p)| p.to_pod(&format!("{path}[{i}]")))
        .collect()
}

/// Converts PodMetrics items.
pub fn pod_resource_metrics(
    list: &[PodResourceMetricJson],
    path: &str,
) -> Result<Vec<PodResourceSample>, SnapshotError> {
    let mut out = Vec::with_capacity(list.len());
    for (i, m) in list.iter().enumerate() {
        let mut containers = Vec::with_capacity(m.containers.len());
        for (j, c) in m.containers.iter().enumerate() {
            let mut usage = Vec::with_capacity(c.usage.len());
            for (r, q) in &c.usage {
                usage.push((
                    r.clone(),
                    milli(q, || format!("{path}[{i}].containers[{j}].usage.{r}"))?,
                ));
            }
            containers.push(ContainerUsage {
                name: c.name.clone(),
                usage,
            });
        }
        out.push(PodResourceSample {
            pod: m.pod.clone(),
            timestamp: m.timestamp,
            window: SignedDuration::from_secs(m.window_seconds.unwrap_or(0)),
            containers,
        });
    }
    Ok(out)
}

/// Converts per-pod custom metric values.
pub fn pod_custom_metrics(
    list: &[PodCustomMetricJson],
    path: &str,
) -> Result<Vec<PodValueSample>, SnapshotError> {
    list.iter()
        .enumerate()
        .map(|(i, m)| {
            Ok(PodValueSample {
                pod: m.pod.clone(),
                timestamp: m.timestamp,
                window: m.window_seconds.map(SignedDuration::from_secs),
                value: milli(&m.value, || format!("{path}[{i}].value"))?,
            })
        })
        .collect()
}

/// Converts plain values.
pub fn values(list: &[ValueJson], path: &str) -> Result<Vec<ValueSample>, SnapshotError> {
    list.iter()
        .enumerate()
        .map(|(i, v)| {
            Ok(ValueSample {
                value: milli(&v.value, || format!("{path}[{i}].value"))?,
                timestamp: v.timestamp,
            })
        })
        .collect()
}

impl ScaleJson {
    /// The scale, or the injected read error.
    pub fn to_scale(&self) -> Result<Scale, String> {
        match &self.get_error {
            Some(e) => Err(e.clone()),
            None => Ok(Scale {
                spec_replicas: self.spec_replicas,
                status_replicas: self.status_replicas,
                selector: self.selector.clone(),
            }),
        }
    }
}

/// Builds the observation for `autoscaler` from a snapshot's scale, pods and metrics.
pub fn observation(
    autoscaler: &Autoscaler,
    scale: &ScaleJson,
    pod_list: &[PodJson],
    metrics: &MetricsJson,
) -> Result<Observation, SnapshotError> {
    let errors = metrics.errors.clone().unwrap_or_default();
    let resource_metrics = match errors.get("resource") {
        Some(e) => Err(e.clone()),
        None => Ok(pod_resource_metrics(
            metrics.pod_resource_metrics.as_deref().unwrap_or_default(),
            "metrics.podResourceMetrics",
        )?),
    };
    let mut per_metric = Vec::with_capacity(autoscaler.metrics.len());
    for m in &autoscaler.metrics {
        let failed = |key: String| errors.get(&key).cloned().map(MetricData::Failed);
        let data = match &m.source {
            MetricSource::Resource { .. } | MetricSource::Unknown { .. } => MetricData::None,
            MetricSource::Pods { metric } => match failed(format!("pods/{}", metric.name)) {
                Some(f) => f,
                None => {
                    let list = metrics
                        .pod_custom_metrics
                        .as_ref()
                        .and_then(|m| m.get(&metric.name));
                    let path = format!("metrics.podCustomMetrics.{}", metric.name);
                    MetricData::PodValues(pod_custom_metrics(
                        list.map(Vec::as_slice).unwrap_or_default(),
                        &path,
                    )?)
                }
            },
            MetricSource::Object {
                metric,
                described_object,
            } => match failed(format!("object/{}", metric.name)) {
                Some(f) => f,
                None => {
                    let found =
                        metrics
                            .object_metrics
                            .iter()
                            .flatten()
                            .enumerate()
                            .find(|(_, o)| {
                                o.metric_name == metric.name
                                    && o.object_name == described_object.name
                            });
                    match found {
                        Some((i, o)) => MetricData::Object(ValueSample {
                            value: milli(&o.value, || format!("metrics.objectMetrics[{i}].value"))?,
                            timestamp: o.timestamp,
                        }),
                        None => MetricData::Values(Vec::new()),
                    }
                }
            },
            MetricSource::External { metric } => {
                match failed(format!("external/{}", metric.name)) {
                    Some(f) => f,
                    None => {
                        let list = metrics
                            .external_metrics
                            .as_ref()
                            .and_then(|m| m.get(&metric.name));
                        let path = format!("metrics.externalMetrics.{}", metric.name);
                        MetricData::Values(values(
                            list.map(Vec::as_slice).unwrap_or_default(),
                            &path,
                        )?)
                    }
                }
            }
            MetricSource::Prometheus { name, .. } => match failed(format!("prometheus/{name}")) {
                Some(f) => f,
                None => {
                    let list = metrics
                        .prometheus_metrics
                        .as_ref()
                        .and_then(|m| m.get(name));
                    let path = format!("metrics.prometheusMetrics.{name}");
                    MetricData::Values(values(list.map(Vec::as_slice).unwrap_or_default(), &path)?)
                }
            },
        };
        per_metric.push(data);
    }
    Ok(Observation {
        scale: scale.to_scale(),
        pods: pods(pod_list, "pods")?,
        resource_metrics,
        metrics: per_metric,
        conflicts: Vec::new(),
        forecasts: Vec::new(),
    })
}
