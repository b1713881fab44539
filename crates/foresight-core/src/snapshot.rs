//! The JSON shapes in which observations are written down: snapshot files for
//! `foresight explain`, the conformance cases, and the simulator's recordings. They follow
//! the Kubernetes objects they stand for (pods, PodMetrics, custom and external metric
//! values) and are converted here into the decision's types.

use std::collections::BTreeMap;

use foresight_api::import::{spec_from_hpa, status_from_hpa};
use foresight_api::manifest::{classify, missing_required, Document};
use foresight_api::quantity::Quantity;
use foresight_api::status::{
    ConditionStatus, EffectiveHorizontalPodAutoscalerStatus, ScalingHistory,
};
use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::autoscaler::{Autoscaler, ControllerConfig, Metric, MetricSource};
use crate::decision::{MetricObservation, Observation};
use crate::forecasting::ForecastInput;
use crate::formula::InputSource;
use crate::metrics::{ContainerUsage, MetricData, PodResourceSample, PodValueSample, ValueSample};
use crate::pods::{Container, Pod, PodPhase, ReadyCondition};
use crate::prediction::{Algorithm, Forecast};
use crate::proposals::Scale;
use crate::resources::ResourceList;
use crate::time::GO_ZERO_TIME;
use crate::version::KubernetesVersion;

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
    /// `restartPolicy`: `Always` makes an init container a sidecar.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_policy: Option<String>,
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
    /// Init containers: those with `restartPolicy: Always` (sidecars) count in the pod's
    /// request from Kubernetes 1.29; the others never do.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub init_containers: Vec<ContainerJson>,
    /// Pod-level `spec.resources.requests`: what Kubernetes 1.34+ measures the pod against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<BTreeMap<String, Quantity>>,
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

/// A resource amount (a request, a usage): the API server and metrics-server never report
/// one below 0, and a value past what a milli-value holds (about 9.2e15 cores) is no
/// machine's; either would make the decision's arithmetic a confident wrong answer.
fn amount(q: &Quantity, path: impl Fn() -> String) -> Result<i64, SnapshotError> {
    let value = milli(q, &path)?;
    if value < 0 {
        return Err(SnapshotError {
            path: path(),
            message: format!("Invalid value: {:?}: must be 0 or more", q.0),
        });
    }
    if value == i64::MAX {
        return Err(SnapshotError {
            path: path(),
            message: format!(
                "Invalid value: {:?}: too large: a resource amount must be below {}",
                q.0,
                foresight_api::quantity::format_milli(i64::MAX)
            ),
        });
    }
    Ok(value)
}

/// A sample window: 0 or more seconds.
fn window(seconds: i64, path: impl FnOnce() -> String) -> Result<SignedDuration, SnapshotError> {
    if seconds < 0 {
        return Err(SnapshotError {
            path: path(),
            message: format!("Invalid value: {seconds}: must be 0 or more seconds"),
        });
    }
    Ok(SignedDuration::from_secs(seconds))
}

impl PodJson {
    /// The pod as the decision sees it.
    pub fn to_pod(&self, path: &str) -> Result<Pod, SnapshotError> {
        let mut containers = Vec::with_capacity(self.containers.len());
        for (i, c) in self.containers.iter().enumerate() {
            containers.push(Container {
                name: c.name.clone(),
                requests: resource_list(c.requests.as_ref(), || {
                    format!("{path}.containers[{i}].requests")
                })?,
            });
        }
        let mut sidecars = Vec::new();
        for (i, c) in self.init_containers.iter().enumerate() {
            if c.restart_policy.as_deref() != Some("Always") {
                continue;
            }
            sidecars.push(Container {
                name: c.name.clone(),
                requests: resource_list(c.requests.as_ref(), || {
                    format!("{path}.initContainers[{i}].requests")
                })?,
            });
        }
        let pod_requests = match &self.requests {
            None => None,
            Some(r) => Some(resource_list(Some(r), || format!("{path}.requests"))?),
        };
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
            sidecars,
            pod_requests,
        })
    }
}

/// Requests by resource, in thousandths; `at` names the list in errors.
fn resource_list(
    requests: Option<&BTreeMap<String, Quantity>>,
    at: impl Fn() -> String,
) -> Result<ResourceList, SnapshotError> {
    let mut list = ResourceList::default();
    for (r, q) in requests.into_iter().flatten() {
        list.set(r, amount(q, || format!("{}.{r}", at()))?);
    }
    Ok(list)
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
            let mut usage = ResourceList::default();
            for (r, q) in &c.usage {
                usage.set(
                    r,
                    amount(q, || format!("{path}[{i}].containers[{j}].usage.{r}"))?,
                );
            }
            containers.push(ContainerUsage {
                name: c.name.clone(),
                usage,
            });
        }
        out.push(PodResourceSample {
            pod: m.pod.clone(),
            timestamp: m.timestamp,
            window: window(m.window_seconds.unwrap_or(0), || {
                format!("{path}[{i}].windowSeconds")
            })?,
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
                window: m
                    .window_seconds
                    .map(|w| window(w, || format!("{path}[{i}].windowSeconds")))
                    .transpose()?,
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

/// One metric's data from a snapshot: the error recorded for it, or its values.
fn metric_data(
    m: &Metric,
    metrics: &MetricsJson,
    errors: &BTreeMap<String, String>,
) -> Result<MetricData, SnapshotError> {
    let failed = |key: String| errors.get(&key).cloned().map(MetricData::Failed);
    Ok(match &m.source {
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
                let found = metrics
                    .object_metrics
                    .iter()
                    .flatten()
                    .enumerate()
                    .find(|(_, o)| {
                        o.metric_name == metric.name && o.object_name == described_object.name
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
        MetricSource::External { metric } => total_values(
            metrics.external_metrics.as_ref(),
            errors,
            "external",
            &metric.name,
        )?,
        MetricSource::Prometheus { name, .. } => total_values(
            metrics.prometheus_metrics.as_ref(),
            errors,
            "prometheus",
            name,
        )?,
        // Each input as the metric of its kind would be recorded: an External input under
        // its metric's name, a Prometheus input under the input's name.
        MetricSource::Formula { formula, .. } => {
            let mut inputs = Vec::with_capacity(formula.inputs.len());
            for input in &formula.inputs {
                inputs.push(match &input.source {
                    InputSource::External { metric } => total_values(
                        metrics.external_metrics.as_ref(),
                        errors,
                        "external",
                        &metric.name,
                    )?,
                    InputSource::Prometheus { .. } => total_values(
                        metrics.prometheus_metrics.as_ref(),
                        errors,
                        "prometheus",
                        &input.name,
                    )?,
                });
            }
            MetricData::Inputs(inputs)
        }
    })
}

/// The values recorded under `name` in an External or Prometheus map (`api` is `external` or
/// `prometheus`), or the error recorded as `api/name`.
fn total_values(
    recorded: Option<&BTreeMap<String, Vec<ValueJson>>>,
    errors: &BTreeMap<String, String>,
    api: &str,
    name: &str,
) -> Result<MetricData, SnapshotError> {
    if let Some(e) = errors.get(&format!("{api}/{name}")) {
        return Ok(MetricData::Failed(e.clone()));
    }
    let list = recorded.and_then(|m| m.get(name));
    let path = format!("metrics.{api}Metrics.{name}");
    Ok(MetricData::Values(values(
        list.map(Vec::as_slice).unwrap_or_default(),
        &path,
    )?))
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
    let per_metric = autoscaler
        .metrics
        .iter()
        .map(|m| metric_data(m, metrics, &errors).map(MetricObservation::from))
        .collect::<Result<Vec<_>, _>>()?;
    let mut observation = Observation {
        scale: scale.to_scale(),
        pods: pods(pod_list, "pods")?,
        resource_metrics,
        metrics: per_metric,
        ..Default::default()
    };
    observation.parse_selector();
    Ok(observation)
}

/// A forecast as written in a snapshot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ForecastJson {
    /// The predictor had no forecast yet, for this reason.
    NotReady(String),
    /// Reading the history failed with this error.
    Failed(String),
    /// A forecast series.
    #[serde(rename_all = "camelCase")]
    Ready {
        /// `dsp` or `percentile`.
        algorithm: String,
        /// The detected period, seconds.
        #[serde(default)]
        period_seconds: Option<i64>,
        /// Unix seconds of the first value.
        start: i64,
        /// Seconds between values.
        step: i64,
        /// Values, in the metric's unit.
        values: Vec<f64>,
        /// The estimator that produced them.
        #[serde(default)]
        estimator: String,
    },
}

impl ForecastJson {
    /// The forecast as the decision takes it.
    pub fn to_input(&self) -> ForecastInput {
        match self {
            ForecastJson::NotReady(r) => ForecastInput::NotReady(r.clone()),
            ForecastJson::Failed(e) => ForecastInput::Failed(e.clone()),
            ForecastJson::Ready {
                algorithm,
                period_seconds,
                start,
                step,
                values,
                estimator,
            } => ForecastInput::Ready(Forecast {
                algorithm: if algorithm == "percentile" {
                    Algorithm::Percentile
                } else {
                    Algorithm::Dsp
                },
                period_seconds: *period_seconds,
                start: *start,
                step: *step,
                values: values.clone(),
                estimator: estimator.clone(),
            }),
        }
    }
}

/// Controller defaults in a snapshot (Kubernetes' flag values when absent).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigJson {
    /// Tolerance.
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// CPU initialization period, seconds.
    #[serde(default)]
    pub cpu_initialization_period_seconds: Option<i64>,
    /// Initial readiness delay, seconds.
    #[serde(default, alias = "delayOfInitialReadinessStatusSeconds")]
    pub initial_readiness_delay_seconds: Option<i64>,
    /// Downscale stabilization, seconds.
    #[serde(default)]
    pub downscale_stabilization_window_seconds: Option<i64>,
    /// The zone `timezone: Local` means.
    #[serde(default)]
    pub local_time_zone: Option<String>,
    /// The Kubernetes release to decide as (`1.28` … `1.37`; the newest when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes: Option<KubernetesVersion>,
}

impl ConfigJson {
    /// The controller configuration.
    pub fn to_config(&self) -> Result<ControllerConfig, SnapshotError> {
        let d = ControllerConfig::default();
        let local_time_zone = match &self.local_time_zone {
            None => d.local_time_zone.clone(),
            Some(name) => jiff::tz::TimeZone::get(name).map_err(|e| SnapshotError {
                path: "config.localTimeZone".to_owned(),
                message: e.to_string(),
            })?,
        };
        Ok(ControllerConfig {
            tolerance: self.tolerance.unwrap_or(d.tolerance),
            cpu_initialization_period_seconds: self
                .cpu_initialization_period_seconds
                .unwrap_or(d.cpu_initialization_period_seconds),
            initial_readiness_delay_seconds: self
                .initial_readiness_delay_seconds
                .unwrap_or(d.initial_readiness_delay_seconds),
            downscale_stabilization_seconds: self
                .downscale_stabilization_window_seconds
                .unwrap_or(d.downscale_stabilization_seconds),
            local_time_zone,
            kubernetes: self.kubernetes.unwrap_or(d.kubernetes),
            ..d
        })
    }
}

/// Everything one decision needs, written down: what `foresight explain` reads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    /// The frozen clock.
    pub now: Timestamp,
    /// The autoscaler: an EffectiveHorizontalPodAutoscaler or a native HPA manifest, with
    /// its current status.
    pub autoscaler: serde_json::Value,
    /// Controller defaults.
    #[serde(default)]
    pub config: ConfigJson,
    /// The target's scale.
    pub scale: ScaleJson,
    /// The pods the scale's selector matches.
    #[serde(default)]
    pub pods: Vec<PodJson>,
    /// What the metrics APIs returned.
    #[serde(default)]
    pub metrics: MetricsJson,
    /// Forecasts by metric identifier (`resource.cpu`, ...).
    #[serde(default)]
    pub forecasts: BTreeMap<String, ForecastJson>,
    /// The recorded recommendations and scale events.
    #[serde(default)]
    pub history: ScalingHistory,
}

/// A snapshot ready to decide.
pub struct Prepared {
    /// The compiled autoscaler.
    pub autoscaler: Autoscaler,
    /// The observation.
    pub observation: Observation,
    /// The autoscaler's current status.
    pub status: EffectiveHorizontalPodAutoscalerStatus,
}

impl Snapshot {
    /// Reads the manifest, validates and compiles it, and builds the observation, deciding as
    /// the Kubernetes release `config.kubernetes` names (the newest when it names none).
    pub fn prepare(&self) -> Result<Prepared, SnapshotError> {
        self.prepare_as(None)
    }

    /// As [`Snapshot::prepare`], deciding as `kubernetes` when given (overriding the
    /// snapshot's `config.kubernetes`).
    pub fn prepare_as(
        &self,
        kubernetes: Option<KubernetesVersion>,
    ) -> Result<Prepared, SnapshotError> {
        let err = |path: &str, message: String| SnapshotError {
            path: path.to_owned(),
            message,
        };
        let mut annotations = None;
        let (namespace, name, spec, status) =
            match classify(&self.autoscaler).map_err(|e| err("autoscaler", e.to_string()))? {
                Document::Foresight(e) => {
                    annotations = e.metadata.annotations;
                    (
                        e.metadata.namespace,
                        e.metadata.name,
                        e.spec,
                        e.status.unwrap_or_default(),
                    )
                }
                Document::Hpa(h) => (
                    h.metadata.namespace,
                    h.metadata.name,
                    spec_from_hpa(&h.spec),
                    h.status.as_ref().map(status_from_hpa).unwrap_or_default(),
                ),
                Document::Crane(_) => {
                    return Err(err(
                        "autoscaler",
                        "a Crane manifest: convert it with `foresight import` first".to_owned(),
                    ))
                }
                Document::Keda(_) => {
                    return Err(err(
                        "autoscaler",
                        "a KEDA ScaledObject: convert it with `foresight import` first".to_owned(),
                    ))
                }
                Document::Other { api_version, kind } => {
                    return Err(err(
                        "autoscaler",
                        format!("{api_version}/{kind} is not an autoscaler"),
                    ))
                }
            };
        // The API server never stores a negative count (the scale subresource rejects it).
        for (path, count) in [
            ("scale.specReplicas", self.scale.spec_replicas),
            ("scale.statusReplicas", self.scale.status_replicas),
        ] {
            if count < 0 {
                return Err(err(
                    path,
                    format!("Invalid value: {count}: must be greater than or equal to 0"),
                ));
            }
        }
        // Said once, as the API server says it, rather than as the invalid 0 it reads as.
        if let Some(missing) = missing_required(&self.autoscaler).first() {
            return Err(err("autoscaler", missing.to_string()));
        }
        let mut config = self.config.to_config()?;
        if let Some(v) = kubernetes {
            config.kubernetes = v;
        }
        let namespace = namespace.unwrap_or_else(|| "default".to_owned());
        let name = name.unwrap_or_default();
        let autoscaler = Autoscaler::new(&namespace, &name, &spec, &config).map_err(|errors| {
            let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
            err("autoscaler", text.join("; "))
        })?;
        let mut observation = observation(&autoscaler, &self.scale, &self.pods, &self.metrics)?;
        observation.pause = crate::pause::Pause::from_annotations(
            annotations
                .iter()
                .flatten()
                .map(|(k, v)| (k.as_str(), v.as_str())),
        );
        if autoscaler.prediction_window_seconds.is_some() {
            for (seen, metric) in observation.metrics.iter_mut().zip(&autoscaler.metrics) {
                if let Some(forecast) = self.forecasts.get(&metric.identifier()) {
                    seen.forecast = forecast.to_input();
                }
            }
        }
        Ok(Prepared {
            autoscaler,
            observation,
            status,
        })
    }
}
