//! `foresight import` for KEDA's `keda.sh/v1alpha1` ScaledObject. The triggers Foresight can
//! read itself carry over (`cpu`, `memory`, `prometheus`, `cron`, and `external`/`metrics-api`
//! as External metrics served by an adapter), with KEDA's fallback, idle and cooldown
//! settings, activation thresholds, HPA behavior, pause annotations and `scalingModifiers` (a
//! formula metric over the triggers); everything else is named in a note. docs/keda.md has
//! the field-by-field table.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::cron::CronSpec;
use crate::fallback::{FallbackBehavior, FallbackSpec};
use crate::hpa::{
    ContainerResourceMetricSource, CrossVersionObjectReference, ExternalMetricSource,
    FormulaExternalInput, FormulaInput, FormulaMetricSource, FormulaPrometheusInput,
    HorizontalPodAutoscalerBehavior, MetricIdentifier, MetricSpec, MetricTarget, ObjectMeta,
    PrometheusMetricSource, ResourceMetricSource,
};
use crate::idle::IdleSpec;
use crate::import::{carried_metadata, finish, ImportError, Imported};
use crate::manifest::{from_value, ForesightObject};
use crate::quantity::Quantity;
use crate::spec::EffectiveHorizontalPodAutoscalerSpec;

/// KEDA's defaults for the fields a ScaledObject may leave out.
const KEDA_MIN_REPLICAS: i32 = 0;
const KEDA_MAX_REPLICAS: i32 = 100;
const KEDA_COOLDOWN_SECONDS: i32 = 300;

#[derive(Deserialize)]
struct ScaledObject {
    #[serde(default)]
    metadata: ObjectMeta,
    #[serde(default)]
    spec: KedaSpec,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct KedaSpec {
    #[serde(default)]
    scale_target_ref: KedaTarget,
    polling_interval: Option<i32>,
    cooldown_period: Option<i32>,
    initial_cooldown_period: Option<i32>,
    idle_replica_count: Option<i32>,
    min_replica_count: Option<i32>,
    max_replica_count: Option<i32>,
    fallback: Option<KedaFallback>,
    advanced: Option<Advanced>,
    #[serde(default)]
    triggers: Vec<Trigger>,
    #[serde(flatten)]
    other: BTreeMap<String, serde_json::Value>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct KedaTarget {
    api_version: Option<String>,
    kind: Option<String>,
    #[serde(default)]
    name: String,
    env_source_container_name: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct KedaFallback {
    failure_threshold: Option<i32>,
    replicas: Option<i32>,
    behavior: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Advanced {
    horizontal_pod_autoscaler_config: Option<HpaConfig>,
    scaling_modifiers: Option<ScalingModifiers>,
    restore_to_original_replica_count: Option<bool>,
}

/// `spec.advanced.scalingModifiers`: one composite metric computed from the triggers.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ScalingModifiers {
    #[serde(default)]
    formula: String,
    target: Option<Scalar>,
    activation_target: Option<Scalar>,
    metric_type: Option<String>,
}

/// A value KEDA types as a string that manifests often write as a number (`target: 2`).
#[derive(Deserialize)]
#[serde(untagged)]
enum Scalar {
    Text(String),
    Number(serde_json::Number),
}

impl Scalar {
    fn text(&self) -> String {
        match self {
            Scalar::Text(s) => s.clone(),
            Scalar::Number(n) => n.to_string(),
        }
    }
}

/// The name of the metric a ScaledObject's formula becomes (KEDA's `composite-metric`).
const COMPOSITE_METRIC: &str = "composite";

#[derive(Deserialize)]
struct HpaConfig {
    name: Option<String>,
    behavior: Option<HorizontalPodAutoscalerBehavior>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Trigger {
    #[serde(rename = "type", default)]
    type_: String,
    name: Option<String>,
    metric_type: Option<String>,
    #[serde(default)]
    metadata: BTreeMap<String, String>,
    authentication_ref: Option<serde_json::Value>,
    use_cached_metrics: Option<bool>,
}

/// What one trigger became.
enum Converted {
    Metric(Box<MetricSpec>),
    Cron(CronSpec),
    Dropped,
}

/// Converts a ScaledObject (raw JSON). A field of the wrong type is an error with its path;
/// what cannot be carried over is a note; what the result breaks is in `problems`.
pub fn import_scaled_object(value: &serde_json::Value) -> Result<Imported, ImportError> {
    let so: ScaledObject = from_value(value, "").map_err(ImportError::Field)?;
    let spec = so.spec;
    let mut notes = Vec::new();
    for key in spec.other.keys() {
        notes.push(format!(
            "spec.{key} is not a ScaledObject field Foresight knows; dropped"
        ));
    }
    let min = spec.min_replica_count.unwrap_or(KEDA_MIN_REPLICAS);
    let idles = min == 0 || spec.idle_replica_count.is_some();
    let idle = idles.then(|| IdleSpec {
        replicas: spec.idle_replica_count,
        cooldown_seconds: Some(spec.cooldown_period.unwrap_or(KEDA_COOLDOWN_SECONDS)),
        initial_cooldown_seconds: spec.initial_cooldown_period.filter(|s| *s > 0),
    });
    if !idles && spec.cooldown_period.is_some() {
        notes.push(
            "spec.cooldownPeriod dropped: KEDA only uses it to scale to zero, and minReplicaCount is not 0"
                .to_owned(),
        );
    }
    if let Some(s) = spec.polling_interval {
        notes.push(format!(
            "spec.pollingInterval {s}s dropped: Foresight reads every metric, activation included, each sync (syncPeriodSeconds, 15 s by default)"
        ));
    }

    let mut metrics = Vec::new();
    let mut crons = Vec::new();
    for (i, trigger) in spec.triggers.iter().enumerate() {
        match convert_trigger(i, trigger, idles, &mut notes) {
            Converted::Metric(m) => metrics.push((i, *m)),
            Converted::Cron(c) => crons.push(c),
            Converted::Dropped => {}
        }
    }
    if spec.triggers.is_empty() {
        notes.push("the ScaledObject has no triggers".to_owned());
    }

    let mut behavior = None;
    if let Some(advanced) = spec.advanced {
        if let Some(hpa) = advanced.horizontal_pod_autoscaler_config {
            behavior = hpa.behavior;
            if let Some(name) = hpa.name {
                notes.push(format!(
                    "spec.advanced.horizontalPodAutoscalerConfig.name {name:?} dropped: Foresight creates no HPA"
                ));
            }
        }
        if let Some(modifiers) = advanced.scaling_modifiers {
            if modifiers.formula.is_empty() {
                notes.push(
                    "spec.advanced.scalingModifiers has no formula; KEDA ignores it, and so does the import"
                        .to_owned(),
                );
            } else {
                let composed = compose(&spec.triggers, metrics, &modifiers, idles, &mut notes);
                metrics = composed.into_iter().enumerate().collect();
            }
        }
        if advanced.restore_to_original_replica_count == Some(true) {
            notes.push(
                "spec.advanced.restoreToOriginalReplicaCount dropped: deleting a Foresight object leaves the workload at its current size"
                    .to_owned(),
            );
        }
    }
    let fallback = spec.fallback.map(|f| FallbackSpec {
        failure_threshold: f.failure_threshold,
        failure_duration_seconds: None,
        replicas: f.replicas,
        behavior: f.behavior.as_deref().map(|b| {
            FallbackBehavior::from_keda(b).unwrap_or_else(|| {
                notes.push(format!(
                    "spec.fallback.behavior {b:?} is not one of KEDA's; static assumed"
                ));
                FallbackBehavior::Static
            })
        }),
    });

    let target = spec.scale_target_ref;
    if let Some(c) = target.env_source_container_name {
        notes.push(format!(
            "spec.scaleTargetRef.envSourceContainerName {c:?} dropped: Foresight reads no settings from the workload's environment"
        ));
    }
    let mut metadata = carried_metadata(&so.metadata, |_| false);
    rename_keda_annotations(&mut metadata, &mut notes);
    notes.push(format!(
        "delete the ScaledObject {} (and with it KEDA's HPA keda-hpa-{0}) once this object is applied: two autoscalers on one target fight over its replicas",
        so.metadata.name.as_deref().unwrap_or("(unnamed)")
    ));
    let object = ForesightObject::foresight(
        metadata,
        EffectiveHorizontalPodAutoscalerSpec {
            scale_target_ref: CrossVersionObjectReference {
                kind: target.kind.unwrap_or_else(|| "Deployment".to_owned()),
                name: target.name,
                api_version: Some(target.api_version.unwrap_or_else(|| "apps/v1".to_owned())),
            },
            min_replicas: Some(min),
            max_replicas: spec.max_replica_count.unwrap_or(KEDA_MAX_REPLICAS),
            metrics: metrics.into_iter().map(|(_, m)| m).collect(),
            behavior,
            crons,
            fallback,
            idle,
            ..Default::default()
        },
    );
    Ok(finish(object, notes))
}

/// One trigger as a metric or a cron; what it cannot carry is noted.
fn convert_trigger(i: usize, t: &Trigger, idles: bool, notes: &mut Vec<String>) -> Converted {
    let at = format!("spec.triggers[{i}]");
    if t.authentication_ref.is_some() {
        notes.push(format!(
            "{at}.authenticationRef dropped: Foresight reads metrics with the controller's own credentials (--prometheus-url and its flags, or the metrics APIs)"
        ));
    }
    if t.use_cached_metrics == Some(true) {
        notes.push(format!(
            "{at}.useCachedMetrics dropped: Foresight reads each metric once per sync"
        ));
    }
    let meta = |key: &str| t.metadata.get(key).map(String::as_str);
    let activation = |key: &str, notes: &mut Vec<String>| -> Option<Quantity> {
        let value = meta(key)?;
        if idles {
            Some(Quantity::from(value))
        } else {
            notes.push(format!(
                "{at}.metadata.{key} dropped: an activation value only matters when the target can go idle (minReplicaCount 0 or idleReplicaCount)"
            ));
            None
        }
    };
    let metric_type = |default: &str| {
        t.metric_type
            .clone()
            .or_else(|| meta("type").map(str::to_owned))
            .unwrap_or_else(|| default.to_owned())
    };
    let value_target = |type_: &str, value: Option<&str>| MetricTarget {
        type_: type_.to_owned(),
        value: (type_ == "Value")
            .then(|| value.map(Quantity::from))
            .flatten(),
        average_value: (type_ == "AverageValue")
            .then(|| value.map(Quantity::from))
            .flatten(),
        ..Default::default()
    };
    match t.type_.as_str() {
        "cpu" | "memory" => {
            let type_ = metric_type("Utilization");
            let value = meta("value");
            let target = if type_ == "Utilization" {
                MetricTarget {
                    type_,
                    average_utilization: value.map(|v| v.trim().parse().unwrap_or(-1)),
                    ..Default::default()
                }
            } else {
                value_target(&type_, value)
            };
            let name = t.type_.clone();
            Converted::Metric(Box::new(match meta("containerName") {
                Some(container) => MetricSpec {
                    type_: "ContainerResource".to_owned(),
                    container_resource: Some(ContainerResourceMetricSource {
                        name,
                        target,
                        container: container.to_owned(),
                    }),
                    ..Default::default()
                },
                None => MetricSpec {
                    type_: "Resource".to_owned(),
                    resource: Some(ResourceMetricSource { name, target }),
                    ..Default::default()
                },
            }))
        }
        "prometheus" => {
            if let Some(server) = meta("serverAddress") {
                notes.push(format!(
                    "{at}.metadata.serverAddress {server:?}: Foresight queries the controller's --prometheus-url"
                ));
            }
            for key in t.metadata.keys().filter(|k| {
                !matches!(
                    k.as_str(),
                    "serverAddress" | "query" | "threshold" | "activationThreshold" | "metricName"
                )
            }) {
                notes.push(format!("{at}.metadata.{key} dropped"));
            }
            let name = metric_name(t, i);
            Converted::Metric(Box::new(MetricSpec {
                type_: "Prometheus".to_owned(),
                prometheus: Some(PrometheusMetricSource {
                    name,
                    query: meta("query").unwrap_or_default().to_owned(),
                    target: value_target(&metric_type("AverageValue"), meta("threshold")),
                    ..Default::default()
                }),
                activation: activation("activationThreshold", notes),
                ..Default::default()
            }))
        }
        "cron" => Converted::Cron(CronSpec {
            name: t.name.clone().unwrap_or_else(|| format!("cron-{i}")),
            timezone: meta("timezone").map(str::to_owned),
            start: meta("start").unwrap_or_default().to_owned(),
            end: meta("end").unwrap_or_default().to_owned(),
            target_replicas: meta("desiredReplicas").map_or(0, |v| v.trim().parse().unwrap_or(-1)),
            ..Default::default()
        }),
        "external" | "metrics-api" => {
            let name = metric_name(t, i);
            notes.push(format!(
                "{at} ({}) becomes External metric {name:?}: an external metrics adapter must serve it under that name (KEDA's own adapter, or Prometheus Adapter), or write it as a type: Prometheus query",
                t.type_
            ));
            let target = meta("targetValue").or_else(|| meta("threshold"));
            if target.is_none() {
                notes.push(format!(
                    "{at}: no targetValue in its metadata (an external scaler returns its own): set spec.metrics[].external.target"
                ));
            }
            let activation_key = if meta("activationTargetValue").is_some() {
                "activationTargetValue"
            } else {
                "activationThreshold"
            };
            Converted::Metric(Box::new(MetricSpec {
                type_: "External".to_owned(),
                external: Some(ExternalMetricSource {
                    metric: MetricIdentifier {
                        name,
                        selector: None,
                    },
                    target: value_target(&metric_type("AverageValue"), target),
                }),
                activation: activation(activation_key, notes),
                ..Default::default()
            }))
        }
        other => {
            notes.push(format!(
                "{at} ({other}) dropped: Foresight has no {other} scaler; read it through Prometheus (type: Prometheus) or an external metrics adapter (type: External)"
            ));
            Converted::Dropped
        }
    }
}

/// KEDA's `scalingModifiers`: the triggers' metrics become the inputs of one formula
/// metric, as KEDA gives the HPA one composite metric instead of theirs. cpu and memory
/// triggers stay metrics of their own (KEDA leaves them out of the formula); a trigger the
/// formula cannot name (no `name`, or one that is not an identifier) is left out, as KEDA
/// leaves it out of the formula's names.
fn compose(
    triggers: &[Trigger],
    metrics: Vec<(usize, MetricSpec)>,
    modifiers: &ScalingModifiers,
    idles: bool,
    notes: &mut Vec<String>,
) -> Vec<MetricSpec> {
    let at = "spec.advanced.scalingModifiers";
    let mut kept = Vec::new();
    let mut inputs = Vec::new();
    for (i, metric) in metrics {
        let Some(trigger) = triggers.get(i) else {
            continue;
        };
        if metric.type_ != "Prometheus" && metric.type_ != "External" {
            kept.push(metric);
            continue;
        }
        let Some(name) = trigger.name.as_deref().filter(|n| is_formula_name(n)) else {
            notes.push(format!(
                "spec.triggers[{i}] dropped: it has no name a formula can use (a letter or '_', then letters, digits or '_'), so KEDA leaves it out of {at}.formula"
            ));
            continue;
        };
        if metric.activation.is_some() {
            notes.push(format!(
                "spec.triggers[{i}]'s activation value dropped: with scalingModifiers, {at}.activationTarget decides activity"
            ));
        }
        notes.push(format!(
            "spec.triggers[{i}] ({}) is the formula's input {name}; its threshold and metricType are KEDA's per-trigger target, which the formula's target replaces",
            trigger.type_
        ));
        inputs.push(formula_input(name, metric));
    }
    for (i, t) in triggers.iter().enumerate() {
        if t.type_ == "cron"
            && t.name
                .as_deref()
                .is_some_and(|n| modifiers.formula.contains(n))
        {
            notes.push(format!(
                "spec.triggers[{i}] (cron) stays a cron: a formula input is a metric; the formula cannot read it"
            ));
        }
    }
    let target = modifiers.target.as_ref().map(Scalar::text);
    let target = target.as_deref();
    if target.is_none() {
        notes.push(format!(
            "{at}.target is not set (KEDA requires it): set spec.metrics[].formula.target"
        ));
    }
    let type_ = modifiers
        .metric_type
        .clone()
        .unwrap_or_else(|| "AverageValue".to_owned());
    let activation = match (&modifiers.activation_target, idles) {
        (Some(a), true) => Some(Quantity::from(a.text().as_str())),
        (Some(_), false) => {
            notes.push(format!(
                "{at}.activationTarget dropped: an activation value only matters when the target can go idle (minReplicaCount 0 or idleReplicaCount)"
            ));
            None
        }
        (None, _) => None,
    };
    kept.push(MetricSpec {
        type_: "Formula".to_owned(),
        formula: Some(FormulaMetricSource {
            name: COMPOSITE_METRIC.to_owned(),
            formula: modifiers.formula.clone(),
            inputs,
            target: MetricTarget {
                value: (type_ == "Value")
                    .then(|| target.map(Quantity::from))
                    .flatten(),
                average_value: (type_ == "AverageValue")
                    .then(|| target.map(Quantity::from))
                    .flatten(),
                type_,
                ..Default::default()
            },
        }),
        activation,
        ..Default::default()
    });
    kept
}

/// A problem with the composite formula metric is the user's problem with the ScaledObject's
/// `spec.advanced.scalingModifiers`: name that field first, and the imported one after it.
pub(crate) fn name_source_fields(imported: &mut Imported) {
    let composite = imported.object.spec.metrics.iter().position(|m| {
        m.formula
            .as_ref()
            .is_some_and(|f| f.name == COMPOSITE_METRIC)
    });
    let Some(k) = composite else {
        return;
    };
    let prefix = format!("spec.metrics[{k}].formula.");
    for p in &mut imported.problems {
        let Some(rest) = p.field.strip_prefix(&prefix) else {
            continue;
        };
        let source = match rest.split('.').next() {
            Some("formula") => "formula",
            Some("target") => "target",
            _ => continue,
        };
        p.detail = format!("{} (imported as {})", p.detail, p.field);
        p.field = format!("spec.advanced.scalingModifiers.{source}");
    }
}

/// Whether `name` can be read by a formula: a letter or `_`, then letters, digits or `_`.
fn is_formula_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A Prometheus or External metric as a formula's input named `name`.
fn formula_input(name: &str, metric: MetricSpec) -> FormulaInput {
    FormulaInput {
        name: name.to_owned(),
        type_: metric.type_.clone(),
        external: metric
            .external
            .map(|e| FormulaExternalInput { metric: e.metric }),
        prometheus: metric
            .prometheus
            .map(|p| FormulaPrometheusInput { query: p.query }),
    }
}

/// The name a trigger's metric gets: the trigger's name, its `metricName`, or its type and
/// index; never with the characters a metric name may not hold.
fn metric_name(t: &Trigger, i: usize) -> String {
    let name = t
        .name
        .clone()
        .or_else(|| t.metadata.get("metricName").cloned())
        .unwrap_or_else(|| format!("{}-{i}", t.type_));
    name.replace(['/', '%'], "-")
}

/// KEDA's pause annotations under Foresight's names; KEDA's other annotations dropped.
fn rename_keda_annotations(meta: &mut ObjectMeta, notes: &mut Vec<String>) {
    let Some(annotations) = meta.annotations.as_mut() else {
        return;
    };
    for (keda, ours) in crate::pause::KEDA_NAMES {
        if let Some(v) = annotations.remove(keda) {
            notes.push(format!("annotation {keda} is {ours} here"));
            annotations.insert(ours.to_owned(), v);
        }
    }
    let other: Vec<String> = annotations
        .keys()
        .filter(|k| k.starts_with("autoscaling.keda.sh/"))
        .cloned()
        .collect();
    for k in other {
        annotations.remove(&k);
        notes.push(format!("annotation {k} dropped: KEDA's own"));
    }
    if annotations.is_empty() {
        meta.annotations = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::{import_document, ImportOptions};

    fn convert(yaml: &str) -> Imported {
        let value: serde_json::Value = serde_saphyr::from_str(yaml).unwrap();
        import_document(&value, ImportOptions::default()).unwrap()
    }

    const SCALED_OBJECT: &str = r#"
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: worker
  namespace: jobs
  annotations: {autoscaling.keda.sh/paused-replicas: "2", autoscaling.keda.sh/transfer-hpa-ownership: "true"}
spec:
  scaleTargetRef: {name: worker}
  pollingInterval: 10
  cooldownPeriod: 120
  maxReplicaCount: 30
  fallback: {failureThreshold: 3, replicas: 6, behavior: currentReplicasIfHigher}
  advanced:
    horizontalPodAutoscalerConfig:
      behavior: {scaleDown: {stabilizationWindowSeconds: 60}}
  triggers:
  - type: prometheus
    metadata: {serverAddress: "http://prometheus:9090", query: "sum(rate(jobs_total[1m]))", threshold: "50", activationThreshold: "5"}
  - type: cpu
    metricType: Utilization
    metadata: {value: "70", containerName: app}
  - type: cron
    metadata: {timezone: Europe/Paris, start: "0 8 * * 1-5", end: "0 18 * * 1-5", desiredReplicas: "4"}
  - type: metrics-api
    name: backlog
    metadata: {url: "http://api/stats", valueLocation: "backlog", targetValue: "20", activationTargetValue: "1"}
  - type: kafka
    metadata: {topic: orders}
"#;

    #[test]
    fn converts_the_triggers_foresight_reads_and_names_the_rest() {
        let imported = convert(SCALED_OBJECT);
        assert!(imported.problems.is_empty(), "{:?}", imported.problems);
        let spec = &imported.object.spec;
        assert_eq!(spec.scale_target_ref.kind, "Deployment");
        assert_eq!(spec.min_replicas, Some(0), "KEDA's default minReplicaCount");
        assert_eq!(spec.max_replicas, 30);
        let idle = spec.idle.as_ref().expect("scale to zero");
        assert_eq!(idle.cooldown_seconds, Some(120));
        let f = spec.fallback.as_ref().unwrap();
        assert_eq!(
            (f.failure_threshold, f.replicas, f.behavior),
            (
                Some(3),
                Some(6),
                Some(FallbackBehavior::CurrentReplicasIfHigher)
            )
        );
        let types: Vec<&str> = spec.metrics.iter().map(|m| m.type_.as_str()).collect();
        assert_eq!(types, ["Prometheus", "ContainerResource", "External"]);
        let prom = spec.metrics[0].prometheus.as_ref().unwrap();
        assert_eq!(prom.query, "sum(rate(jobs_total[1m]))");
        assert_eq!(prom.target.average_value, Some(Quantity::from("50")));
        assert_eq!(spec.metrics[0].activation, Some(Quantity::from("5")));
        let cpu = spec.metrics[1].container_resource.as_ref().unwrap();
        assert_eq!(
            (cpu.container.as_str(), cpu.target.average_utilization),
            ("app", Some(70))
        );
        assert_eq!(
            spec.metrics[2].external.as_ref().unwrap().metric.name,
            "backlog"
        );
        assert_eq!(spec.metrics[2].activation, Some(Quantity::from("1")));
        assert_eq!(spec.crons.len(), 1);
        assert_eq!(spec.crons[0].target_replicas, 4);
        assert_eq!(spec.crons[0].timezone.as_deref(), Some("Europe/Paris"));
        assert!(spec.behavior.is_some());
        let annotations = imported.object.metadata.annotations.as_ref().unwrap();
        assert_eq!(
            annotations
                .get("autoscaling.foresight.dev/paused-replicas")
                .map(String::as_str),
            Some("2")
        );
        assert_eq!(annotations.len(), 1, "{annotations:?}");
        let notes = imported.notes.join("\n");
        for expected in [
            "spec.triggers[4] (kafka) dropped",
            "serverAddress",
            "pollingInterval",
            "transfer-hpa-ownership dropped",
            "delete the ScaledObject worker",
        ] {
            assert!(notes.contains(expected), "{expected}: {notes}");
        }
    }

    #[test]
    fn cpu_only_at_keda_default_minimum_is_invalid_with_the_path() {
        let imported = convert(
            r#"
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: web}
spec:
  scaleTargetRef: {name: web}
  triggers:
  - type: cpu
    metricType: Utilization
    metadata: {value: "60"}
"#,
        );
        let paths: Vec<&str> = imported.problems.iter().map(|p| p.field.as_str()).collect();
        assert!(paths.contains(&"spec.metrics"), "{paths:?}");
        assert!(paths.contains(&"spec.idle"), "{paths:?}");
    }

    #[test]
    fn min_above_zero_keeps_no_idle_and_drops_activation() {
        let imported = convert(
            r#"
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: web}
spec:
  scaleTargetRef: {name: web}
  minReplicaCount: 2
  cooldownPeriod: 60
  triggers:
  - type: prometheus
    metadata: {query: "sum(up)", threshold: "10", activationThreshold: "3"}
"#,
        );
        assert!(imported.problems.is_empty(), "{:?}", imported.problems);
        assert!(imported.object.spec.idle.is_none());
        assert!(imported.object.spec.metrics[0].activation.is_none());
        let notes = imported.notes.join("\n");
        assert!(notes.contains("activationThreshold dropped"), "{notes}");
        assert!(notes.contains("cooldownPeriod dropped"), "{notes}");
    }

    #[test]
    fn a_field_of_the_wrong_type_names_its_path() {
        let value: serde_json::Value = serde_saphyr::from_str(
            "apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nspec: {minReplicaCount: lots}\n",
        )
        .unwrap();
        match import_document(&value, ImportOptions::default()) {
            Err(ImportError::Field(e)) => assert_eq!(e.field, "spec.minReplicaCount"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn scaling_modifiers_become_one_formula_metric_over_the_named_triggers() {
        let imported = convert(
            r#"
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: web}
spec:
  scaleTargetRef: {name: web}
  advanced:
    scalingModifiers: {formula: "(trig_one + trig_two) / 2", target: 2, activationTarget: "1", metricType: Value}
  triggers:
  - type: prometheus
    name: trig_one
    metadata: {query: "sum(rate(a[1m]))", threshold: "10", activationThreshold: "3"}
  - type: external
    name: trig_two
    metadata: {scalerAddress: "x:9090", targetValue: "5"}
  - type: cpu
    metricType: Utilization
    metadata: {value: "70"}
  - type: prometheus
    metadata: {query: "sum(up)", threshold: "1"}
"#,
        );
        assert!(imported.problems.is_empty(), "{:?}", imported.problems);
        let metrics = &imported.object.spec.metrics;
        let types: Vec<&str> = metrics.iter().map(|m| m.type_.as_str()).collect();
        assert_eq!(
            types,
            ["Resource", "Formula"],
            "cpu stays, the rest is the formula"
        );
        let f = metrics[1].formula.as_ref().unwrap();
        assert_eq!(f.formula, "(trig_one + trig_two) / 2");
        assert_eq!(f.target.type_, "Value");
        assert_eq!(f.target.value, Some(Quantity::from("2")));
        assert_eq!(metrics[1].activation, Some(Quantity::from("1")));
        let inputs: Vec<(&str, &str)> = f
            .inputs
            .iter()
            .map(|i| (i.name.as_str(), i.type_.as_str()))
            .collect();
        assert_eq!(
            inputs,
            [("trig_one", "Prometheus"), ("trig_two", "External")]
        );
        assert_eq!(
            f.inputs[0].prometheus.as_ref().unwrap().query,
            "sum(rate(a[1m]))"
        );
        assert_eq!(
            f.inputs[1].external.as_ref().unwrap().metric.name,
            "trig_two"
        );
        let notes = imported.notes.join("\n");
        assert!(!notes.contains("scalingModifiers dropped"), "{notes}");
        assert!(
            notes.contains("spec.triggers[3] dropped: it has no name"),
            "{notes}"
        );
        assert!(notes.contains("is the formula's input trig_one"), "{notes}");
    }

    #[test]
    fn a_formula_that_cannot_be_read_is_a_problem_at_its_field() {
        let imported = convert(
            r#"
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: web}
spec:
  scaleTargetRef: {name: web}
  minReplicaCount: 1
  advanced:
    scalingModifiers: {formula: "(trig_one + ) / 2", target: "2"}
  triggers:
  - type: prometheus
    name: trig_one
    metadata: {query: "sum(up)", threshold: "1"}
"#,
        );
        let p = &imported.problems;
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].field, "spec.advanced.scalingModifiers.formula");
        assert!(p[0].detail.contains("column 13"), "{}", p[0].detail);
        assert!(
            p[0].detail
                .contains("imported as spec.metrics[0].formula.formula"),
            "{}",
            p[0].detail
        );
        // Default metricType: AverageValue.
        let f = imported.object.spec.metrics[0].formula.as_ref().unwrap();
        assert_eq!(f.target.average_value, Some(Quantity::from("2")));
    }
}
