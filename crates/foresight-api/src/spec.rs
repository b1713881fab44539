//! The EffectiveHorizontalPodAutoscaler spec: a superset of autoscaling/v2's HPA spec and of
//! Crane's EHPA spec.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cron::CronSpec;
use crate::fallback::FallbackSpec;
use crate::hpa::{CrossVersionObjectReference, HorizontalPodAutoscalerBehavior, MetricSpec};
use crate::idle::IdleSpec;
use crate::prediction::PredictionSpec;
use crate::quantity::Quantity;
use crate::schema::non_negative_quantity;
#[cfg(feature = "kube")]
use crate::status::EffectiveHorizontalPodAutoscalerStatus;

/// API group of Foresight's resources.
pub const GROUP: &str = "autoscaling.foresight.dev";
/// API version of the EffectiveHorizontalPodAutoscaler.
pub const VERSION: &str = "v1alpha1";
/// `apiVersion` of the EffectiveHorizontalPodAutoscaler.
pub const API_VERSION: &str = "autoscaling.foresight.dev/v1alpha1";
/// `kind` of the EffectiveHorizontalPodAutoscaler.
pub const KIND: &str = "EffectiveHorizontalPodAutoscaler";

/// What the autoscaler does with its decision.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ScaleStrategy {
    /// Apply the decision to the workload.
    #[default]
    Auto,
    /// Compute and record the decision without touching the workload (or hold
    /// `specificReplicas`, when set).
    Preview,
}

// With the `kube` feature this type also derives the resource, `EffectiveHorizontalPodAutoscaler`,
// and its CRD (`EffectiveHorizontalPodAutoscaler::crd()`). The constraints the API server checks
// are attributes on the fields (`range`, `length`, `pattern`, and CEL rules as
// `x-kubernetes-validations`); `validate_spec` checks the same rules and those CEL cannot say,
// and a differential test against a real API server holds the two together.
/// Desired behaviour of an EffectiveHorizontalPodAutoscaler.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(
    feature = "kube",
    derive(kube::CustomResource),
    kube(
        group = "autoscaling.foresight.dev",
        version = "v1alpha1",
        kind = "EffectiveHorizontalPodAutoscaler",
        plural = "effectivehorizontalpodautoscalers",
        // Not Crane's `ehpa`: a user migrating from Crane has both CRDs (same kind, other
        // group), and a shared short name would address only one of them.
        shortname = "fhpa",
        category = "all",
        category = "autoscaling",
        category = "foresight",
        namespaced,
        status = "EffectiveHorizontalPodAutoscalerStatus",
        derive = "Default",
        derive = "PartialEq",
        doc = "EffectiveHorizontalPodAutoscaler scales a workload on metrics (as the \
               HorizontalPodAutoscaler does), on forecasts and on cron windows, and records why.",
        // The columns of `kubectl get hpa` first, then what only Foresight knows.
        printcolumn = r#"{"name":"Reference","type":"string","jsonPath":".spec.scaleTargetRef.name","description":"The workload being scaled"}"#,
        printcolumn = r#"{"name":"Targets","type":"string","jsonPath":".status.targets","description":"Each metric's current value against its target"}"#,
        printcolumn = r#"{"name":"Min","type":"integer","jsonPath":".spec.minReplicas","description":"Lower bound on replicas"}"#,
        printcolumn = r#"{"name":"Max","type":"integer","jsonPath":".spec.maxReplicas","description":"Upper bound on replicas"}"#,
        printcolumn = r#"{"name":"Current","type":"integer","jsonPath":".status.currentReplicas","description":"Replicas of the target"}"#,
        printcolumn = r#"{"name":"Desired","type":"integer","jsonPath":".status.desiredReplicas","description":"Replicas the autoscaler wants"}"#,
        printcolumn = r#"{"name":"Limited","type":"string","jsonPath":".status.lastDecision.limits[-1:].reason","description":"The last limit that changed the decision (stabilization, policy, bounds)"}"#,
        printcolumn = r#"{"name":"Strategy","type":"string","jsonPath":".spec.scaleStrategy","description":"Auto applies, Preview only records"}"#,
        printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status","description":"Whether the autoscaler could read its sources and act"}"#,
        printcolumn = r#"{"name":"Paused","type":"string","jsonPath":".status.conditions[?(@.type==\"Paused\")].reason","description":"Which pause annotation holds the autoscaler (empty or NotPaused: none)"}"#,
        printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp","description":"Time since creation"}"#,
    )
)]
#[serde(rename_all = "camelCase")]
#[schemars(
    transform = crate::schema::drop_defaults,
    extend(
        "required" = ["scaleTargetRef", "maxReplicas"],
        "x-kubernetes-validations" = [
            {
                "rule": "!has(self.minReplicas) || self.minReplicas <= self.maxReplicas",
                "message": "minReplicas must be less than or equal to maxReplicas",
            },
            {
                "rule": "!has(self.specificReplicas) || (has(self.scaleStrategy) && self.scaleStrategy == 'Preview')",
                "message": "specificReplicas may only be set with scaleStrategy: Preview",
            },
            {
                "rule": "!has(self.minReplicas) || self.minReplicas > 0 || (has(self.crons) && size(self.crons) > 0) || (has(self.metrics) && self.metrics.exists(m, m.type == 'Object' || m.type == 'External' || m.type == 'Prometheus' || m.type == 'Formula'))",
                "message": "minReplicas: 0 needs an Object, External, Prometheus or Formula metric, or a cron, to see load while the workload has no pods",
            },
            {
                "rule": "!has(self.idle) || (has(self.crons) && size(self.crons) > 0) || (has(self.metrics) && self.metrics.exists(m, m.type == 'Object' || m.type == 'External' || m.type == 'Prometheus' || m.type == 'Formula'))",
                "message": "idle needs an Object, External, Prometheus or Formula metric, or a cron, to see load while the target is idle",
            },
            {
                "rule": "!has(self.idle) || !has(self.idle.replicas) || self.idle.replicas == 0 || self.idle.replicas < (has(self.minReplicas) ? self.minReplicas : 1)",
                "message": "idle.replicas must be less than minReplicas (or 0 with minReplicas: 0)",
            },
            {
                "rule": "has(self.idle) || !has(self.metrics) || self.metrics.all(m, !has(m.activation))",
                "message": "an activation value is only used with spec.idle",
            },
            {
                "rule": "!has(self.objective) || has(self.prediction)",
                "message": "an objective is met by replaying the history prediction keeps: set spec.prediction too",
            },
        ],
    )
)]
pub struct EffectiveHorizontalPodAutoscalerSpec {
    /// The workload to scale; any resource with a `scale` subresource.
    #[serde(default)]
    pub scale_target_ref: CrossVersionObjectReference,
    /// Lower bound on replicas (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub min_replicas: Option<i32>,
    /// Upper bound on replicas.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_replicas: i32,
    /// `Auto` applies decisions; `Preview` only records them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_strategy: Option<ScaleStrategy>,
    /// Preview only: hold the workload at this many replicas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub specific_replicas: Option<i32>,
    /// Metrics to scale on (autoscaling/v2 MetricSpec list, plus `type: Prometheus`). The
    /// largest proposal wins. With neither metrics nor crons, 80% CPU utilization applies.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_METRICS))]
    pub metrics: Vec<MetricSpec>,
    /// Scaling behavior per direction (autoscaling/v2 `behavior`). Absent: the legacy
    /// Kubernetes path (downscale stabilization only, scale-up at most 2x or +4 per sync).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behavior: Option<HorizontalPodAutoscalerBehavior>,
    /// Forecast the metrics and scale for the coming peak. Off when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prediction: Option<PredictionSpec>,
    /// The risk accepted, instead of the knobs: the autoscaler replays its recent history
    /// under a few operating points and runs at the cheapest that meets it. Absent: the spec
    /// runs as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objective: Option<crate::objective::ObjectiveSpec>,
    /// Time windows that hold a number of replicas.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        length(max = MAX_CRONS),
        extend("x-kubernetes-validations" = [{
            "rule": "self.all(c, self.exists_one(d, d.name == c.name))",
            "message": "cron names must be unique",
        }])
    )]
    pub crons: Vec<CronSpec>,
    /// What to do when a metric keeps failing, instead of holding the current size (KEDA's
    /// `fallback`). Absent: hold, and never scale down on a failed metric (as Kubernetes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<FallbackSpec>,
    /// Scale to an idle size (usually 0) when no metric is above its activation value, and
    /// back when one is (KEDA's `idleReplicaCount` and cooldown). Absent: `minReplicas: 0`
    /// scales to zero exactly as Kubernetes' HPAScaleToZero does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<IdleSpec>,
    /// Seconds between two decisions (default 15).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 3600))]
    pub sync_period_seconds: Option<i32>,
    /// Usage-ratio dead band for both directions unless `behavior` sets one (default 0.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = non_negative_quantity)]
    pub tolerance: Option<Quantity>,
    /// CPU only: how long after a pod starts its samples may be discarded (default 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub cpu_initialization_period_seconds: Option<i32>,
    /// CPU only: how long after a pod starts a readiness change counts as its first (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub initial_readiness_delay_seconds: Option<i32>,
    /// Scale-down stabilization when `behavior.scaleDown` does not set one (default 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 3600))]
    pub downscale_stabilization_window_seconds: Option<i32>,
}

/// Upper bound on `spec.crons`: CEL rules over a list need a bound for the API server to
/// accept their cost (uniqueness is quadratic in the list length).
pub const MAX_CRONS: usize = 64;
/// Upper bound on `spec.metrics`, for the same reason.
pub const MAX_METRICS: usize = 32;

impl EffectiveHorizontalPodAutoscalerSpec {
    /// `minReplicas`, defaulted as Kubernetes defaults it.
    pub fn min_replicas_or_default(&self) -> i32 {
        self.min_replicas.unwrap_or(1)
    }

    /// The strategy, defaulted to `Auto`.
    pub fn strategy(&self) -> ScaleStrategy {
        self.scale_strategy.unwrap_or_default()
    }
}
