//! Conversion of the manifests users already have into Foresight's spec.

use crate::hpa::{HorizontalPodAutoscalerSpec, HorizontalPodAutoscalerStatus};
use crate::spec::EffectiveHorizontalPodAutoscalerSpec;
use crate::status::EffectiveHorizontalPodAutoscalerStatus;

/// A native autoscaling/v2 HPA spec as a Foresight spec: every field carries over unchanged.
pub fn spec_from_hpa(hpa: &HorizontalPodAutoscalerSpec) -> EffectiveHorizontalPodAutoscalerSpec {
    EffectiveHorizontalPodAutoscalerSpec {
        scale_target_ref: hpa.scale_target_ref.clone(),
        min_replicas: hpa.min_replicas,
        max_replicas: hpa.max_replicas,
        metrics: hpa.metrics.clone().unwrap_or_default(),
        behavior: hpa.behavior.clone(),
        ..Default::default()
    }
}

/// A native HPA status as a Foresight status (the fields both have).
pub fn status_from_hpa(
    hpa: &HorizontalPodAutoscalerStatus,
) -> EffectiveHorizontalPodAutoscalerStatus {
    EffectiveHorizontalPodAutoscalerStatus {
        observed_generation: hpa.observed_generation,
        current_replicas: hpa.current_replicas,
        desired_replicas: Some(hpa.desired_replicas),
        expect_replicas: Some(hpa.desired_replicas),
        last_scale_time: hpa.last_scale_time,
        current_metrics: hpa.current_metrics.clone().unwrap_or_default(),
        conditions: hpa.conditions.clone().unwrap_or_default(),
        ..Default::default()
    }
}

// ---------------------------------------------------------------------------------------------
// `foresight import`: whole manifests (native HPAs and Crane EHPAs) into Foresight objects.
// ---------------------------------------------------------------------------------------------

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::cron::CronSpec;
use crate::hpa::{
    HorizontalPodAutoscaler, HorizontalPodAutoscalerBehavior, MetricSpec, ObjectMeta,
};
use crate::manifest::{classify, from_value, Document, ForesightObject};
use crate::prediction::{DspSpec, PercentileSpec, PredictionAlgorithm, PredictionSpec};
use crate::quantity::Quantity;
use crate::spec::ScaleStrategy;
use crate::validation::{validate_spec, FieldError};

/// The annotation prefix under which Crane keeps per-metric prediction queries.
pub const CRANE_METRIC_QUERY_PREFIX: &str = "metric-query.autoscaling.crane.io/";

/// Annotations that describe the source object's state rather than the user's intent; they
/// are not carried over.
const DROPPED_ANNOTATIONS: &[&str] = &[
    "kubectl.kubernetes.io/last-applied-configuration",
    "autoscaling.crane.io/effective-hpa-current-metrics",
];

/// One converted object, with what the user should know about it.
#[derive(Clone, Debug, PartialEq)]
pub struct Imported {
    /// The Foresight object.
    pub object: ForesightObject,
    /// Where the source behaves differently from the result, or what was dropped.
    pub notes: Vec<String>,
    /// What `validate_spec` rejects in the result, with field paths.
    pub problems: Vec<FieldError>,
}

/// Why a document could not be converted.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ImportError {
    /// The document is not an autoscaler this command converts.
    #[error("{api_version} {kind} is not a HorizontalPodAutoscaler, a Crane EffectiveHorizontalPodAutoscaler or a KEDA ScaledObject")]
    Unsupported {
        /// Its `apiVersion`.
        api_version: String,
        /// Its `kind`.
        kind: String,
    },
    /// A field does not have the type the source API gives it.
    #[error("{0}")]
    Field(FieldError),
}

/// How `import` shapes its result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImportOptions {
    /// Emit `scaleStrategy: Preview`: the object decides and records without scaling, beside
    /// the autoscaler it replaces, for a side-by-side comparison.
    pub preview: bool,
}

/// Converts one manifest document. Foresight objects pass through (and are validated).
pub fn import_document(
    value: &serde_json::Value,
    options: ImportOptions,
) -> Result<Imported, ImportError> {
    let document = classify(value).map_err(ImportError::Field)?;
    let kind = match document {
        Document::Keda(_) => Kind::Keda,
        _ => Kind::Other,
    };
    let mut imported = match document {
        Document::Hpa(hpa) => {
            let mut imported = import_hpa(&hpa);
            for unknown in crate::unknown_fields::in_spec_of(value) {
                imported.notes.push(format!(
                    "{} dropped: not a HorizontalPodAutoscaler field ({})",
                    unknown.field, unknown.detail
                ));
            }
            if !options.preview {
                imported.notes.push(hpa_coexistence_note(&hpa.metadata));
            }
            imported
        }
        Document::Crane(raw) => import_crane(&raw)?,
        Document::Keda(raw) => crate::keda::import_scaled_object(&raw)?,
        Document::Foresight(object) => finish(
            *object,
            vec!["already a Foresight object; passed through unchanged".to_owned()],
        ),
        Document::Other { api_version, kind } => {
            return Err(ImportError::Unsupported { api_version, kind })
        }
    };
    if options.preview {
        imported.object.spec.scale_strategy = Some(ScaleStrategy::Preview);
        imported.notes.push(
            "scaleStrategy: Preview: this object records its decisions in status (kubectl get fhpa, foresight explain) without scaling, so the autoscaler it replaces keeps running beside it; set Auto and delete that one when you trust it"
                .to_owned(),
        );
        imported.problems = validate_spec(&imported.object.spec);
    }
    if matches!(kind, Kind::Keda) {
        crate::keda::name_source_fields(&mut imported);
    }
    Ok(imported)
}

/// Which converter a document went to, for what is done after it.
enum Kind {
    Keda,
    Other,
}

/// A native autoscaling/v2 HPA (v1 and v2beta2 are read as v2).
pub fn import_hpa(hpa: &HorizontalPodAutoscaler) -> Imported {
    let object = ForesightObject::foresight(
        carried_metadata(&hpa.metadata, |_| false),
        spec_from_hpa(&hpa.spec),
    );
    finish(object, Vec::new())
}

fn hpa_coexistence_note(meta: &ObjectMeta) -> String {
    format!(
        "delete the HorizontalPodAutoscaler {} once this object is applied: two autoscalers on one target fight over its replicas",
        meta.name.as_deref().unwrap_or("(unnamed)")
    )
}

/// Whether a PromQL query keeps one series per pod (`by (pod)`, `by (namespace, pod)`):
/// a history query must return one series for the workload.
fn groups_by_pod(query: &str) -> bool {
    let mut rest = query;
    while let Some(at) = rest.find("by") {
        let after = rest[at + 2..].trim_start();
        let word_start = at == 0 || !rest.as_bytes()[at - 1].is_ascii_alphanumeric();
        if word_start && after.starts_with('(') {
            let labels = after[1..].split(')').next().unwrap_or_default();
            if labels
                .split(',')
                .any(|l| matches!(l.trim(), "pod" | "pod_name"))
            {
                return true;
            }
        }
        rest = &rest[at + 2..];
    }
    false
}

/// Crane's `spec`, as `gocrane/api` autoscaling/v1alpha1 defines it.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct CraneSpec {
    #[serde(default)]
    scale_target_ref: crate::hpa::CrossVersionObjectReference,
    #[serde(default)]
    min_replicas: Option<i32>,
    #[serde(default)]
    max_replicas: i32,
    #[serde(default)]
    scale_strategy: Option<String>,
    #[serde(default)]
    specific_replicas: Option<i32>,
    #[serde(default)]
    metrics: Option<Vec<MetricSpec>>,
    #[serde(default)]
    behavior: Option<HorizontalPodAutoscalerBehavior>,
    #[serde(default)]
    prediction: Option<CranePrediction>,
    #[serde(default)]
    crons: Option<Vec<CraneCron>>,
    #[serde(flatten)]
    other: BTreeMap<String, serde_json::Value>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct CranePrediction {
    #[serde(default)]
    prediction_window_seconds: Option<i32>,
    #[serde(default)]
    prediction_algorithm: Option<CraneAlgorithm>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct CraneAlgorithm {
    #[serde(default)]
    algorithm_type: String,
    #[serde(default)]
    dsp: Option<DspSpec>,
    #[serde(default)]
    percentile: Option<CranePercentile>,
}

/// Crane's percentile settings; all numbers are strings there.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct CranePercentile {
    #[serde(default)]
    sample_interval: Option<String>,
    #[serde(default)]
    history_length: Option<String>,
    #[serde(default)]
    percentile: Option<Quantity>,
    #[serde(default)]
    margin_fraction: Option<Quantity>,
    #[serde(default)]
    target_utilization: Option<Quantity>,
    #[serde(flatten)]
    other: BTreeMap<String, serde_json::Value>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct CraneCron {
    #[serde(default)]
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    timezone: Option<String>,
    #[serde(default)]
    start: String,
    #[serde(default)]
    end: String,
    #[serde(default)]
    target_replicas: i32,
}

#[derive(Deserialize)]
struct CraneObject {
    #[serde(default)]
    metadata: ObjectMeta,
    #[serde(default)]
    spec: CraneSpec,
}

/// A Crane `autoscaling.crane.io/v1alpha1` EffectiveHorizontalPodAutoscaler.
pub fn import_crane(value: &serde_json::Value) -> Result<Imported, ImportError> {
    let crane: CraneObject = from_value(value, "").map_err(ImportError::Field)?;
    let mut notes = Vec::new();
    let spec = crane.spec;
    for key in spec.other.keys() {
        notes.push(format!(
            "spec.{key} is not a Crane EffectiveHorizontalPodAutoscaler field; dropped"
        ));
    }
    let metrics = spec.metrics.unwrap_or_default();

    let scale_strategy = match spec.scale_strategy.as_deref() {
        None => None,
        Some("Auto") => Some(ScaleStrategy::Auto),
        Some("Preview") => Some(ScaleStrategy::Preview),
        Some(other) => {
            notes.push(format!(
                "spec.scaleStrategy {other:?} is neither Auto nor Preview; Crane's schema rejects it, so Auto is assumed"
            ));
            Some(ScaleStrategy::Auto)
        }
    };
    let mut specific_replicas = spec.specific_replicas;
    if specific_replicas.is_some() && scale_strategy != Some(ScaleStrategy::Preview) {
        notes.push(
            "spec.specificReplicas dropped: Crane ignores it outside Preview, Foresight rejects it there"
                .to_owned(),
        );
        specific_replicas = None;
    }
    if let Some(n) = specific_replicas {
        notes.push(format!(
            "Preview holds the workload at specificReplicas {n} without clamping to min/max, as Crane does"
        ));
    }

    let prediction = convert_prediction(spec.prediction, &crane.metadata, &metrics, &mut notes);
    let crons = spec
        .crons
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, c)| convert_cron(i, c, &mut notes))
        .collect::<Vec<_>>();
    if !crons.is_empty() {
        if metrics.is_empty() {
            notes.push(
                "outside every cron window Crane (v0.10+) drives a crons-only object to minReplicas; Foresight keeps the current replicas (as Crane documents)"
                    .to_owned(),
            );
        }
        notes.push(
            "cron targets are applied exactly; Crane passed them through the HPA's 10% tolerance"
                .to_owned(),
        );
    }

    let object = ForesightObject::foresight(
        carried_metadata(&crane.metadata, |k| {
            k.starts_with(CRANE_METRIC_QUERY_PREFIX)
        }),
        crate::spec::EffectiveHorizontalPodAutoscalerSpec {
            scale_target_ref: spec.scale_target_ref,
            min_replicas: spec.min_replicas,
            max_replicas: spec.max_replicas,
            scale_strategy,
            specific_replicas,
            metrics,
            behavior: spec.behavior,
            prediction,
            crons,
            ..Default::default()
        },
    );
    let mut imported = finish(object, notes);
    if imported.problems.iter().any(|p| {
        p.field
            .starts_with("spec.prediction.predictionAlgorithm.dsp")
    }) {
        imported.notes.push(
            "Crane silently replaced invalid dsp settings with its defaults (1m, 15d); Foresight rejects them: fix them or remove them to get the same defaults"
                .to_owned(),
        );
    }
    Ok(imported)
}

/// Crane's prediction block, and its `metric-query` annotations as `historyQueries`.
fn convert_prediction(
    prediction: Option<CranePrediction>,
    meta: &ObjectMeta,
    metrics: &[MetricSpec],
    notes: &mut Vec<String>,
) -> Option<PredictionSpec> {
    let queries: Vec<(&str, &str)> = meta
        .annotations
        .iter()
        .flatten()
        .filter_map(|(k, v)| {
            k.strip_prefix(CRANE_METRIC_QUERY_PREFIX)
                .map(|id| (id, v.as_str()))
        })
        .collect();
    let Some(p) = prediction else {
        if !queries.is_empty() {
            notes.push(format!(
                "{CRANE_METRIC_QUERY_PREFIX}* annotations dropped: prediction is off"
            ));
        }
        return None;
    };
    // Crane predicts only when both the window and the algorithm are set; the CRD defaults
    // the window, so in practice the algorithm decides.
    let Some(alg) = p.prediction_algorithm else {
        notes.push(
            "spec.prediction dropped: without predictionAlgorithm Crane never predicts".to_owned(),
        );
        return None;
    };
    if !crate::prediction::ALGORITHMS.contains(&alg.algorithm_type.as_str()) {
        notes.push(format!(
            "algorithmType {:?}: Crane silently never predicts with it; Foresight rejects it",
            alg.algorithm_type
        ));
    }
    let percentile = alg.percentile.map(|pc| {
        for key in pc.other.keys() {
            notes.push(format!(
                "spec.prediction.predictionAlgorithm.percentile.{key} dropped: Foresight's percentile predictor has no such setting"
            ));
        }
        PercentileSpec {
            sample_interval: pc.sample_interval,
            history_length: pc.history_length,
            percentile: pc.percentile,
            margin_fraction: pc.margin_fraction,
            target_utilization: pc.target_utilization,
        }
    });
    if metrics
        .iter()
        .any(|m| m.type_ == "Resource" || m.type_ == "ContainerResource")
    {
        notes.push(
            "forecasts are compared in thousandths: Crane truncated predicted CPU to whole cores, so workloads under one core now get a prediction"
                .to_owned(),
        );
    }
    if metrics.iter().any(|m| m.type_ == "Object") {
        notes.push(
            "Object metrics have no default history query (Crane never predicts them); add one under spec.prediction.historyQueries to predict them"
                .to_owned(),
        );
    }
    let mut history_queries = BTreeMap::new();
    for (id, query) in queries {
        if groups_by_pod(query) {
            notes.push(format!(
                "the history query of {id} keeps one series per pod (`by (pod)`); Foresight needs one series for the workload, so sum over the pods (e.g. `sum(...)` without `pod`) before applying"
            ));
        }
        for key in history_query_keys(id, metrics, notes) {
            history_queries.insert(key, query.to_owned());
        }
    }
    Some(PredictionSpec {
        prediction_window_seconds: p.prediction_window_seconds,
        prediction_algorithm: Some(PredictionAlgorithm {
            algorithm_type: alg.algorithm_type,
            dsp: alg.dsp,
            percentile,
        }),
        history_queries: (!history_queries.is_empty()).then_some(history_queries),
        // Crane scales for the peak of the whole window, with no learned headroom and no
        // replay of its own history; an imported manifest keeps doing so until its owner
        // chooses otherwise.
        horizon: Some("Window".to_owned()),
        headroom: Some(crate::prediction::HeadroomSpec {
            enabled: Some(false),
            ..Default::default()
        }),
        self_evaluation: Some(false),
        ..Default::default()
    })
}

/// Foresight's metric identifiers for a Crane `metric-query` identifier. They agree except
/// for ContainerResource, where Crane leaves the container out (`container-resource.cpu`)
/// and Foresight names it (`container-resource.<container>.cpu`).
fn history_query_keys(id: &str, metrics: &[MetricSpec], notes: &mut Vec<String>) -> Vec<String> {
    let Some((kind, name)) = id.split_once('.') else {
        notes.push(format!(
            "annotation {CRANE_METRIC_QUERY_PREFIX}{id} dropped: Crane only reads keys of the form <type>.<metric>"
        ));
        return Vec::new();
    };
    match kind {
        "resource" | "pods" | "external" => vec![id.to_owned()],
        "container-resource" => {
            let keys: Vec<String> = metrics
                .iter()
                .filter_map(|m| m.container_resource.as_ref())
                .filter(|c| c.name == name)
                .map(|c| format!("container-resource.{}.{name}", c.container))
                .collect();
            if keys.is_empty() {
                notes.push(format!(
                    "annotation {CRANE_METRIC_QUERY_PREFIX}{id} dropped: no ContainerResource {name} metric"
                ));
            } else if keys.len() > 1 {
                notes.push(format!(
                    "annotation {CRANE_METRIC_QUERY_PREFIX}{id} applied to every container ({}); Crane could not tell them apart",
                    keys.join(", ")
                ));
            }
            keys
        }
        _ => {
            notes.push(format!(
                "annotation {CRANE_METRIC_QUERY_PREFIX}{id} dropped: Crane predicts no {kind} metrics"
            ));
            Vec::new()
        }
    }
}

/// One Crane cron. Crane reads an unset zone as its controller's local zone, an empty one as
/// UTC, and lets a `TZ=`/`CRON_TZ=` prefix in the expression override both.
fn convert_cron(index: usize, cron: CraneCron, notes: &mut Vec<String>) -> CronSpec {
    let path = format!("spec.crons[{index}]");
    let (start_zone, start) = split_zone_prefix(&cron.start);
    let (end_zone, end) = split_zone_prefix(&cron.end);
    let prefix_zone = match (start_zone, end_zone) {
        (Some(a), Some(b)) if a != b => {
            notes.push(format!(
                "{path}: start and end carry different TZ= prefixes ({a}, {b}); Foresight has one zone per cron, {a} is used"
            ));
            Some(a)
        }
        (Some(a), _) | (None, Some(a)) => Some(a),
        (None, None) => None,
    };
    let timezone = match (prefix_zone, cron.timezone.as_deref()) {
        (Some(z), _) => {
            notes.push(format!("{path}: the TZ= prefix became timezone: {z}"));
            Some(z.to_owned())
        }
        (None, None) => {
            notes.push(format!(
                "{path}: no timezone: Crane used its controller's local zone, Foresight defaults to UTC; set to Local (the Foresight controller's zone) to keep Crane's meaning, or better an IANA zone"
            ));
            Some("Local".to_owned())
        }
        (None, Some("")) => Some("UTC".to_owned()),
        (None, Some(z)) => Some(z.to_owned()),
    };
    if start == end {
        notes.push(format!(
            "{path}: start equals end, which Crane treats as always active; Foresight rejects it"
        ));
    }
    for (field, expr) in [("start", start), ("end", end)] {
        if expr.starts_with('@') {
            notes.push(format!(
                "{path}.{field}: {expr:?} is a robfig descriptor; Foresight takes 5-field schedules only"
            ));
        }
    }
    CronSpec {
        name: cron.name,
        description: cron.description,
        timezone,
        start: start.to_owned(),
        end: end.to_owned(),
        target_replicas: cron.target_replicas,
    }
}

/// `TZ=Area/City 0 6 * * *` → (`Some("Area/City")`, `0 6 * * *`).
fn split_zone_prefix(expr: &str) -> (Option<&str>, &str) {
    let trimmed = expr.trim();
    for prefix in ["CRON_TZ=", "TZ="] {
        if let Some(rest) = trimmed.strip_prefix(prefix) {
            if let Some((zone, schedule)) = rest.split_once(char::is_whitespace) {
                return (Some(zone), schedule.trim_start());
            }
        }
    }
    (None, trimmed)
}

/// The metadata a new object should carry: name, namespace, labels and the user's
/// annotations; never server-set fields (uid, resourceVersion, managedFields, ...).
pub(crate) fn carried_metadata(
    meta: &ObjectMeta,
    drop_annotation: impl Fn(&str) -> bool,
) -> ObjectMeta {
    let annotations: BTreeMap<String, String> = meta
        .annotations
        .iter()
        .flatten()
        .filter(|(k, _)| !DROPPED_ANNOTATIONS.contains(&k.as_str()) && !drop_annotation(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    ObjectMeta {
        name: meta.name.clone(),
        namespace: meta.namespace.clone(),
        labels: meta.labels.clone().filter(|l| !l.is_empty()),
        annotations: (!annotations.is_empty()).then_some(annotations),
        other: BTreeMap::new(),
    }
}

pub(crate) fn finish(object: ForesightObject, notes: Vec<String>) -> Imported {
    let problems = validate_spec(&object.spec);
    Imported {
        object,
        notes,
        problems,
    }
}

/// The converted object as a YAML document, preceded by its notes as `#` comments.
pub fn render(imported: &Imported) -> Result<String, serde_saphyr::SerializeError> {
    let mut out = String::new();
    for note in &imported.notes {
        out.push_str("# note: ");
        out.push_str(&note.replace('\n', " "));
        out.push('\n');
    }
    out.push_str(&serde_saphyr::to_string(&imported.object)?);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod import_tests {
    use super::*;

    /// Converts the single document of `yaml`.
    fn convert(yaml: &str) -> Imported {
        let docs = crate::manifest::parse_documents(yaml).unwrap();
        assert_eq!(docs.len(), 1);
        import_document(&docs[0], ImportOptions::default()).unwrap()
    }

    /// Source manifest → exact output (notes as comments, then the object).
    const CASES: &[(&str, &str, &str)] = &[
        (
            "native autoscaling/v2 HPA: every field carries over, server fields are dropped",
            r#"
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
  namespace: shop
  uid: 0b7c
  resourceVersion: "12"
  labels: {app: web}
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: "{}"
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 20
  metrics:
  - type: Pods
    pods:
      metric: {name: http_requests}
      target: {type: AverageValue, averageValue: 100}
  behavior:
    scaleUp:
      policies: [{type: Pods, value: 4, periodSeconds: 60}]
status:
  desiredReplicas: 3
"#,
            r#"# note: delete the HorizontalPodAutoscaler web once this object is applied: two autoscalers on one target fight over its replicas
apiVersion: autoscaling.foresight.dev/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata:
  name: web
  namespace: shop
  labels:
    app: web
spec:
  scaleTargetRef:
    kind: Deployment
    name: web
    apiVersion: apps/v1
  minReplicas: 2
  maxReplicas: 20
  metrics:
  - type: Pods
    pods:
      metric:
        name: http_requests
      target:
        type: AverageValue
        averageValue: "100"
  behavior:
    scaleUp:
      policies:
      - type: Pods
        value: 4
        periodSeconds: 60
"#,
        ),
        (
            "autoscaling/v1 HPA: targetCPUUtilizationPercentage becomes a CPU metric",
            r#"
apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata: {name: api}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: StatefulSet, name: api}
  maxReplicas: 5
  targetCPUUtilizationPercentage: 70
"#,
            r#"# note: delete the HorizontalPodAutoscaler api once this object is applied: two autoscalers on one target fight over its replicas
apiVersion: autoscaling.foresight.dev/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata:
  name: api
spec:
  scaleTargetRef:
    kind: StatefulSet
    name: api
    apiVersion: apps/v1
  maxReplicas: 5
  metrics:
  - type: Resource
    resource:
      name: cpu
      target:
        type: Utilization
        averageUtilization: 70
"#,
        ),
        (
            "Crane EHPA: all fields, metric-query annotation, zone-less cron",
            r#"
apiVersion: autoscaling.crane.io/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata:
  name: php-apache
  namespace: default
  uid: 1234
  annotations:
    metric-query.autoscaling.crane.io/resource.cpu: "sum(rate(container_cpu_usage_seconds_total{pod=~\"php-apache-.*\"}[5m]))"
    autoscaling.crane.io/effective-hpa-current-metrics: "[]"
    team: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: php-apache}
  minReplicas: 1
  maxReplicas: 10
  scaleStrategy: Auto
  metrics:
  - type: Resource
    resource:
      name: cpu
      target: {type: Utilization, averageUtilization: 50}
  behavior:
    scaleDown: {stabilizationWindowSeconds: 600}
  prediction:
    predictionWindowSeconds: 3600
    predictionAlgorithm:
      algorithmType: dsp
      dsp:
        sampleInterval: "60s"
        historyLength: "3d"
        estimators:
          fft:
          - {marginFraction: "0.2", lowAmplitudeThreshold: "1.0", highFrequencyThreshold: "0.05", minNumOfSpectrumItems: 10, maxNumOfSpectrumItems: 20}
  crons:
  - name: cron1
    description: "scale up in the morning"
    start: "0 6 ? * *"
    end: "0 9 ? * *"
    targetReplicas: 5
status:
  expectReplicas: 3
"#,
            r#"# note: forecasts are compared in thousandths: Crane truncated predicted CPU to whole cores, so workloads under one core now get a prediction
# note: spec.crons[0]: no timezone: Crane used its controller's local zone, Foresight defaults to UTC; set to Local (the Foresight controller's zone) to keep Crane's meaning, or better an IANA zone
# note: cron targets are applied exactly; Crane passed them through the HPA's 10% tolerance
apiVersion: autoscaling.foresight.dev/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata:
  name: php-apache
  namespace: default
  annotations:
    team: web
spec:
  scaleTargetRef:
    kind: Deployment
    name: php-apache
    apiVersion: apps/v1
  minReplicas: 1
  maxReplicas: 10
  scaleStrategy: Auto
  metrics:
  - type: Resource
    resource:
      name: cpu
      target:
        type: Utilization
        averageUtilization: 50
  behavior:
    scaleDown:
      stabilizationWindowSeconds: 600
  prediction:
    predictionWindowSeconds: 3600
    predictionAlgorithm:
      algorithmType: dsp
      dsp:
        sampleInterval: 60s
        historyLength: 3d
        estimators:
          fft:
          - marginFraction: "0.2"
            lowAmplitudeThreshold: "1.0"
            highFrequencyThreshold: "0.05"
            minNumOfSpectrumItems: 10
            maxNumOfSpectrumItems: 20
    historyQueries:
      resource.cpu: sum(rate(container_cpu_usage_seconds_total{pod=~"php-apache-.*"}[5m]))
    horizon: Window
    headroom:
      enabled: false
    selfEvaluation: false
  crons:
  - name: cron1
    description: scale up in the morning
    timezone: Local
    start: 0 6 ? * *
    end: 0 9 ? * *
    targetReplicas: 5
"#,
        ),
        (
            "Crane EHPA: crons only, Preview with specificReplicas, TZ= prefix and an empty zone",
            r#"
apiVersion: autoscaling.crane.io/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata: {name: batch, namespace: jobs}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: batch}
  maxReplicas: 50
  scaleStrategy: Preview
  specificReplicas: 3
  crons:
  - {name: tokyo, start: "CRON_TZ=Asia/Tokyo 0 9 * * 1-5", end: "CRON_TZ=Asia/Tokyo 0 18 * * 1-5", targetReplicas: 20}
  - {name: utc, timezone: "", start: "0 1 * * *", end: "0 2 * * *", targetReplicas: 10}
"#,
            r#"# note: Preview holds the workload at specificReplicas 3 without clamping to min/max, as Crane does
# note: spec.crons[0]: the TZ= prefix became timezone: Asia/Tokyo
# note: outside every cron window Crane (v0.10+) drives a crons-only object to minReplicas; Foresight keeps the current replicas (as Crane documents)
# note: cron targets are applied exactly; Crane passed them through the HPA's 10% tolerance
apiVersion: autoscaling.foresight.dev/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata:
  name: batch
  namespace: jobs
spec:
  scaleTargetRef:
    kind: Deployment
    name: batch
    apiVersion: apps/v1
  maxReplicas: 50
  scaleStrategy: Preview
  specificReplicas: 3
  crons:
  - name: tokyo
    timezone: Asia/Tokyo
    start: 0 9 * * 1-5
    end: 0 18 * * 1-5
    targetReplicas: 20
  - name: utc
    timezone: UTC
    start: 0 1 * * *
    end: 0 2 * * *
    targetReplicas: 10
"#,
        ),
    ];

    #[test]
    fn converts_each_manifest_exactly() {
        for (name, source, expected) in CASES {
            let imported = convert(source);
            assert_eq!(imported.problems, vec![], "{name}");
            let out = render(&imported).unwrap();
            assert_eq!(out, *expected, "{name}\n--- got:\n{out}");
            // The output reads back as the same Foresight object.
            let back = crate::manifest::parse_documents(&out).unwrap();
            match crate::manifest::classify(&back[0]).unwrap() {
                Document::Foresight(o) => assert_eq!(*o, imported.object, "{name}"),
                other => panic!("{name}: read back as {other:?}"),
            }
        }
    }

    #[test]
    fn crane_quirks_become_notes() {
        let imported = convert(
            r#"
apiVersion: autoscaling.crane.io/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata:
  name: w
  annotations:
    metric-query.autoscaling.crane.io/container-resource.cpu: "sum(x)"
    metric-query.autoscaling.crane.io/object.hits: "sum(y)"
    metric-query.autoscaling.crane.io/requests: "sum(z)"
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: w}
  maxReplicas: 4
  specificReplicas: 2
  replicas: 3
  metrics:
  - type: ContainerResource
    containerResource: {name: cpu, container: app, target: {type: Utilization, averageUtilization: 60}}
  prediction:
    predictionAlgorithm:
      algorithmType: percentile
      percentile: {percentile: "0.95", aggregated: true, histogram: {halfLife: 24h}}
  crons:
  - {name: same, timezone: Europe/Paris, start: "0 6 * * *", end: "0 6 * * *", targetReplicas: 2}
  - {name: daily, timezone: UTC, start: "@daily", end: "0 1 * * *", targetReplicas: 2}
"#,
        );
        let spec = &imported.object.spec;
        assert_eq!(spec.specific_replicas, None);
        let p = spec.prediction.as_ref().unwrap();
        assert_eq!(
            p.history_queries,
            Some([("container-resource.app.cpu".to_owned(), "sum(x)".to_owned())].into())
        );
        let percentile = p
            .prediction_algorithm
            .as_ref()
            .unwrap()
            .percentile
            .as_ref()
            .unwrap();
        assert_eq!(percentile.percentile.as_ref().unwrap().to_string(), "0.95");
        assert_eq!(imported.object.metadata.annotations, None);
        let notes = imported.notes.join("\n");
        for expected in [
            "spec.replicas is not a Crane EffectiveHorizontalPodAutoscaler field; dropped",
            "spec.specificReplicas dropped",
            "percentile.aggregated dropped",
            "percentile.histogram dropped",
            "metric-query.autoscaling.crane.io/object.hits dropped: Crane predicts no object metrics",
            "metric-query.autoscaling.crane.io/requests dropped: Crane only reads keys of the form",
            "spec.crons[0]: start equals end",
            "spec.crons[1].start: \"@daily\" is a robfig descriptor",
        ] {
            assert!(notes.contains(expected), "missing {expected:?} in:\n{notes}");
        }
    }

    #[test]
    fn invalid_results_are_reported_with_field_paths() {
        let imported = convert(
            r#"
apiVersion: autoscaling.crane.io/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata: {name: w}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: w}
  minReplicas: 5
  maxReplicas: 2
  prediction:
    predictionAlgorithm:
      algorithmType: dsp
      dsp: {historyLength: 1d}
"#,
        );
        let fields: Vec<&str> = imported.problems.iter().map(|p| p.field.as_str()).collect();
        assert!(fields.contains(&"spec.maxReplicas"), "{fields:?}");
        assert!(
            fields.contains(&"spec.prediction.predictionAlgorithm.dsp.historyLength"),
            "{fields:?}"
        );
        assert!(imported
            .notes
            .iter()
            .any(|n| n.contains("silently replaced invalid dsp")));
    }

    #[test]
    fn prediction_without_an_algorithm_is_dropped_with_its_queries() {
        let with_empty = convert(
            r#"
apiVersion: autoscaling.crane.io/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata: {name: w}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: w}
  maxReplicas: 2
  prediction: {predictionWindowSeconds: 600}
"#,
        );
        assert_eq!(with_empty.object.spec.prediction, None);
        assert!(with_empty.notes[0].contains("without predictionAlgorithm"));
        let without = convert(
            r#"
apiVersion: autoscaling.crane.io/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata:
  name: w
  annotations: {metric-query.autoscaling.crane.io/resource.cpu: "sum(x)"}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: w}
  maxReplicas: 2
"#,
        );
        assert!(without.notes[0].contains("annotations dropped: prediction is off"));
        assert_eq!(without.object.metadata.annotations, None);
    }

    #[test]
    fn other_documents_and_type_errors_are_errors() {
        let deployment = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment"});
        assert_eq!(
            import_document(&deployment, ImportOptions::default()),
            Err(ImportError::Unsupported {
                api_version: "apps/v1".to_owned(),
                kind: "Deployment".to_owned()
            })
        );
        let v2beta1 = serde_json::json!({"apiVersion": "autoscaling/v2beta1", "kind": "HorizontalPodAutoscaler"});
        assert!(
            matches!(import_document(&v2beta1, ImportOptions::default()), Err(ImportError::Field(f)) if f.field == "apiVersion")
        );
        let bad = serde_json::json!({
            "apiVersion": "autoscaling.crane.io/v1alpha1",
            "kind": "EffectiveHorizontalPodAutoscaler",
            "spec": {"maxReplicas": "ten"}
        });
        assert!(
            matches!(import_document(&bad, ImportOptions::default()), Err(ImportError::Field(f)) if f.field == "spec.maxReplicas")
        );
        let foresight = serde_json::json!({
            "apiVersion": crate::spec::API_VERSION, "kind": crate::spec::KIND,
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "w"}, "maxReplicas": 3}
        });
        let passed = import_document(&foresight, ImportOptions::default()).unwrap();
        assert_eq!(passed.object.spec.max_replicas, 3);
        assert!(passed.notes[0].contains("passed through"));
    }

    #[test]
    fn zone_prefixes_are_split_off() {
        assert_eq!(
            split_zone_prefix("TZ=UTC 0 6 * * *"),
            (Some("UTC"), "0 6 * * *")
        );
        assert_eq!(split_zone_prefix(" 0 6 * * * "), (None, "0 6 * * *"));
        assert_eq!(split_zone_prefix("TZ=UTC"), (None, "TZ=UTC"));
    }
}

#[cfg(test)]
mod adoption_tests {
    use super::*;

    fn one(yaml: &str, options: ImportOptions) -> Imported {
        let docs = crate::manifest::parse_documents(yaml).unwrap();
        import_document(&docs[0], options).unwrap()
    }

    const HPA: &str = r#"
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 5
  minReplica: 2
"#;

    #[test]
    fn preview_keeps_the_source_running_beside_the_result() {
        let imported = one(HPA, ImportOptions { preview: true });
        assert_eq!(
            imported.object.spec.scale_strategy,
            Some(ScaleStrategy::Preview)
        );
        assert!(imported.notes.iter().all(|n| !n.contains("delete the")));
        assert!(imported.notes.iter().any(|n| n.contains("Preview")));
        let auto = one(HPA, ImportOptions::default());
        assert_eq!(auto.object.spec.scale_strategy, None);
        assert!(auto.notes.iter().any(|n| n.contains("delete the")));
    }

    #[test]
    fn fields_that_are_not_carried_over_are_named() {
        let imported = one(HPA, ImportOptions::default());
        assert!(
            imported
                .notes
                .iter()
                .any(|n| n.starts_with("spec.minReplica dropped") && n.contains("minReplicas")),
            "{:?}",
            imported.notes
        );
    }

    #[test]
    fn per_pod_queries_are_recognised() {
        assert!(groups_by_pod("sum(rate(x[1m])) by (pod)"));
        assert!(groups_by_pod("sum by(namespace, pod) (rate(x[1m]))"));
        assert!(!groups_by_pod("sum(rate(x{pod=~\"web-.*\"}[1m]))"));
        assert!(!groups_by_pod("sum(rate(x[1m])) by (namespace)"));
        assert!(!groups_by_pod("standby(pod)"));
    }
}
