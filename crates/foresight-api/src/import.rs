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
