//! The EffectiveHorizontalPodAutoscaler spec: a superset of autoscaling/v2's HPA spec and of
//! Crane's EHPA spec.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cron::CronSpec;
use crate::hpa::{CrossVersionObjectReference, HorizontalPodAutoscalerBehavior, MetricSpec};
use crate::prediction::PredictionSpec;
use crate::quantity::Quantity;

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

/// Desired behaviour of an EffectiveHorizontalPodAutoscaler.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EffectiveHorizontalPodAutoscalerSpec {
    /// The workload to scale; any resource with a `scale` subresource.
    #[serde(default)]
    pub scale_target_ref: CrossVersionObjectReference,
    /// Lower bound on replicas (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_replicas: Option<i32>,
    /// Upper bound on replicas.
    #[serde(default)]
    pub max_replicas: i32,
    /// `Auto` applies decisions; `Preview` only records them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_strategy: Option<ScaleStrategy>,
    /// Preview only: hold the workload at this many replicas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub specific_replicas: Option<i32>,
    /// Metrics to scale on (autoscaling/v2 MetricSpec list, plus `type: Prometheus`). The
    /// largest proposal wins. With neither metrics nor crons, 80% CPU utilization applies.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<MetricSpec>,
    /// Scaling behavior per direction (autoscaling/v2 `behavior`). Absent: the legacy
    /// Kubernetes path (downscale stabilization only, scale-up at most 2x or +4 per sync).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behavior: Option<HorizontalPodAutoscalerBehavior>,
    /// Forecast the metrics and scale for the coming peak. Off when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prediction: Option<PredictionSpec>,
    /// Time windows that hold a number of replicas.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub crons: Vec<CronSpec>,
    /// Seconds between two decisions (default 15).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_period_seconds: Option<i32>,
    /// Usage-ratio dead band for both directions unless `behavior` sets one (default 0.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<Quantity>,
    /// CPU only: how long after a pod starts its samples may be discarded (default 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_initialization_period_seconds: Option<i32>,
    /// CPU only: how long after a pod starts a readiness change counts as its first (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_readiness_delay_seconds: Option<i32>,
    /// Scale-down stabilization when `behavior.scaleDown` does not set one (default 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub downscale_stabilization_window_seconds: Option<i32>,
}

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
