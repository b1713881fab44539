//! The autoscaling/v2 shapes that Foresight's spec and status reuse field for field, so that a
//! native HorizontalPodAutoscaler's `spec.metrics` and `spec.behavior` paste in unchanged.
//!
//! Every scalar a user may leave out is optional or defaulted here, even where Kubernetes
//! requires it: validation then reports the missing field with its path instead of the
//! deserializer failing on the whole document.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::quantity::Quantity;
use crate::schema::{non_negative_quantity, path_segment, positive_quantity};

// The values of the string enums, in the order Kubernetes lists them in its messages
// (sorted). One list each: the CRD's `enum`s, validation and the compiler read them here.

/// `spec.metrics[*].type` values that Kubernetes knows.
pub const KUBERNETES_METRIC_TYPES: [&str; 5] = [
    "ContainerResource",
    "External",
    "Object",
    "Pods",
    "Resource",
];
/// `spec.metrics[*].type` values, with Foresight's own `Formula` and `Prometheus`.
pub const METRIC_TYPES: [&str; 7] = [
    "ContainerResource",
    "External",
    "Formula",
    "Object",
    "Pods",
    "Prometheus",
    "Resource",
];
/// `spec.metrics[*].formula.inputs[*].type` values: the sources a formula can read.
pub const FORMULA_INPUT_TYPES: [&str; 2] = ["External", "Prometheus"];
/// `target.type` values.
pub const TARGET_TYPES: [&str; 3] = ["AverageValue", "Utilization", "Value"];
/// `behavior.*.selectPolicy` values.
pub const SELECT_POLICIES: [&str; 3] = ["Disabled", "Max", "Min"];
/// `behavior.*.policies[*].type` values.
pub const POLICY_TYPES: [&str; 2] = ["Percent", "Pods"];

/// Identifies the workload to scale: anything that serves the `scale` subresource.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["kind", "name"]))]
pub struct CrossVersionObjectReference {
    /// Kind of the referent, e.g. `Deployment`.
    #[serde(default)]
    #[schemars(length(min = 1), transform = path_segment)]
    pub kind: String,
    /// Name of the referent.
    #[serde(default)]
    #[schemars(length(min = 1), transform = path_segment)]
    pub name: String,
    /// API version of the referent, e.g. `apps/v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
}

/// A label query over a set of resources (metav1.LabelSelector).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    /// Labels that must all match exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_labels: Option<BTreeMap<String, String>>,
    /// Set-based requirements; all must hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_expressions: Option<Vec<LabelSelectorRequirement>>,
}

/// One set-based requirement of a label selector.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelectorRequirement {
    /// The label key.
    #[serde(default)]
    pub key: String,
    /// `In`, `NotIn`, `Exists` or `DoesNotExist`.
    #[serde(default)]
    pub operator: String,
    /// The values for `In` and `NotIn`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<String>>,
}

/// The operator of a set-based selector requirement. On the wire it stays a string, as in
/// Kubernetes, so that an unknown operator is reported in Kubernetes' words; readers parse it
/// here, in one place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelectorOperator {
    /// The label has one of the values.
    In,
    /// The label is absent or has none of the values.
    NotIn,
    /// The label is present.
    Exists,
    /// The label is absent.
    DoesNotExist,
}

impl SelectorOperator {
    /// The operator `name` spells, if it is one.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "In" => Some(SelectorOperator::In),
            "NotIn" => Some(SelectorOperator::NotIn),
            "Exists" => Some(SelectorOperator::Exists),
            "DoesNotExist" => Some(SelectorOperator::DoesNotExist),
            _ => None,
        }
    }

    /// One requirement in Kubernetes' string form: `key in (a,b)`, `key notin (a,b)`, `key`,
    /// `!key`; an unknown operator is written as it is, between the key and the values.
    pub fn requirement_text(operator: &str, key: &str, values: &[String]) -> String {
        let list = values.join(",");
        match SelectorOperator::parse(operator) {
            Some(SelectorOperator::In) => format!("{key} in ({list})"),
            Some(SelectorOperator::NotIn) => format!("{key} notin ({list})"),
            Some(SelectorOperator::Exists) => key.to_owned(),
            Some(SelectorOperator::DoesNotExist) => format!("!{key}"),
            None => format!("{key} {operator} ({list})"),
        }
    }
}

impl LabelSelector {
    /// The selector in Kubernetes' string form (`a=b,c in (d,e)`), as used in `labelSelector=`
    /// query parameters.
    pub fn to_query(&self) -> String {
        let mut parts = Vec::new();
        if let Some(labels) = &self.match_labels {
            for (k, v) in labels {
                parts.push(format!("{k}={v}"));
            }
        }
        for req in self.match_expressions.iter().flatten() {
            parts.push(SelectorOperator::requirement_text(
                &req.operator,
                &req.key,
                req.values.as_deref().unwrap_or_default(),
            ));
        }
        parts.join(",")
    }

    /// The selector as Go's `%+v` prints a `*metav1.LabelSelector`; Kubernetes embeds this
    /// text in external-metric names and errors, and parity means printing it the same way.
    pub fn go_format(selector: Option<&LabelSelector>) -> String {
        let Some(sel) = selector else {
            return "nil".to_owned();
        };
        let mut s = String::from("&LabelSelector{MatchLabels:map[string]string{");
        for (k, v) in sel.match_labels.iter().flatten() {
            s.push_str(&format!("{k}: {v},"));
        }
        s.push_str("},MatchExpressions:[]LabelSelectorRequirement{");
        for r in sel.match_expressions.iter().flatten() {
            s.push_str(&format!(
                "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}},",
                r.key,
                r.operator,
                r.values.clone().unwrap_or_default().join(" ")
            ));
        }
        s.push_str("},}");
        s
    }
}

/// Names a metric and optionally narrows it with a label selector.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["name"]))]
pub struct MetricIdentifier {
    /// The metric's name.
    #[serde(default)]
    #[schemars(length(min = 1), transform = path_segment)]
    pub name: String,
    /// Narrows the metric to the series with these labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
}

/// The target value of a metric: exactly one of `value`, `averageValue`,
/// `averageUtilization`, as `type` says.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MetricTarget {
    /// `Utilization`, `Value` or `AverageValue`.
    #[serde(rename = "type", default)]
    #[schemars(extend("enum" = TARGET_TYPES))]
    pub type_: String,
    /// Target total value (Object, External, Prometheus).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = positive_quantity)]
    pub value: Option<Quantity>,
    /// Target value per pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = positive_quantity)]
    pub average_value: Option<Quantity>,
    /// Target average utilization, in percent of the pods' requests (Resource metrics).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub average_utilization: Option<i32>,
}

/// A metric of a single Kubernetes object (custom.metrics.k8s.io).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend(
    "required" = ["describedObject", "metric", "target"],
    "x-kubernetes-validations" = [{"rule": "has(self.target.value) || has(self.target.averageValue)", "message": "Object metrics need target.value or target.averageValue"}],
))]
pub struct ObjectMetricSource {
    /// The object the metric describes, e.g. an Ingress.
    #[serde(default)]
    pub described_object: CrossVersionObjectReference,
    /// The target value.
    #[serde(default)]
    pub target: MetricTarget,
    /// The metric.
    #[serde(default)]
    pub metric: MetricIdentifier,
}

/// A per-pod custom metric, averaged over the target's pods (custom.metrics.k8s.io).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend(
    "required" = ["metric", "target"],
    "x-kubernetes-validations" = [{"rule": "has(self.target.averageValue)", "message": "Pods metrics need target.averageValue"}],
))]
pub struct PodsMetricSource {
    /// The metric.
    #[serde(default)]
    pub metric: MetricIdentifier,
    /// The target; only `AverageValue` is supported.
    #[serde(default)]
    pub target: MetricTarget,
}

/// A resource (CPU, memory) of the target's pods, from metrics.k8s.io.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend(
    "required" = ["name", "target"],
    "x-kubernetes-validations" = [{"rule": "has(self.target.averageUtilization) != has(self.target.averageValue)", "message": "set exactly one of target.averageUtilization and target.averageValue"}],
))]
pub struct ResourceMetricSource {
    /// The resource, e.g. `cpu` or `memory`.
    #[serde(default)]
    pub name: String,
    /// The target: `Utilization` (percent of requests) or `AverageValue`.
    #[serde(default)]
    pub target: MetricTarget,
}

/// A resource of one named container in each of the target's pods.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend(
    "required" = ["name", "target", "container"],
    "x-kubernetes-validations" = [{"rule": "has(self.target.averageUtilization) != has(self.target.averageValue)", "message": "set exactly one of target.averageUtilization and target.averageValue"}],
))]
pub struct ContainerResourceMetricSource {
    /// The resource, e.g. `cpu`.
    #[serde(default)]
    pub name: String,
    /// The target: `Utilization` or `AverageValue`.
    #[serde(default)]
    pub target: MetricTarget,
    /// The container whose usage counts.
    #[serde(default)]
    #[schemars(length(max = 63), regex(pattern = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"))]
    pub container: String,
}

/// A metric not tied to any Kubernetes object (external.metrics.k8s.io).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend(
    "required" = ["metric", "target"],
    "x-kubernetes-validations" = [{"rule": "has(self.target.value) != has(self.target.averageValue)", "message": "set exactly one of target.value and target.averageValue"}],
))]
pub struct ExternalMetricSource {
    /// The metric.
    #[serde(default)]
    pub metric: MetricIdentifier,
    /// The target: `Value` or `AverageValue`.
    #[serde(default)]
    pub target: MetricTarget,
}

/// Foresight's own metric type: a PromQL query evaluated directly against Prometheus.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend(
    "required" = ["name", "query", "target"],
    "x-kubernetes-validations" = [{"rule": "has(self.target.value) != has(self.target.averageValue)", "message": "set exactly one of target.value and target.averageValue"}, {"rule": "self.target.type != 'Utilization'", "message": "Prometheus metrics take a Value or AverageValue target"}],
))]
pub struct PrometheusMetricSource {
    /// A name for the metric, used in status, events and the explanation.
    #[serde(default)]
    #[schemars(transform = path_segment)]
    pub name: String,
    /// An instant PromQL query returning one series (or a scalar); the value is its sample.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub query: String,
    /// The query used for prediction history; defaults to `query` itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_query: Option<String>,
    /// The target: `Value` (total) or `AverageValue` (per pod), as for External metrics.
    #[serde(default)]
    pub target: MetricTarget,
}

/// Foresight's formula metric (KEDA's `advanced.scalingModifiers`): one value computed from
/// several inputs by an expression in expr-lang, the language KEDA evaluates its formulas in,
/// and scaled on like an External metric.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend(
    "required" = ["name", "formula", "inputs", "target"],
    "x-kubernetes-validations" = [{"rule": "has(self.target.value) != has(self.target.averageValue)", "message": "set exactly one of target.value and target.averageValue"}, {"rule": "self.target.type != 'Utilization'", "message": "Formula metrics take a Value or AverageValue target"}],
))]
pub struct FormulaMetricSource {
    /// A name for the computed metric, used in status, events and the explanation.
    #[serde(default)]
    #[schemars(transform = path_segment)]
    pub name: String,
    /// The expression over the inputs' names, e.g. `(queue + inflight) / 2`: arithmetic,
    /// comparisons, `cond ? a : b`, `a ?? b`, and functions such as `abs`, `ceil`, `floor`,
    /// `round`, `max`, `min`, `int`, `float`. It must give a finite number.
    #[serde(default)]
    #[schemars(length(min = 1, max = 1024))]
    pub formula: String,
    /// The values the formula reads, each under its own name (at most 32).
    #[serde(default)]
    #[schemars(length(min = 1, max = 32))]
    pub inputs: Vec<FormulaInput>,
    /// The target for the formula's value: `Value` (total) or `AverageValue` (per pod).
    #[serde(default)]
    pub target: MetricTarget,
}

/// One value a formula reads: an External metric or a PromQL query, without a target of its
/// own.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend(
    "required" = ["name", "type"],
    "x-kubernetes-validations" = [{"rule": "self.type == 'External' ? has(self.external) && !has(self.prometheus) : has(self.prometheus) && !has(self.external)", "message": "set the source named by type, and only it"}],
))]
pub struct FormulaInput {
    /// The name the formula uses for this value: a letter or `_`, then letters, digits or `_`.
    #[serde(default)]
    #[schemars(regex(pattern = r"^[A-Za-z_][A-Za-z0-9_]*$"))]
    pub name: String,
    /// `External` or `Prometheus`.
    #[serde(rename = "type", default)]
    #[schemars(extend("enum" = FORMULA_INPUT_TYPES))]
    pub type_: String,
    /// For `type: External`: the metric; its values are summed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external: Option<FormulaExternalInput>,
    /// For `type: Prometheus`: the query; it must return one series or a scalar.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prometheus: Option<FormulaPrometheusInput>,
}

/// An External metric read as a formula input.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["metric"]))]
pub struct FormulaExternalInput {
    /// The metric.
    #[serde(default)]
    pub metric: MetricIdentifier,
}

/// A PromQL query read as a formula input.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["query"]))]
pub struct FormulaPrometheusInput {
    /// An instant PromQL query returning one series (or a scalar).
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub query: String,
}

/// One metric to scale on (autoscaling/v2 MetricSpec, plus `type: Prometheus` and
/// `type: Formula`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend(
    "required" = ["type"],
    "x-kubernetes-validations" = [
        {
            "rule": "self.type == 'Resource' ? has(self.resource) : self.type == 'ContainerResource' ? has(self.containerResource) : self.type == 'Pods' ? has(self.pods) : self.type == 'Object' ? has(self.object) : self.type == 'External' ? has(self.external) : self.type == 'Formula' ? has(self.formula) : has(self.prometheus)",
            "message": "the source named by type must be set (type: Resource needs resource, and so on)",
        },
        {
            "rule": "[has(self.resource), has(self.containerResource), has(self.pods), has(self.object), has(self.external), has(self.prometheus), has(self.formula)].filter(x, x).size() <= 1",
            "message": "a metric sets exactly one source, the one its type names",
        },
        {
            "rule": "!has(self.activation) || self.type in ['Object', 'External', 'Prometheus', 'Formula']",
            "message": "only Object, External, Prometheus and Formula metrics can be read while the target is idle, so only they have an activation value",
        },
    ],
))]
pub struct MetricSpec {
    /// `Resource`, `ContainerResource`, `Pods`, `Object`, `External`, `Prometheus` or
    /// `Formula`.
    #[serde(rename = "type", default)]
    #[schemars(extend("enum" = METRIC_TYPES))]
    pub type_: String,
    /// For `type: Object`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<ObjectMetricSource>,
    /// For `type: Pods`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pods: Option<PodsMetricSource>,
    /// For `type: Resource`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<ResourceMetricSource>,
    /// For `type: ContainerResource`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_resource: Option<ContainerResourceMetricSource>,
    /// For `type: External`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external: Option<ExternalMetricSource>,
    /// For `type: Prometheus` (Foresight only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prometheus: Option<PrometheusMetricSource>,
    /// For `type: Formula` (Foresight only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub formula: Option<FormulaMetricSource>,
    /// With `spec.idle` (Foresight only): the value above which this metric wakes an idle
    /// target, and below or at which it lets the target go idle (KEDA's
    /// `activationThreshold`, or `activationTarget` for a formula; default 0). Object,
    /// External, Prometheus and Formula metrics only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = crate::schema::non_negative_quantity)]
    pub activation: Option<Quantity>,
}

/// How fast one direction may scale (autoscaling/v2 HPAScalingRules).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HpaScalingRules {
    /// Seconds of past recommendations to consider (0..3600). Scale-up uses the lowest,
    /// scale-down the highest recommendation inside the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 3600))]
    pub stabilization_window_seconds: Option<i32>,
    /// `Max` (the policy allowing the largest change), `Min`, or `Disabled`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = SELECT_POLICIES))]
    pub select_policy: Option<String>,
    /// Rate limits; each allows a change of `value` pods or percent per `periodSeconds`.
    /// An explicit empty list is kept (and rejected by validation) but, as in Kubernetes'
    /// JSON, not written out.
    #[serde(default, skip_serializing_if = "none_or_empty")]
    #[schemars(length(min = 1))]
    pub policies: Option<Vec<HpaScalingPolicy>>,
    /// The usage-ratio dead band for this direction (e.g. `0.05`); the controller's
    /// tolerance (0.1 by default) applies when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = non_negative_quantity)]
    pub tolerance: Option<Quantity>,
}

fn none_or_empty<T>(v: &Option<Vec<T>>) -> bool {
    v.as_ref().is_none_or(Vec::is_empty)
}

/// One rate limit.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["type", "value", "periodSeconds"]))]
pub struct HpaScalingPolicy {
    /// `Pods` or `Percent`.
    #[serde(rename = "type", default)]
    #[schemars(extend("enum" = POLICY_TYPES))]
    pub type_: String,
    /// The allowed change; must be greater than zero.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub value: i32,
    /// The period the change is counted over, 1..1800 seconds.
    #[serde(default)]
    #[schemars(range(min = 1, max = 1800))]
    pub period_seconds: i32,
}

/// Scaling behavior per direction (autoscaling/v2 HorizontalPodAutoscalerBehavior).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HorizontalPodAutoscalerBehavior {
    /// Rules for scaling up. Default: no stabilization; the larger of 4 pods or 100% per 15 s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_up: Option<HpaScalingRules>,
    /// Rules for scaling down. Default: the controller's 300 s stabilization; 100% per 15 s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_down: Option<HpaScalingRules>,
}

/// The current value of a metric, as reported in status.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MetricValueStatus {
    /// Total value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Quantity>,
    /// Value per pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub average_value: Option<Quantity>,
    /// Utilization in percent of requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub average_utilization: Option<i32>,
}

/// Status of an Object metric.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMetricStatus {
    /// The metric.
    pub metric: MetricIdentifier,
    /// Its current value.
    pub current: MetricValueStatus,
    /// The object it describes.
    pub described_object: CrossVersionObjectReference,
}

/// Status of a Pods metric.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodsMetricStatus {
    /// The metric.
    pub metric: MetricIdentifier,
    /// Its current value.
    pub current: MetricValueStatus,
}

/// Status of a Resource metric.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceMetricStatus {
    /// The resource.
    pub name: String,
    /// Its current value.
    pub current: MetricValueStatus,
}

/// Status of a ContainerResource metric.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerResourceMetricStatus {
    /// The resource.
    pub name: String,
    /// Its current value.
    pub current: MetricValueStatus,
    /// The container.
    pub container: String,
}

/// Status of an External metric.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalMetricStatus {
    /// The metric.
    pub metric: MetricIdentifier,
    /// Its current value.
    pub current: MetricValueStatus,
}

/// Status of a Prometheus metric.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PrometheusMetricStatus {
    /// The metric's name.
    pub name: String,
    /// Its current value.
    pub current: MetricValueStatus,
}

/// Status of a Formula metric.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FormulaMetricStatus {
    /// The metric's name.
    pub name: String,
    /// The formula's current value.
    pub current: MetricValueStatus,
}

/// The last observed value of one metric (autoscaling/v2 MetricStatus). A metric that could
/// not be read leaves an entry with an empty `type`, as Kubernetes does.
// All but the Resource status are boxed (serialized as they are): one is built on every
// decision and moved several times, and inline the seven kinds took 848 bytes. A plain
// comment, not documentation: the doc comment is the CRD's description.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MetricStatus {
    /// The metric type, or empty when it could not be read.
    #[serde(rename = "type", default)]
    pub type_: String,
    /// For `Object`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<Box<ObjectMetricStatus>>,
    /// For `Pods`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pods: Option<Box<PodsMetricStatus>>,
    /// For `Resource`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<ResourceMetricStatus>,
    /// For `ContainerResource`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_resource: Option<Box<ContainerResourceMetricStatus>>,
    /// For `External`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external: Option<Box<ExternalMetricStatus>>,
    /// For `Prometheus`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prometheus: Option<Box<PrometheusMetricStatus>>,
    /// For `Formula`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub formula: Option<Box<FormulaMetricStatus>>,
}

/// The parts of `metadata` Foresight reads from manifests; everything else is kept verbatim.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    /// Object name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Object namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// Annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
    /// Any other metadata, carried through unchanged.
    #[serde(flatten)]
    #[schemars(skip)]
    pub other: BTreeMap<String, serde_json::Value>,
}

/// A native autoscaling/v2 HorizontalPodAutoscaler, as read from a manifest.
pub type HorizontalPodAutoscaler =
    crate::manifest::Object<HorizontalPodAutoscalerSpec, HorizontalPodAutoscalerStatus>;

/// autoscaling/v2 HorizontalPodAutoscalerSpec.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HorizontalPodAutoscalerSpec {
    /// The target.
    #[serde(default)]
    pub scale_target_ref: CrossVersionObjectReference,
    /// Lower bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_replicas: Option<i32>,
    /// Upper bound.
    #[serde(default)]
    pub max_replicas: i32,
    /// Metrics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Vec<MetricSpec>>,
    /// Behavior.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behavior: Option<HorizontalPodAutoscalerBehavior>,
}

/// autoscaling/v2 HorizontalPodAutoscalerStatus.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HorizontalPodAutoscalerStatus {
    /// Observed generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Last scale time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_scale_time: Option<jiff::Timestamp>,
    /// Current replicas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_replicas: Option<i32>,
    /// Desired replicas.
    #[serde(default)]
    pub desired_replicas: i32,
    /// Current metrics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_metrics: Option<Vec<MetricStatus>>,
    /// Conditions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<crate::status::Condition>>,
}
