//! Defaulting, exactly as the Kubernetes API server defaults an autoscaling/v2 HPA
//! (`SetDefaults_HorizontalPodAutoscaler`, `GenerateHPAScale{Up,Down}Rules`).

use crate::hpa::{
    HorizontalPodAutoscalerBehavior, HorizontalPodAutoscalerSpec, HpaScalingPolicy,
    HpaScalingRules, MetricSpec, MetricTarget, ResourceMetricSource,
};
use crate::spec::EffectiveHorizontalPodAutoscalerSpec;

/// `selectPolicy: Max`.
pub const SELECT_MAX: &str = "Max";
/// `selectPolicy: Min`.
pub const SELECT_MIN: &str = "Min";
/// `selectPolicy: Disabled`.
pub const SELECT_DISABLED: &str = "Disabled";
/// Policy type `Pods`.
pub const POLICY_PODS: &str = "Pods";
/// Policy type `Percent`.
pub const POLICY_PERCENT: &str = "Percent";

fn policy(type_: &str, value: i32, period_seconds: i32) -> HpaScalingPolicy {
    HpaScalingPolicy {
        type_: type_.to_owned(),
        value,
        period_seconds,
    }
}

/// The scale-up rules Kubernetes uses when a behavior leaves scale-up unset.
pub fn default_scale_up_rules() -> HpaScalingRules {
    HpaScalingRules {
        stabilization_window_seconds: Some(0),
        select_policy: Some(SELECT_MAX.to_owned()),
        policies: Some(vec![
            policy(POLICY_PODS, 4, 15),
            policy(POLICY_PERCENT, 100, 15),
        ]),
        tolerance: None,
    }
}

/// The scale-down rules Kubernetes uses when a behavior leaves scale-down unset. The
/// stabilization window stays unset: the controller's downscale stabilization applies.
pub fn default_scale_down_rules() -> HpaScalingRules {
    HpaScalingRules {
        stabilization_window_seconds: None,
        select_policy: Some(SELECT_MAX.to_owned()),
        policies: Some(vec![policy(POLICY_PERCENT, 100, 15)]),
        tolerance: None,
    }
}

/// Completes `given` field by field from `defaults`. `policies` is replaced as a whole list,
/// never merged, and an explicit empty list is kept (validation then rejects it).
fn complete_rules(given: Option<&HpaScalingRules>, defaults: HpaScalingRules) -> HpaScalingRules {
    let Some(given) = given else { return defaults };
    HpaScalingRules {
        stabilization_window_seconds: given
            .stabilization_window_seconds
            .or(defaults.stabilization_window_seconds),
        select_policy: given.select_policy.clone().or(defaults.select_policy),
        policies: given.policies.clone().or(defaults.policies),
        tolerance: given.tolerance.clone().or(defaults.tolerance),
    }
}

/// `GenerateHPAScaleUpRules`.
pub fn generate_scale_up_rules(given: Option<&HpaScalingRules>) -> HpaScalingRules {
    complete_rules(given, default_scale_up_rules())
}

/// `GenerateHPAScaleDownRules`.
pub fn generate_scale_down_rules(given: Option<&HpaScalingRules>) -> HpaScalingRules {
    complete_rules(given, default_scale_down_rules())
}

/// Defaults a behavior: absent stays absent (the legacy path); present gets both directions.
pub fn default_behavior(behavior: &mut Option<HorizontalPodAutoscalerBehavior>) {
    if let Some(b) = behavior {
        b.scale_up = Some(generate_scale_up_rules(b.scale_up.as_ref()));
        b.scale_down = Some(generate_scale_down_rules(b.scale_down.as_ref()));
    }
}

/// The metric Kubernetes adds when an HPA lists none: 80% CPU utilization.
pub fn default_cpu_metric() -> MetricSpec {
    MetricSpec {
        type_: "Resource".to_owned(),
        resource: Some(ResourceMetricSource {
            name: "cpu".to_owned(),
            target: MetricTarget {
                type_: "Utilization".to_owned(),
                average_utilization: Some(80),
                ..Default::default()
            },
        }),
        ..Default::default()
    }
}

/// `SetDefaults_HorizontalPodAutoscaler` on a native HPA spec.
pub fn default_hpa_spec(spec: &mut HorizontalPodAutoscalerSpec) {
    if spec.min_replicas.is_none() {
        spec.min_replicas = Some(1);
    }
    if spec.metrics.as_ref().is_none_or(Vec::is_empty) {
        spec.metrics = Some(vec![default_cpu_metric()]);
    }
    default_behavior(&mut spec.behavior);
}

/// Defaults an EffectiveHorizontalPodAutoscaler spec the way the HPA is defaulted. An object
/// with crons but no metrics stays metric-free: its crons are its only source.
pub fn default_spec(spec: &mut EffectiveHorizontalPodAutoscalerSpec) {
    if spec.min_replicas.is_none() {
        spec.min_replicas = Some(1);
    }
    if spec.metrics.is_empty() && spec.crons.is_empty() {
        spec.metrics.push(default_cpu_metric());
    }
    default_behavior(&mut spec.behavior);
    if let Some(p) = &mut spec.prediction {
        if p.prediction_window_seconds.is_none() {
            p.prediction_window_seconds = Some(3600);
        }
    }
}
