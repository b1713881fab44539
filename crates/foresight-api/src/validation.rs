//! Validation with field paths, reproducing Kubernetes' `ValidateHorizontalPodAutoscaler`
//! error for error (same paths, types, details and order), plus Foresight's own fields.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::hpa::{
    ContainerResourceMetricSource, CrossVersionObjectReference, ExternalMetricSource, FormulaInput,
    FormulaMetricSource, HorizontalPodAutoscalerBehavior, HorizontalPodAutoscalerSpec,
    HpaScalingPolicy, HpaScalingRules, MetricIdentifier, MetricSpec, MetricTarget,
    ObjectMetricSource, PodsMetricSource, PrometheusMetricSource, ResourceMetricSource,
    FORMULA_INPUT_TYPES, KUBERNETES_METRIC_TYPES, METRIC_TYPES, POLICY_TYPES, SELECT_POLICIES,
    TARGET_TYPES,
};
use crate::quantity::Quantity;
use crate::spec::{EffectiveHorizontalPodAutoscalerSpec, ScaleStrategy};

/// The kind of a validation error (Kubernetes `field.ErrorType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ErrorType {
    /// A required field is missing.
    FieldValueRequired,
    /// A value breaks a rule.
    FieldValueInvalid,
    /// A value is not one of the supported ones.
    FieldValueNotSupported,
    /// A field may not be set here.
    FieldValueForbidden,
    /// A value appears twice where it must be unique.
    FieldValueDuplicate,
    /// A field the schema does not have (a misspelling, or a field of another version).
    FieldValueUnknown,
}

/// One rejected field: where, what kind of problem, and the rule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldError {
    /// The field path, e.g. `spec.behavior.scaleUp.policies[0].value`.
    pub field: String,
    /// The kind of problem.
    #[serde(rename = "type")]
    pub type_: ErrorType,
    /// The offending value as text, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The rule that was broken.
    pub detail: String,
}

impl FieldError {
    /// A required field is missing.
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            type_: ErrorType::FieldValueRequired,
            value: None,
            detail: detail.into(),
        }
    }
    /// A value breaks a rule.
    pub fn invalid(
        field: impl Into<String>,
        value: impl fmt::Display,
        detail: impl Into<String>,
    ) -> Self {
        FieldError {
            field: field.into(),
            type_: ErrorType::FieldValueInvalid,
            value: Some(value.to_string()),
            detail: detail.into(),
        }
    }
    /// A value is not one of `supported`.
    pub fn not_supported(
        field: impl Into<String>,
        value: impl fmt::Display,
        supported: &[&str],
    ) -> Self {
        let list: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
        FieldError {
            field: field.into(),
            type_: ErrorType::FieldValueNotSupported,
            value: Some(value.to_string()),
            detail: format!("supported values: {}", list.join(", ")),
        }
    }
    /// A field may not be set.
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            type_: ErrorType::FieldValueForbidden,
            value: None,
            detail: detail.into(),
        }
    }
    /// A field the schema does not have; `detail` may suggest the one meant.
    pub fn unknown(field: impl Into<String>, detail: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            type_: ErrorType::FieldValueUnknown,
            value: None,
            detail: detail.into(),
        }
    }
    /// A value that must be unique appears again.
    pub fn duplicate(field: impl Into<String>, value: impl fmt::Display) -> Self {
        FieldError {
            field: field.into(),
            type_: ErrorType::FieldValueDuplicate,
            value: Some(value.to_string()),
            detail: String::new(),
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.field)?;
        let label = match self.type_ {
            ErrorType::FieldValueRequired => "Required value",
            ErrorType::FieldValueInvalid => "Invalid value",
            ErrorType::FieldValueNotSupported => "Unsupported value",
            ErrorType::FieldValueForbidden => "Forbidden",
            ErrorType::FieldValueDuplicate => "Duplicate value",
            ErrorType::FieldValueUnknown => "Unknown field",
        };
        f.write_str(label)?;
        if let Some(v) = &self.value {
            write!(f, ": {v:?}")?;
        }
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

/// Every problem found in one object.
#[derive(Clone, Debug, Default, PartialEq, Eq, thiserror::Error)]
pub struct ValidationErrors(pub Vec<FieldError>);

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

/// Upper bound of `stabilizationWindowSeconds` (one hour).
pub const MAX_STABILIZATION_WINDOW_SECONDS: i32 = 3600;
/// Upper bound of a policy's `periodSeconds` (30 minutes).
pub const MAX_PERIOD_SECONDS: i32 = 1800;

/// Validation choices that Kubernetes takes from feature gates.
#[derive(Clone, Copy, Debug)]
pub struct ValidationOptions {
    /// The lowest allowed `minReplicas`: 1, or 0 with `HPAScaleToZero`.
    pub min_replicas_lower_bound: i32,
    /// Accept Foresight's `type: Prometheus` metrics.
    pub allow_prometheus: bool,
}

impl Default for ValidationOptions {
    fn default() -> Self {
        ValidationOptions {
            min_replicas_lower_bound: 1,
            allow_prometheus: false,
        }
    }
}

/// Validates a native HPA spec as given, without defaulting: `ValidateHorizontalPodAutoscaler`.
pub fn validate_hpa_spec(
    spec: &HorizontalPodAutoscalerSpec,
    opts: ValidationOptions,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    validate_common(
        &mut errs,
        "spec",
        &spec.scale_target_ref,
        spec.min_replicas,
        spec.max_replicas,
        spec.metrics.as_deref().unwrap_or_default(),
        spec.behavior.as_ref(),
        opts,
        false,
    );
    errs
}

#[allow(clippy::too_many_arguments)]
fn validate_common(
    errs: &mut Vec<FieldError>,
    path: &str,
    target: &CrossVersionObjectReference,
    min_replicas: Option<i32>,
    max_replicas: i32,
    metrics: &[MetricSpec],
    behavior: Option<&HorizontalPodAutoscalerBehavior>,
    opts: ValidationOptions,
    has_crons: bool,
) {
    if let Some(min) = min_replicas {
        if min < opts.min_replicas_lower_bound {
            errs.push(FieldError::invalid(
                format!("{path}.minReplicas"),
                min,
                format!(
                    "must be greater than or equal to {}",
                    opts.min_replicas_lower_bound
                ),
            ));
        }
    }
    if max_replicas < 1 {
        errs.push(FieldError::invalid(
            format!("{path}.maxReplicas"),
            max_replicas,
            "must be greater than 0",
        ));
    }
    if let Some(min) = min_replicas {
        if max_replicas < min {
            errs.push(FieldError::invalid(
                format!("{path}.maxReplicas"),
                max_replicas,
                "must be greater than or equal to `minReplicas`",
            ));
        }
    }
    validate_object_reference(errs, &format!("{path}.scaleTargetRef"), target);
    let zero_check = if has_crons { None } else { min_replicas };
    validate_metrics(errs, &format!("{path}.metrics"), metrics, zero_check, opts);
    if let Some(b) = behavior {
        validate_rules(
            errs,
            &format!("{path}.behavior.scaleUp"),
            b.scale_up.as_ref(),
        );
        validate_rules(
            errs,
            &format!("{path}.behavior.scaleDown"),
            b.scale_down.as_ref(),
        );
    }
}

/// Kubernetes' `IsValidPathSegmentName`: the messages for a name that cannot be a URL path
/// segment.
pub fn path_segment_problems(name: &str) -> Vec<String> {
    for bad in [".", ".."] {
        if name == bad {
            return vec![format!("may not be '{bad}'")];
        }
    }
    ["/", "%"]
        .iter()
        .filter(|c| name.contains(**c))
        .map(|c| format!("may not contain '{c}'"))
        .collect()
}

fn validate_object_reference(
    errs: &mut Vec<FieldError>,
    path: &str,
    r: &CrossVersionObjectReference,
) {
    for (field, value) in [("kind", &r.kind), ("name", &r.name)] {
        if value.is_empty() {
            errs.push(FieldError::required(format!("{path}.{field}"), ""));
        } else {
            for msg in path_segment_problems(value) {
                errs.push(FieldError::invalid(format!("{path}.{field}"), value, msg));
            }
        }
    }
}

fn validate_metrics(
    errs: &mut Vec<FieldError>,
    path: &str,
    metrics: &[MetricSpec],
    min_replicas: Option<i32>,
    opts: ValidationOptions,
) {
    let mut has_object_or_external = false;
    for (i, m) in metrics.iter().enumerate() {
        validate_metric(errs, &format!("{path}[{i}]"), m, opts);
        has_object_or_external |= matches!(
            m.type_.as_str(),
            "Object" | "External" | "Prometheus" | "Formula"
        );
    }
    if min_replicas == Some(0) && !has_object_or_external {
        errs.push(FieldError::forbidden(
            path,
            "must specify at least one Object or External metric to support scaling to zero replicas",
        ));
    }
}

fn validate_metric(
    errs: &mut Vec<FieldError>,
    path: &str,
    m: &MetricSpec,
    opts: ValidationOptions,
) {
    let supported: &[&str] = if opts.allow_prometheus {
        &METRIC_TYPES
    } else {
        &KUBERNETES_METRIC_TYPES
    };
    if m.type_.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.type"),
            "must specify a metric source type",
        ));
    }
    let known = supported.contains(&m.type_.as_str());
    if !known {
        errs.push(FieldError::not_supported(
            format!("{path}.type"),
            &m.type_,
            supported,
        ));
    }
    // Kubernetes validates only the first populated source (in this order) and forbids the
    // others; the order here reproduces its error order.
    let mut present: Vec<&str> = Vec::new();
    if let Some(src) = &m.object {
        present.push("object");
        if present.len() == 1 {
            validate_object_source(errs, &format!("{path}.object"), src);
        }
    }
    if let Some(src) = &m.external {
        present.push("external");
        if present.len() == 1 {
            validate_external_source(errs, &format!("{path}.external"), src);
        }
    }
    if let Some(src) = &m.pods {
        present.push("pods");
        if present.len() == 1 {
            validate_pods_source(errs, &format!("{path}.pods"), src);
        }
    }
    if let Some(src) = &m.resource {
        present.push("resource");
        if present.len() == 1 {
            validate_resource_source(errs, &format!("{path}.resource"), src);
        }
    }
    if let Some(src) = &m.container_resource {
        present.push("containerResource");
        if present.len() == 1 {
            validate_container_resource_source(errs, &format!("{path}.containerResource"), src);
        }
    }
    if let Some(src) = &m.prometheus {
        present.push("prometheus");
        if present.len() == 1 {
            validate_prometheus_source(errs, &format!("{path}.prometheus"), src);
        }
    }
    if let Some(src) = &m.formula {
        present.push("formula");
        if present.len() == 1 {
            validate_formula_source(errs, &format!("{path}.formula"), src);
        }
    }
    let expected = match m.type_.as_str() {
        "Object" => Some(("object", m.object.is_some())),
        "Pods" => Some(("pods", m.pods.is_some())),
        "Resource" => Some(("resource", m.resource.is_some())),
        "External" => Some(("external", m.external.is_some())),
        "ContainerResource" => Some(("containerResource", m.container_resource.is_some())),
        "Prometheus" if opts.allow_prometheus => Some(("prometheus", m.prometheus.is_some())),
        "Formula" if opts.allow_prometheus => Some(("formula", m.formula.is_some())),
        _ => None,
    };
    match expected {
        Some((field, populated)) => {
            if !populated {
                errs.push(FieldError::required(
                    format!("{path}.{field}"),
                    "must populate information for the given metric source",
                ));
            }
        }
        None if known => {}
        None => {
            // Kubernetes reports an unknown type a second time from its type switch; parity
            // keeps the duplicate.
            errs.push(FieldError::not_supported(
                format!("{path}.type"),
                &m.type_,
                supported,
            ));
        }
    }
    // Kubernetes forbids the extra sources only when more than one is populated.
    if present.len() > 1 {
        for other in present
            .iter()
            .filter(|p| Some(**p) != expected.map(|(f, _)| f))
        {
            errs.push(FieldError::forbidden(
                format!("{path}.{other}"),
                "must populate the given metric source only",
            ));
        }
    }
}

fn validate_identifier(errs: &mut Vec<FieldError>, path: &str, id: &MetricIdentifier) {
    validate_metric_name(errs, path, &id.name);
}

/// `{path}.name`: a metric's name is required and must be a valid path segment.
fn validate_metric_name(errs: &mut Vec<FieldError>, path: &str, name: &str) {
    if name.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.name"),
            "must specify a metric name",
        ));
    } else {
        for msg in path_segment_problems(name) {
            errs.push(FieldError::invalid(format!("{path}.name"), name, msg));
        }
    }
}

fn is_positive(q: &Quantity) -> bool {
    q.milli_value().map(|v| v > 0).unwrap_or(false)
}

fn validate_target(errs: &mut Vec<FieldError>, path: &str, t: &MetricTarget) {
    if t.type_.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.type"),
            "must specify a metric target type",
        ));
    }
    if !TARGET_TYPES.contains(&t.type_.as_str()) {
        errs.push(FieldError::invalid(
            format!("{path}.type"),
            &t.type_,
            "must be either Utilization, Value, or AverageValue",
        ));
    }
    for (field, q) in [("value", &t.value), ("averageValue", &t.average_value)] {
        if let Some(q) = q {
            if q.milli_value().is_err() {
                errs.push(FieldError::invalid(
                    format!("{path}.{field}"),
                    q,
                    crate::quantity::QuantityError.to_string(),
                ));
            } else if !is_positive(q) {
                errs.push(FieldError::invalid(
                    format!("{path}.{field}"),
                    q,
                    "must be positive",
                ));
            }
        }
    }
    if let Some(u) = t.average_utilization {
        if u < 1 {
            errs.push(FieldError::invalid(
                format!("{path}.averageUtilization"),
                u,
                "must be greater than 0",
            ));
        }
    }
}

fn validate_object_source(errs: &mut Vec<FieldError>, path: &str, src: &ObjectMetricSource) {
    validate_object_reference(
        errs,
        &format!("{path}.describedObject"),
        &src.described_object,
    );
    validate_identifier(errs, &format!("{path}.metric"), &src.metric);
    validate_target(errs, &format!("{path}.target"), &src.target);
    if src.target.value.is_none() && src.target.average_value.is_none() {
        errs.push(FieldError::required(
            format!("{path}.target.averageValue"),
            "must set either a target value or averageValue",
        ));
    }
}

fn validate_external_source(errs: &mut Vec<FieldError>, path: &str, src: &ExternalMetricSource) {
    validate_identifier(errs, &format!("{path}.metric"), &src.metric);
    validate_value_or_average(errs, path, &src.target);
}

fn validate_value_or_average(errs: &mut Vec<FieldError>, path: &str, target: &MetricTarget) {
    validate_target(errs, &format!("{path}.target"), target);
    if target.value.is_none() && target.average_value.is_none() {
        errs.push(FieldError::required(
            format!("{path}.target.averageValue"),
            "must set either a target value for metric or a per-pod target",
        ));
    }
    if target.value.is_some() && target.average_value.is_some() {
        errs.push(FieldError::forbidden(
            format!("{path}.target.value"),
            "may not set both a target value for metric and a per-pod target",
        ));
    }
}

fn validate_pods_source(errs: &mut Vec<FieldError>, path: &str, src: &PodsMetricSource) {
    validate_identifier(errs, &format!("{path}.metric"), &src.metric);
    validate_target(errs, &format!("{path}.target"), &src.target);
    if src.target.average_value.is_none() {
        errs.push(FieldError::required(
            format!("{path}.target.averageValue"),
            "must specify a positive target averageValue",
        ));
    }
}

fn validate_utilization_or_value(errs: &mut Vec<FieldError>, path: &str, t: &MetricTarget) {
    validate_target(errs, &format!("{path}.target"), t);
    if t.average_utilization.is_none() && t.average_value.is_none() {
        errs.push(FieldError::required(
            format!("{path}.target.averageUtilization"),
            "must set either a target raw value or a target utilization",
        ));
    }
    if t.average_utilization.is_some() && t.average_value.is_some() {
        errs.push(FieldError::forbidden(
            format!("{path}.target.averageValue"),
            "may not set both a target raw value and a target utilization",
        ));
    }
}

fn validate_resource_source(errs: &mut Vec<FieldError>, path: &str, src: &ResourceMetricSource) {
    if src.name.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.name"),
            "must specify a resource name",
        ));
    }
    validate_utilization_or_value(errs, path, &src.target);
}

fn validate_container_resource_source(
    errs: &mut Vec<FieldError>,
    path: &str,
    src: &ContainerResourceMetricSource,
) {
    if src.name.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.name"),
            "must specify a resource name",
        ));
    } else {
        validate_container_resource_name(errs, &format!("{path}.name"), &src.name);
    }
    if src.container.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.container"),
            "must specify a container",
        ));
    } else {
        for msg in names::dns1123_label_problems(&src.container) {
            errs.push(FieldError::invalid(
                format!("{path}.container"),
                &src.container,
                msg,
            ));
        }
    }
    validate_utilization_or_value(errs, path, &src.target);
}

fn validate_prometheus_source(
    errs: &mut Vec<FieldError>,
    path: &str,
    src: &PrometheusMetricSource,
) {
    if src.name.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.name"),
            "must specify a metric name",
        ));
    } else {
        for msg in path_segment_problems(&src.name) {
            errs.push(FieldError::invalid(format!("{path}.name"), &src.name, msg));
        }
    }
    if src.query.trim().is_empty() {
        errs.push(FieldError::required(
            format!("{path}.query"),
            "must specify a PromQL query",
        ));
    }
    validate_value_or_average(errs, path, &src.target);
    if src.target.type_ == "Utilization" {
        errs.push(FieldError::invalid(
            format!("{path}.target.type"),
            &src.target.type_,
            "Prometheus metrics take a Value or AverageValue target",
        ));
    }
}

/// The most inputs a formula may read (the CRD's `maxItems`).
pub const MAX_FORMULA_INPUTS: usize = 32;

/// A formula metric: its name, its inputs (each named once, with the one source its type
/// names), a formula that reads and names only inputs, and a Value or AverageValue target.
fn validate_formula_source(errs: &mut Vec<FieldError>, path: &str, src: &FormulaMetricSource) {
    validate_metric_name(errs, path, &src.name);
    if src.inputs.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.inputs"),
            "must list the values the formula reads",
        ));
    }
    if src.inputs.len() > MAX_FORMULA_INPUTS {
        errs.push(FieldError::invalid(
            format!("{path}.inputs"),
            src.inputs.len(),
            format!("must have at most {MAX_FORMULA_INPUTS} items"),
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    for (i, input) in src.inputs.iter().enumerate() {
        let at = format!("{path}.inputs[{i}]");
        validate_formula_input(errs, &at, input);
        if !input.name.is_empty() && !seen.insert(input.name.as_str()) {
            errs.push(FieldError::duplicate(format!("{at}.name"), &input.name));
        }
    }
    let formula_path = format!("{path}.formula");
    match crate::formula::parse(&src.formula) {
        Ok(formula) => {
            let names: Vec<&str> = src.inputs.iter().map(|i| i.name.as_str()).collect();
            if let Some(name) = crate::formula::unknown_name(&formula, &names) {
                errs.push(FieldError::invalid(
                    formula_path,
                    &src.formula,
                    format!(
                        "reads {name:?}, which is not one of its inputs ({})",
                        names.join(", ")
                    ),
                ));
            }
        }
        Err(e) if src.formula.trim().is_empty() => {
            errs.push(FieldError::required(formula_path, e.message));
        }
        Err(e) => errs.push(FieldError::invalid(
            formula_path,
            &src.formula,
            format!("cannot be read: {e}"),
        )),
    }
    validate_value_or_average(errs, path, &src.target);
    if src.target.type_ == "Utilization" {
        errs.push(FieldError::invalid(
            format!("{path}.target.type"),
            &src.target.type_,
            "Formula metrics take a Value or AverageValue target",
        ));
    }
}

/// One input of a formula: a name the formula can use, and its one source.
fn validate_formula_input(errs: &mut Vec<FieldError>, path: &str, input: &FormulaInput) {
    let is_identifier = input
        .name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && input
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_');
    if input.name.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.name"),
            "must name the input, as the formula reads it",
        ));
    } else if !is_identifier {
        errs.push(FieldError::invalid(
            format!("{path}.name"),
            &input.name,
            "must be a name a formula can use: a letter or '_', then letters, digits or '_'",
        ));
    }
    match input.type_.as_str() {
        "External" => match &input.external {
            Some(e) => validate_identifier(errs, &format!("{path}.external.metric"), &e.metric),
            None => errs.push(FieldError::required(
                format!("{path}.external"),
                "must populate information for the given input type",
            )),
        },
        "Prometheus" => match &input.prometheus {
            Some(p) if p.query.trim().is_empty() => errs.push(FieldError::required(
                format!("{path}.prometheus.query"),
                "must specify a PromQL query",
            )),
            Some(_) => {}
            None => errs.push(FieldError::required(
                format!("{path}.prometheus"),
                "must populate information for the given input type",
            )),
        },
        "" => errs.push(FieldError::required(
            format!("{path}.type"),
            "must specify the input's source type",
        )),
        other => errs.push(FieldError::not_supported(
            format!("{path}.type"),
            other,
            &FORMULA_INPUT_TYPES,
        )),
    }
    let extra = match input.type_.as_str() {
        "External" => input.prometheus.is_some().then_some("prometheus"),
        "Prometheus" => input.external.is_some().then_some("external"),
        _ => None,
    };
    if let Some(extra) = extra {
        errs.push(FieldError::forbidden(
            format!("{path}.{extra}"),
            "must populate the given input type only",
        ));
    }
}

/// Kubernetes' `ValidateContainerResourceName`.
fn validate_container_resource_name(errs: &mut Vec<FieldError>, path: &str, name: &str) {
    let qualified = names::qualified_name_problems(name);
    if !qualified.is_empty() {
        for msg in qualified {
            errs.push(FieldError::invalid(path, name, msg));
        }
        return;
    }
    if !name.contains('/') {
        // Kubernetes reports both rules when both are broken.
        if !names::is_standard_resource_name(name) {
            errs.push(FieldError::invalid(
                path,
                name,
                "must be a standard resource type or fully qualified",
            ));
        }
        if !names::is_standard_container_resource_name(name) {
            errs.push(FieldError::invalid(
                path,
                name,
                "must be a standard resource for containers",
            ));
        }
    } else if !names::is_native_resource(name) && !names::is_extended_resource_name(name) {
        errs.push(FieldError::invalid(
            path,
            name,
            "doesn't follow extended resource name standard",
        ));
    }
}

fn validate_rules(errs: &mut Vec<FieldError>, path: &str, rules: Option<&HpaScalingRules>) {
    let Some(rules) = rules else { return };
    if let Some(w) = rules.stabilization_window_seconds {
        if w < 0 {
            errs.push(FieldError::invalid(
                format!("{path}.stabilizationWindowSeconds"),
                w,
                "must be greater than or equal to zero",
            ));
        }
        if w > MAX_STABILIZATION_WINDOW_SECONDS {
            errs.push(FieldError::invalid(
                format!("{path}.stabilizationWindowSeconds"),
                w,
                format!("must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"),
            ));
        }
    }
    if let Some(p) = &rules.select_policy {
        if !SELECT_POLICIES.contains(&p.as_str()) {
            errs.push(FieldError::not_supported(
                format!("{path}.selectPolicy"),
                p,
                &SELECT_POLICIES,
            ));
        }
    }
    let policies = rules.policies.as_deref().unwrap_or_default();
    if policies.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.policies"),
            "must specify at least one Policy",
        ));
    }
    for (i, p) in policies.iter().enumerate() {
        validate_policy(errs, &format!("{path}.policies[{i}]"), p);
    }
    if let Some(t) = &rules.tolerance {
        validate_tolerance(errs, &format!("{path}.tolerance"), t);
    }
}

fn validate_tolerance(errs: &mut Vec<FieldError>, path: &str, t: &Quantity) {
    match t.as_f64() {
        Err(e) => errs.push(FieldError::invalid(path, t, e.to_string())),
        Ok(v) if v < 0.0 => errs.push(FieldError::invalid(
            path,
            t,
            "must be greater than or equal to zero",
        )),
        Ok(_) => {}
    }
}

fn validate_policy(errs: &mut Vec<FieldError>, path: &str, p: &HpaScalingPolicy) {
    if !POLICY_TYPES.contains(&p.type_.as_str()) {
        errs.push(FieldError::not_supported(
            format!("{path}.type"),
            &p.type_,
            &["Percent", "Pods"],
        ));
    }
    if p.value <= 0 {
        errs.push(FieldError::invalid(
            format!("{path}.value"),
            p.value,
            "must be greater than zero",
        ));
    }
    if p.period_seconds <= 0 {
        errs.push(FieldError::invalid(
            format!("{path}.periodSeconds"),
            p.period_seconds,
            "must be greater than zero",
        ));
    }
    if p.period_seconds > MAX_PERIOD_SECONDS {
        errs.push(FieldError::invalid(
            format!("{path}.periodSeconds"),
            p.period_seconds,
            format!("must be less than or equal to {MAX_PERIOD_SECONDS}"),
        ));
    }
}

/// Validates an EffectiveHorizontalPodAutoscaler spec the way the API server would see it:
/// defaulted first (so a partial `behavior` is completed, as Kubernetes completes it), then
/// checked. Returns every problem, each with its field path.
pub fn validate_spec(spec: &EffectiveHorizontalPodAutoscalerSpec) -> Vec<FieldError> {
    let mut defaulted = spec.clone();
    crate::defaults::default_spec(&mut defaulted);
    let spec = &defaulted;
    let mut errs = Vec::new();
    // Scale-to-zero (Kubernetes' HPAScaleToZero) needs a source that sees load without pods:
    // an Object, External, Prometheus or Formula metric, or a cron that can wake the target.
    let opts = ValidationOptions {
        min_replicas_lower_bound: 0,
        allow_prometheus: true,
    };
    validate_common(
        &mut errs,
        "spec",
        &spec.scale_target_ref,
        spec.min_replicas,
        spec.max_replicas,
        &spec.metrics,
        spec.behavior.as_ref(),
        opts,
        !spec.crons.is_empty(),
    );
    if let Some(n) = spec.specific_replicas {
        if spec.strategy() != ScaleStrategy::Preview {
            errs.push(FieldError::forbidden(
                "spec.specificReplicas",
                "may only be set with scaleStrategy: Preview",
            ));
        }
        if n < 0 {
            errs.push(FieldError::invalid(
                "spec.specificReplicas",
                n,
                "must be greater than or equal to 0",
            ));
        }
    }
    if let Some(s) = spec.sync_period_seconds {
        if !(1..=3600).contains(&s) {
            errs.push(FieldError::invalid(
                "spec.syncPeriodSeconds",
                s,
                "must be between 1 and 3600",
            ));
        }
    }
    if let Some(t) = &spec.tolerance {
        validate_tolerance(&mut errs, "spec.tolerance", t);
    }
    for (field, value) in [
        (
            "cpuInitializationPeriodSeconds",
            spec.cpu_initialization_period_seconds,
        ),
        (
            "initialReadinessDelaySeconds",
            spec.initial_readiness_delay_seconds,
        ),
    ] {
        if let Some(v) = value {
            if v < 0 {
                errs.push(FieldError::invalid(
                    format!("spec.{field}"),
                    v,
                    "must be greater than or equal to zero",
                ));
            }
        }
    }
    if let Some(w) = spec.downscale_stabilization_window_seconds {
        if !(0..=MAX_STABILIZATION_WINDOW_SECONDS).contains(&w) {
            errs.push(FieldError::invalid(
                "spec.downscaleStabilizationWindowSeconds",
                w,
                format!("must be between 0 and {MAX_STABILIZATION_WINDOW_SECONDS}"),
            ));
        }
    }
    if let Some(f) = &spec.fallback {
        crate::fallback::validate_fallback(&mut errs, "spec.fallback", f);
    }
    crate::idle::validate_idle(
        &mut errs,
        spec.idle.as_ref(),
        spec.min_replicas_or_default(),
        &spec.metrics,
        !spec.crons.is_empty(),
    );
    crate::cron::validate_crons(&mut errs, "spec.crons", &spec.crons);
    if let Some(p) = &spec.prediction {
        crate::prediction::validate_prediction(&mut errs, "spec.prediction", p);
    }
    if let Some(o) = &spec.objective {
        crate::objective::validate_objective(
            &mut errs,
            "spec.objective",
            o,
            &spec.metrics,
            spec.prediction.is_some(),
        );
    }
    errs
}

/// Kubernetes' name and resource-name rules.
pub mod names {
    const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
    const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
    const QUALIFIED_NAME_MSG: &str =
        "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
    const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";

    /// Kubernetes' `RegexError` wording.
    fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
        let mut s = format!("{msg} (e.g. ");
        for (i, e) in examples.iter().enumerate() {
            if i > 0 {
                s.push_str(" or ");
            }
            s.push_str(&format!("'{e}', "));
        }
        s.push_str(&format!("regex used for validation is '{fmt}')"));
        s
    }

    fn is_label(s: &str) -> bool {
        let b = s.as_bytes();
        !b.is_empty()
            && b.iter()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
            && b[0] != b'-'
            && b[b.len() - 1] != b'-'
    }

    /// `IsDNS1123Label`.
    pub fn dns1123_label_problems(s: &str) -> Vec<String> {
        let mut errs = Vec::new();
        if s.len() > 63 {
            errs.push("must be no more than 63 characters".to_owned());
        }
        if !is_label(s) {
            errs.push(regex_error(
                DNS1123_LABEL_MSG,
                "[a-z0-9]([-a-z0-9]*[a-z0-9])?",
                &["my-name", "123-abc"],
            ));
        }
        errs
    }

    /// `IsDNS1123Subdomain`.
    pub fn dns1123_subdomain_problems(s: &str) -> Vec<String> {
        let mut errs = Vec::new();
        if s.len() > 253 {
            errs.push("must be no more than 253 characters".to_owned());
        }
        if !s.split('.').all(is_label) {
            errs.push(regex_error(
                DNS1123_SUBDOMAIN_MSG,
                "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
                &["example.com"],
            ));
        }
        errs
    }

    fn is_qualified_name_part(s: &str) -> bool {
        let b = s.as_bytes();
        !b.is_empty()
            && b.iter()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
    }

    /// `IsValidLabelValue`.
    pub fn label_value_problems(s: &str) -> Vec<String> {
        const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
        const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
        let mut errs = Vec::new();
        if s.len() > 63 {
            errs.push("must be no more than 63 characters".to_owned());
        }
        if !s.is_empty() && !is_qualified_name_part(s) {
            errs.push(regex_error(
                LABEL_VALUE_MSG,
                LABEL_VALUE_FMT,
                &["MyValue", "my_value", "12345"],
            ));
        }
        errs
    }

    /// `IsQualifiedName`.
    pub fn qualified_name_problems(s: &str) -> Vec<String> {
        let mut errs = Vec::new();
        let parts: Vec<&str> = s.split('/').collect();
        let name = match parts.as_slice() {
            [name] => *name,
            [prefix, name] => {
                if prefix.is_empty() {
                    errs.push("prefix part must be non-empty".to_owned());
                } else {
                    errs.extend(dns1123_subdomain_problems(prefix).into_iter().map(|m| format!("prefix part {m}")));
                }
                *name
            }
            _ => {
                return vec![format!(
                    "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                    regex_error(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, &["MyName", "my.name", "123-abc"])
                )]
            }
        };
        if name.is_empty() {
            errs.push("name part must be non-empty".to_owned());
        } else if name.len() > 63 {
            errs.push("name part must be no more than 63 characters".to_owned());
        }
        if !is_qualified_name_part(name) {
            errs.push(format!(
                "name part {}",
                regex_error(
                    QUALIFIED_NAME_MSG,
                    QUALIFIED_NAME_FMT,
                    &["MyName", "my.name", "123-abc"]
                )
            ));
        }
        errs
    }

    /// `IsStandardResourceName`.
    pub fn is_standard_resource_name(s: &str) -> bool {
        const STANDARD: &[&str] = &[
            "cpu",
            "memory",
            "ephemeral-storage",
            "requests.cpu",
            "requests.memory",
            "requests.ephemeral-storage",
            "limits.cpu",
            "limits.memory",
            "limits.ephemeral-storage",
            "pods",
            "resourcequotas",
            "services",
            "replicationcontrollers",
            "secrets",
            "configmaps",
            "persistentvolumeclaims",
            "storage",
            "requests.storage",
            "services.nodeports",
            "services.loadbalancers",
        ];
        STANDARD.contains(&s) || s.starts_with("hugepages-") || s.starts_with("requests.hugepages-")
    }

    /// `IsStandardContainerResourceName`.
    pub fn is_standard_container_resource_name(s: &str) -> bool {
        matches!(s, "cpu" | "memory" | "ephemeral-storage") || s.starts_with("hugepages-")
    }

    /// `IsNativeResource`: unprefixed or in the `kubernetes.io` domain.
    pub fn is_native_resource(s: &str) -> bool {
        !s.contains('/') || s.contains("kubernetes.io/")
    }

    /// `IsExtendedResourceName`.
    pub fn is_extended_resource_name(s: &str) -> bool {
        if is_native_resource(s) || s.starts_with("requests.") {
            return false;
        }
        qualified_name_problems(&format!("requests.{s}")).is_empty()
    }
}
