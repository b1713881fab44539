//! `spec.idle`: scale the target to an idle size (usually 0) when no metric is above its
//! activation value, and back when one is (KEDA's `idleReplicaCount`, `cooldownPeriod`,
//! `initialCooldownPeriod` and trigger `activationThreshold`s).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::hpa::MetricSpec;
use crate::validation::FieldError;

/// Seconds of inactivity before going idle when `cooldownSeconds` is unset (KEDA's default).
pub const DEFAULT_COOLDOWN_SECONDS: i32 = 300;

/// The metric types that can be read while the target has no pods, and so can wake it.
pub const WAKING_METRIC_TYPES: [&str; 4] = ["Object", "External", "Prometheus", "Formula"];

/// Idle scaling.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IdleSpec {
    /// The size while no metric is above its activation value (KEDA's `idleReplicaCount`;
    /// default 0). Below `minReplicas`, or 0 with `minReplicas: 0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub replicas: Option<i32>,
    /// Seconds every metric must have stayed at or below its activation value before the
    /// target goes idle (KEDA's `cooldownPeriod`; default 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub cooldown_seconds: Option<i32>,
    /// Seconds after the autoscaler is first seen during which it does not go idle (KEDA's
    /// `initialCooldownPeriod`; default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub initial_cooldown_seconds: Option<i32>,
}

impl IdleSpec {
    /// `replicas`, defaulted.
    pub fn replicas_or_default(&self) -> i32 {
        self.replicas.unwrap_or(0)
    }
}

/// Checks `spec.idle` and the metrics' `activation` values against it. `min_replicas` is the
/// defaulted `spec.minReplicas`.
pub fn validate_idle(
    errs: &mut Vec<FieldError>,
    idle: Option<&IdleSpec>,
    min_replicas: i32,
    metrics: &[MetricSpec],
    has_crons: bool,
) {
    for (i, m) in metrics.iter().enumerate() {
        let Some(a) = &m.activation else { continue };
        let path = format!("spec.metrics[{i}].activation");
        if !WAKING_METRIC_TYPES.contains(&m.type_.as_str()) {
            errs.push(FieldError::forbidden(
                &path,
                "only Object, External, Prometheus and Formula metrics can be read while the target is idle, so only they have an activation value",
            ));
        } else if idle.is_none() {
            errs.push(FieldError::forbidden(
                &path,
                "an activation value is only used with spec.idle",
            ));
        }
        match a.milli_value() {
            Ok(v) if v < 0 => errs.push(FieldError::invalid(&path, a, "must be 0 or more")),
            Err(e) => errs.push(FieldError::invalid(&path, a, e.to_string())),
            Ok(_) => {}
        }
    }
    let Some(idle) = idle else { return };
    for (field, value) in [
        ("replicas", idle.replicas),
        ("cooldownSeconds", idle.cooldown_seconds),
        ("initialCooldownSeconds", idle.initial_cooldown_seconds),
    ] {
        if let Some(v) = value.filter(|v| *v < 0) {
            errs.push(FieldError::invalid(
                format!("spec.idle.{field}"),
                v,
                "must be greater than or equal to 0",
            ));
        }
    }
    let replicas = idle.replicas_or_default();
    if replicas != 0 && replicas >= min_replicas {
        errs.push(FieldError::invalid(
            "spec.idle.replicas",
            replicas,
            "must be less than minReplicas (or 0 with minReplicas: 0)",
        ));
    }
    let wakes = has_crons
        || metrics
            .iter()
            .any(|m| WAKING_METRIC_TYPES.contains(&m.type_.as_str()));
    if !wakes {
        errs.push(FieldError::forbidden(
            "spec.idle",
            "needs an Object, External, Prometheus or Formula metric, or a cron, to see load while the target is idle",
        ));
    }
}
