//! One metric's proposal as Kubernetes' controller computes it (`computeReplicasForMetric`):
//! the metrics-client step, the replica calculation, the status entry, and — on failure —
//! the condition reason and the exact error texts Kubernetes reports.

use foresight_api::hpa::{
    ContainerResourceMetricStatus, CrossVersionObjectReference, ExternalMetricStatus,
    FormulaMetricStatus, LabelSelector, MetricIdentifier, MetricStatus, MetricValueStatus,
    ObjectMetricStatus, PodsMetricStatus, PrometheusMetricStatus, ResourceMetricStatus,
    SelectorOperator,
};
use foresight_api::quantity::Quantity;
use jiff::Timestamp;

use crate::autoscaler::{Metric, MetricSource, Target};
use crate::metrics::{
    container_resource_values, pod_custom_values, MetricData, PodMetricSet, PodResourceSample,
    ValueSample,
};
use crate::replicas::{
    average_value_replicas, per_pod_replicas, utilization_replicas, value_ratio_replicas,
    ReplicaContext,
};
use crate::resources::ResourceName;
use crate::time::GO_ZERO_TIME;

/// What the target's scale subresource reported.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scale {
    /// `spec.replicas`: the count the controller works from.
    pub spec_replicas: i32,
    /// `status.replicas`: used by Object and External AverageValue targets.
    pub status_replicas: i32,
    /// `status.selector`, in string form.
    pub selector: String,
}

/// A metric's successful proposal.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricProposal {
    /// Proposed replicas.
    pub replicas: i32,
    /// The replicas the observed value needs at the target, unrounded and before the
    /// tolerance (what learned headroom scales; see `prediction::headroom`).
    pub exact: f64,
    /// The metric's timestamp, as Kubernetes reports it.
    pub timestamp: Timestamp,
    /// The status entry for `currentMetrics`.
    pub status: MetricStatus,
    /// The current value, formatted for the explanation.
    pub current: String,
    /// The target, formatted for the explanation.
    pub target: String,
}

/// A metric that could not be evaluated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetricFailure {
    /// The event and condition reason, e.g. `FailedGetResourceMetric`.
    pub reason: &'static str,
    /// The text of the event and of the `ScalingActive` condition.
    pub message: String,
    /// The error as it appears in the reconcile error (`failed to get ... metric value: ...`).
    pub error: String,
}

/// Evaluates `metric` against what was observed. `resource_metrics` is the PodMetrics list
/// (or the error reading it), shared by all resource metrics.
pub fn evaluate(
    metric: &Metric,
    data: &MetricData,
    resource_metrics: &Result<Vec<PodResourceSample>, String>,
    scale: &Scale,
    namespace: &str,
    ctx: &ReplicaContext<'_>,
) -> Result<MetricProposal, MetricFailure> {
    match &metric.source {
        MetricSource::Resource {
            resource,
            container,
        } => resource_metric(
            metric.target,
            resource,
            container.as_deref(),
            resource_metrics,
            scale,
            namespace,
            ctx,
        ),
        MetricSource::Pods { metric: id } => pods_metric(id, metric.target, data, scale, ctx),
        MetricSource::Object {
            metric: id,
            described_object,
        } => object_metric(
            id,
            described_object,
            metric.target,
            data,
            scale,
            namespace,
            ctx,
        ),
        MetricSource::External { metric: id } => {
            external_metric(id, metric.target, data, scale, namespace, ctx)
        }
        MetricSource::Prometheus { name, .. } => {
            prometheus_metric(name, metric.target, data, scale, ctx)
        }
        MetricSource::Formula { name, formula } => {
            formula_metric(name, formula, metric.target, data, scale, ctx)
        }
        MetricSource::Unknown { type_ } => {
            let err = format!("unknown metric source type {type_:?}");
            Err(MetricFailure {
                reason: "InvalidMetricSourceType",
                message: err.clone(),
                error: err,
            })
        }
    }
}

fn milli(v: i64) -> Option<Quantity> {
    Some(Quantity::from_milli(v))
}

/// `"60%"`, without the `fmt` machinery (this runs on every decision).
fn percent(v: i32) -> String {
    concat(&[itoa::Buffer::new().format(v), "%"])
}

fn concat(parts: &[&str]) -> String {
    let mut s = String::with_capacity(parts.iter().map(|p| p.len()).sum());
    for p in parts {
        s.push_str(p);
    }
    s
}

fn selector_problem(selector: Option<&LabelSelector>) -> Option<String> {
    for req in selector
        .iter()
        .flat_map(|s| s.match_expressions.iter().flatten())
    {
        if SelectorOperator::parse(&req.operator).is_none() {
            return Some(format!(
                "{:?} is not a valid label selector operator",
                req.operator
            ));
        }
    }
    None
}

const INVALID_RESOURCE_TARGET: &str =
    "invalid resource metric source: neither an average utilization target nor an average value (usage) target was set";

fn resource_metric(
    target: Target,
    resource: &ResourceName,
    container: Option<&str>,
    resource_metrics: &Result<Vec<PodResourceSample>, String>,
    scale: &Scale,
    namespace: &str,
    ctx: &ReplicaContext<'_>,
) -> Result<MetricProposal, MetricFailure> {
    let reason = match container {
        None => "FailedGetResourceMetric",
        Some(_) => "FailedGetContainerResourceMetric",
    };
    let fail = |message: String| MetricFailure {
        reason,
        error: match container {
            None => format!("failed to get {resource} resource metric value: {message}"),
            Some(c) => format!("failed to get {c} container metric value: {message}"),
        },
        message,
    };
    let what = match target {
        Target::AverageValue(_) => "usage",
        Target::Utilization(_) => "utilization",
        _ => return Err(fail(INVALID_RESOURCE_TARGET.to_owned())),
    };
    let calc_fail = |err: String| fail(format!("failed to get {resource} {what}: {err}"));
    let (set, timestamp) = resource_samples(resource, container, resource_metrics, namespace, ctx)
        .map_err(calc_fail)?;
    let (replicas, exact, current_status, current, target_text) =
        resource_replicas(target, resource, container, &set, scale, ctx).map_err(calc_fail)?;
    Ok(MetricProposal {
        replicas,
        exact,
        timestamp,
        status: resource_status(resource, container, current_status),
        current,
        target: target_text,
    })
}

/// What the metrics client (`GetResourceMetric`) gives for the target's pods, and when it
/// was sampled.
fn resource_samples<'a>(
    resource: &'a ResourceName,
    container: Option<&str>,
    resource_metrics: &'a Result<Vec<PodResourceSample>, String>,
    namespace: &str,
    ctx: &ReplicaContext<'_>,
) -> Result<(PodMetricSet<'a>, Timestamp), String> {
    let samples = match resource_metrics {
        Err(e) => return Err(format!(
            "unable to get metrics for resource {resource}: unable to fetch metrics from resource metrics API: {e}"
        )),
        Ok(s) if s.is_empty() => return Err(format!(
            "unable to get metrics for resource {resource}: no metrics returned from resource metrics API"
        )),
        Ok(s) => s,
    };
    let set = match container {
        None => PodMetricSet::pod_resources(samples, resource, ctx.pods),
        Some(c) => {
            let fails = !ctx
                .kubernetes
                .container_missing_from_metrics_is_a_missing_pod();
            let entries = container_resource_values(samples, resource, c, namespace, fails).map_err(|e| {
                format!("unable to get metrics for resource {resource}: failed to get container metrics: {e}")
            })?;
            PodMetricSet::join(entries, ctx.pods)
        }
    };
    Ok((set, samples[0].timestamp))
}

/// A resource metric's replicas, exact ratio, status value, and current and target as the
/// decision record shows them.
type ResourceReplicas = (i32, f64, MetricValueStatus, String, String);

fn resource_replicas(
    target: Target,
    resource: &ResourceName,
    container: Option<&str>,
    set: &PodMetricSet,
    scale: &Scale,
    ctx: &ReplicaContext<'_>,
) -> Result<ResourceReplicas, String> {
    match target {
        Target::Utilization(t) => {
            let p = utilization_replicas(ctx, scale.spec_replicas, t, resource, container, set)?;
            let average = resource_quantity(resource, p.raw_average, ctx);
            let (current, target) = if ctx.explain {
                let current = concat(&[&percent(p.utilization), " (", &average.0, ")"]);
                (current, percent(t))
            } else {
                (String::new(), String::new())
            };
            let status = MetricValueStatus {
                average_value: Some(average),
                average_utilization: Some(p.utilization),
                value: None,
            };
            Ok((p.replicas, p.exact, status, current, target))
        }
        Target::AverageValue(t) => {
            let cpu = *resource == ResourceName::Cpu;
            let (replicas, usage, exact) =
                average_value_replicas(ctx, scale.spec_replicas, t, cpu, set)?;
            let average = resource_quantity(resource, usage, ctx);
            let current = average.to_string();
            let status = MetricValueStatus {
                average_value: Some(average),
                ..Default::default()
            };
            let target = format!("{} per pod", Quantity::from_milli(t));
            Ok((replicas, exact, status, current, target))
        }
        _ => Err(INVALID_RESOURCE_TARGET.to_owned()),
    }
}

/// A resource's value as status shows it: memory in binary units from Kubernetes 1.34 (as
/// metrics-server reports it), everything else in decimal ones.
fn resource_quantity(resource: &ResourceName, milli: i64, ctx: &ReplicaContext<'_>) -> Quantity {
    if *resource == ResourceName::Memory && ctx.kubernetes.memory_status_in_binary_units() {
        Quantity::from_milli_binary(milli)
    } else {
        Quantity::from_milli(milli)
    }
}

fn resource_status(
    resource: &ResourceName,
    container: Option<&str>,
    current: MetricValueStatus,
) -> MetricStatus {
    match container {
        None => MetricStatus {
            type_: "Resource".to_owned(),
            resource: Some(ResourceMetricStatus {
                name: resource.to_string(),
                current,
            }),
            ..Default::default()
        },
        Some(c) => MetricStatus {
            type_: "ContainerResource".to_owned(),
            container_resource: Some(Box::new(ContainerResourceMetricStatus {
                name: resource.to_string(),
                current,
                container: c.to_owned(),
            })),
            ..Default::default()
        },
    }
}

fn pods_metric(
    id: &MetricIdentifier,
    target: Target,
    data: &MetricData,
    scale: &Scale,
    ctx: &ReplicaContext<'_>,
) -> Result<MetricProposal, MetricFailure> {
    let fail = |message: String| MetricFailure {
        reason: "FailedGetPodsMetric",
        error: format!("failed to get pods metric value: {message}"),
        message,
    };
    if let Some(problem) = selector_problem(id.selector.as_ref()) {
        return Err(fail(problem));
    }
    let Target::AverageValue(t) = target else {
        return Err(fail(
            "invalid pods metric source: no averageValue target was set".to_owned(),
        ));
    };
    let name = &id.name;
    let samples = match data {
        MetricData::PodValues(s) if !s.is_empty() => s,
        MetricData::PodValues(_) => {
            return Err(fail(format!(
                "unable to get metric {name}: no metrics returned from custom metrics API"
            )))
        }
        MetricData::Failed(e) => {
            return Err(fail(format!(
                "unable to get metric {name}: unable to fetch metrics from custom metrics API: {e}"
            )))
        }
        _ => {
            return Err(fail(format!(
                "unable to get metric {name}: no per-pod values were read for this metric"
            )))
        }
    };
    let timestamp = samples[0].timestamp;
    let set = PodMetricSet::join(pod_custom_values(samples), ctx.pods);
    let (replicas, usage, exact) =
        average_value_replicas(ctx, scale.spec_replicas, t, false, &set).map_err(fail)?;
    Ok(MetricProposal {
        replicas,
        exact,
        timestamp,
        status: MetricStatus {
            type_: "Pods".to_owned(),
            pods: Some(Box::new(PodsMetricStatus {
                metric: id.clone(),
                current: MetricValueStatus {
                    average_value: milli(usage),
                    ..Default::default()
                },
            })),
            ..Default::default()
        },
        current: format!("{} per pod", Quantity::from_milli(usage)),
        target: format!("{} per pod", Quantity::from_milli(t)),
    })
}

/// The value(s) an Object, External or Prometheus metric returned, or the fetch error text
/// (already in the metrics client's words).
fn read_values<'d>(data: &'d MetricData, api: &str) -> Result<&'d [ValueSample], String> {
    match data {
        MetricData::Values(v) if !v.is_empty() => Ok(v),
        MetricData::Values(_) => Err(format!("no metrics returned from {api}")),
        MetricData::Object(v) => Ok(std::slice::from_ref(v)),
        MetricData::Failed(e) => Err(format!("unable to fetch metrics from {api}: {e}")),
        MetricData::None | MetricData::PodValues(_) | MetricData::Inputs(_) => {
            Err(format!("no metrics returned from {api}"))
        }
    }
}

fn sum(values: &[ValueSample]) -> i64 {
    values
        .iter()
        .fold(0i64, |acc, v| acc.saturating_add(v.value))
}

#[allow(clippy::too_many_arguments)]
fn object_metric(
    id: &MetricIdentifier,
    described: &CrossVersionObjectReference,
    target: Target,
    data: &MetricData,
    scale: &Scale,
    namespace: &str,
    ctx: &ReplicaContext<'_>,
) -> Result<MetricProposal, MetricFailure> {
    let reason = "FailedGetObjectMetric";
    let plain = |message: String| MetricFailure {
        reason,
        error: format!("failed to get object metric value: {message}"),
        message,
    };
    if let Some(problem) = selector_problem(id.selector.as_ref()) {
        return Err(plain(problem));
    }
    let name = &id.name;
    // Up to 1.36 Kubernetes' format string puts its arguments in the wrong order; parity
    // keeps it. 1.37 puts them right.
    let fetch_error = |e: String| {
        if ctx.kubernetes.reworded_errors() {
            format!(
                "unable to get metric {name} on {} {namespace}/{}: {e}",
                described.kind, described.name
            )
        } else {
            format!(
                "unable to get metric {name}: {} on {namespace} {}/{e}",
                described.kind, described.name
            )
        }
    };
    match target {
        Target::Value(t) => {
            let values = read_values(data, "custom metrics API").map_err(|e| plain(fetch_error(e)))?;
            let usage = values[0].value;
            let (replicas, exact) = value_ratio_replicas(ctx, scale.spec_replicas, usage as f64 / t as f64).map_err(plain)?;
            Ok(MetricProposal {
                replicas,
                exact,
                timestamp: GO_ZERO_TIME,
                status: MetricStatus {
                    type_: "Object".to_owned(),
                    object: Some(Box::new(ObjectMetricStatus {
                        metric: id.clone(),
                        current: MetricValueStatus { value: milli(usage), ..Default::default() },
                        described_object: described.clone(),
                    })),
                    ..Default::default()
                },
                current: Quantity::from_milli(usage).to_string(),
                target: Quantity::from_milli(t).to_string(),
            })
        }
        Target::AverageValue(t) => {
            let wrapped = |message: String| MetricFailure {
                reason,
                error: format!("failed to get object metric value: failed to get {name} object metric: {message}"),
                message,
            };
            let values = read_values(data, "custom metrics API").map_err(|e| wrapped(fetch_error(e)))?;
            let (replicas, average, exact) = per_pod_replicas(ctx.tolerance, scale.status_replicas, t, values[0].value);
            Ok(MetricProposal {
                replicas,
                exact,
                timestamp: values[0].timestamp,
                status: MetricStatus {
                    type_: "Object".to_owned(),
                    object: Some(Box::new(ObjectMetricStatus {
                        metric: id.clone(),
                        current: MetricValueStatus { average_value: milli(average), ..Default::default() },
                        // Kubernetes leaves the described object empty here.
                        described_object: CrossVersionObjectReference::default(),
                    })),
                    ..Default::default()
                },
                current: format!("{} per replica", Quantity::from_milli(average)),
                target: format!("{} per replica", Quantity::from_milli(t)),
            })
        }
        _ => Err(plain("invalid object metric source: neither a value target nor an average value target was set".to_owned())),
    }
}

fn external_metric(
    id: &MetricIdentifier,
    target: Target,
    data: &MetricData,
    scale: &Scale,
    namespace: &str,
    ctx: &ReplicaContext<'_>,
) -> Result<MetricProposal, MetricFailure> {
    let name = &id.name;
    let reason = "FailedGetExternalMetric";
    let wrap_with = |inner: String| {
        move |message: String| MetricFailure {
            reason,
            error: format!("failed to get {name} external metric value: {inner}{message}"),
            message,
        }
    };
    let fetch_error = |e: String| {
        format!(
            "unable to get external metric {namespace}/{name}/{}: {e}",
            LabelSelector::go_format(id.selector.as_ref())
        )
    };
    match target {
        Target::AverageValue(t) => {
            let fail = wrap_with(format!("failed to get {name} external metric: "));
            if let Some(p) = selector_problem(id.selector.as_ref()) {
                return Err(fail(p));
            }
            let values =
                read_values(data, "external metrics API").map_err(|e| fail(fetch_error(e)))?;
            let (replicas, average, exact) =
                per_pod_replicas(ctx.tolerance, scale.status_replicas, t, sum(values));
            Ok(MetricProposal {
                replicas,
                exact,
                timestamp: values[0].timestamp,
                status: external_status(
                    id,
                    MetricValueStatus {
                        average_value: milli(average),
                        ..Default::default()
                    },
                ),
                current: format!("{} per replica", Quantity::from_milli(average)),
                target: format!("{} per replica", Quantity::from_milli(t)),
            })
        }
        Target::Value(t) => {
            let fail = wrap_with(format!("failed to get external metric {name}: "));
            if let Some(p) = selector_problem(id.selector.as_ref()) {
                return Err(fail(p));
            }
            let values =
                read_values(data, "external metrics API").map_err(|e| fail(fetch_error(e)))?;
            let usage = sum(values);
            let (replicas, exact) =
                value_ratio_replicas(ctx, scale.spec_replicas, usage as f64 / t as f64)
                    .map_err(fail)?;
            Ok(MetricProposal {
                replicas,
                exact,
                timestamp: GO_ZERO_TIME,
                status: external_status(
                    id,
                    MetricValueStatus {
                        value: milli(usage),
                        ..Default::default()
                    },
                ),
                current: Quantity::from_milli(usage).to_string(),
                target: Quantity::from_milli(t).to_string(),
            })
        }
        _ => {
            let msg = "invalid external metric source: neither a value target nor an average value target was set";
            Err(wrap_with(String::new())(msg.to_owned()))
        }
    }
}

fn external_status(id: &MetricIdentifier, current: MetricValueStatus) -> MetricStatus {
    MetricStatus {
        type_: "External".to_owned(),
        external: Some(Box::new(ExternalMetricStatus {
            metric: id.clone(),
            current,
        })),
        ..Default::default()
    }
}

/// `type: Prometheus`: a PromQL value, with External semantics for its target.
fn prometheus_metric(
    name: &str,
    target: Target,
    data: &MetricData,
    scale: &Scale,
    ctx: &ReplicaContext<'_>,
) -> Result<MetricProposal, MetricFailure> {
    let fail = |message: String| MetricFailure {
        reason: "FailedGetPrometheusMetric",
        error: format!("failed to get {name} prometheus metric value: {message}"),
        message,
    };
    let values = read_values(data, "Prometheus")
        .map_err(|e| fail(format!("unable to query prometheus metric {name}: {e}")))?;
    let status = |current| MetricStatus {
        type_: "Prometheus".to_owned(),
        prometheus: Some(Box::new(PrometheusMetricStatus {
            name: name.to_owned(),
            current,
        })),
        ..Default::default()
    };
    total_metric(values, target, scale, ctx, status, fail, "prometheus")
}

/// `type: Formula`: the formula over its inputs' values (see [`crate::formula`]), with
/// External semantics for its target, as KEDA gives its composite metric to the HPA.
fn formula_metric(
    name: &str,
    formula: &crate::formula::CompiledFormula,
    target: Target,
    data: &MetricData,
    scale: &Scale,
    ctx: &ReplicaContext<'_>,
) -> Result<MetricProposal, MetricFailure> {
    let fail = |message: String| MetricFailure {
        reason: "FailedGetFormulaMetric",
        error: format!("failed to get {name} formula metric value: {message}"),
        message,
    };
    let sample = formula
        .evaluate(data)
        .map_err(|e| fail(format!("unable to evaluate formula metric {name}: {e}")))?;
    let status = |current| MetricStatus {
        type_: "Formula".to_owned(),
        formula: Some(Box::new(FormulaMetricStatus {
            name: name.to_owned(),
            current,
        })),
        ..Default::default()
    };
    total_metric(
        std::slice::from_ref(&sample),
        target,
        scale,
        ctx,
        status,
        fail,
        "formula",
    )
}

/// A total value (a Prometheus sample, a formula's result) against a Value or AverageValue
/// target, as Kubernetes computes an External metric's proposal.
fn total_metric(
    values: &[ValueSample],
    target: Target,
    scale: &Scale,
    ctx: &ReplicaContext<'_>,
    status: impl Fn(MetricValueStatus) -> MetricStatus,
    fail: impl Fn(String) -> MetricFailure,
    kind: &str,
) -> Result<MetricProposal, MetricFailure> {
    let usage = sum(values);
    let timestamp = values.first().map_or(GO_ZERO_TIME, |v| v.timestamp);
    match target {
        Target::AverageValue(t) => {
            let (replicas, average, exact) = per_pod_replicas(ctx.tolerance, scale.status_replicas, t, usage);
            Ok(MetricProposal {
                replicas,
                exact,
                timestamp,
                status: status(MetricValueStatus { average_value: milli(average), ..Default::default() }),
                current: format!("{} per replica", Quantity::from_milli(average)),
                target: format!("{} per replica", Quantity::from_milli(t)),
            })
        }
        Target::Value(t) => {
            let (replicas, exact) = value_ratio_replicas(ctx, scale.spec_replicas, usage as f64 / t as f64).map_err(&fail)?;
            Ok(MetricProposal {
                replicas,
                exact,
                timestamp,
                status: status(MetricValueStatus { value: milli(usage), ..Default::default() }),
                current: Quantity::from_milli(usage).to_string(),
                target: Quantity::from_milli(t).to_string(),
            })
        }
        _ => Err(fail(format!("invalid {kind} metric source: neither a value target nor an average value target was set"))),
    }
}
