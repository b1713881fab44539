//! `spec.fallback`: what to do when a metric keeps failing (KEDA's `fallback`, KEP-5053's
//! `failureDurationSeconds`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::validation::FieldError;

/// Failed syncs tolerated before the fallback applies when neither threshold is set (KEDA's
/// default).
pub const DEFAULT_FAILURE_THRESHOLD: i32 = 3;

/// How the fallback size is chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum FallbackBehavior {
    /// `replicas`, whatever the current size (KEDA's `static`).
    #[default]
    Static,
    /// Keep the current size, also downwards (KEDA's `currentReplicas`).
    CurrentReplicas,
    /// The current size if it is above `replicas`, else `replicas` (KEDA's
    /// `currentReplicasIfHigher`).
    CurrentReplicasIfHigher,
    /// The current size if it is below `replicas`, else `replicas` (KEDA's
    /// `currentReplicasIfLower`).
    CurrentReplicasIfLower,
}

impl FallbackBehavior {
    /// The size to fall back to from `current`; `replicas` is 0 for `CurrentReplicas`.
    pub fn size(self, current: i32, replicas: i32) -> i32 {
        match self {
            FallbackBehavior::Static => replicas,
            FallbackBehavior::CurrentReplicas => current,
            FallbackBehavior::CurrentReplicasIfHigher => current.max(replicas),
            FallbackBehavior::CurrentReplicasIfLower => current.min(replicas),
        }
    }

    /// KEDA's spelling of this behaviour (`static`, `currentReplicas`, ...).
    pub fn keda_name(self) -> &'static str {
        match self {
            FallbackBehavior::Static => "static",
            FallbackBehavior::CurrentReplicas => "currentReplicas",
            FallbackBehavior::CurrentReplicasIfHigher => "currentReplicasIfHigher",
            FallbackBehavior::CurrentReplicasIfLower => "currentReplicasIfLower",
        }
    }

    /// The behaviour KEDA spells `name`.
    pub fn from_keda(name: &str) -> Option<FallbackBehavior> {
        [
            FallbackBehavior::Static,
            FallbackBehavior::CurrentReplicas,
            FallbackBehavior::CurrentReplicasIfHigher,
            FallbackBehavior::CurrentReplicasIfLower,
        ]
        .into_iter()
        .find(|b| b.keda_name() == name)
    }
}

/// What to do when a metric keeps failing, instead of holding the current size.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{
    "rule": "has(self.replicas) || (has(self.behavior) && self.behavior == 'CurrentReplicas')",
    "message": "replicas is required unless behavior is CurrentReplicas",
}]))]
pub struct FallbackSpec {
    /// The fallback applies once a metric has failed on more than this many syncs in a row
    /// (KEDA's `failureThreshold`; default 3 when `failureDurationSeconds` is unset too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub failure_threshold: Option<i32>,
    /// ... or once a metric has been failing for this many seconds (KEP-5053). With both set,
    /// whichever is reached first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub failure_duration_seconds: Option<i32>,
    /// The size to fall back to (for `CurrentReplicasIfHigher`/`IfLower`, the size the
    /// current one is compared with). Required unless `behavior` is `CurrentReplicas`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub replicas: Option<i32>,
    /// How the fallback size is chosen (default `Static`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behavior: Option<FallbackBehavior>,
}

impl FallbackSpec {
    /// The behaviour, defaulted.
    pub fn behavior_or_default(&self) -> FallbackBehavior {
        self.behavior.unwrap_or_default()
    }

    /// The sync threshold, defaulted as documented.
    pub fn failure_threshold_or_default(&self) -> Option<i32> {
        match (self.failure_threshold, self.failure_duration_seconds) {
            (None, None) => Some(DEFAULT_FAILURE_THRESHOLD),
            (t, _) => t,
        }
    }
}

/// Checks `spec.fallback` (at `path`).
pub fn validate_fallback(errs: &mut Vec<FieldError>, path: &str, f: &FallbackSpec) {
    if let Some(t) = f.failure_threshold {
        if t < 0 {
            errs.push(FieldError::invalid(
                format!("{path}.failureThreshold"),
                t,
                "must be greater than or equal to 0",
            ));
        }
    }
    if let Some(d) = f.failure_duration_seconds {
        if d < 1 {
            errs.push(FieldError::invalid(
                format!("{path}.failureDurationSeconds"),
                d,
                "must be greater than or equal to 1",
            ));
        }
    }
    match f.replicas {
        Some(n) if n < 0 => errs.push(FieldError::invalid(
            format!("{path}.replicas"),
            n,
            "must be greater than or equal to 0",
        )),
        None if f.behavior_or_default() != FallbackBehavior::CurrentReplicas => {
            errs.push(FieldError::required(
                format!("{path}.replicas"),
                "replicas is required unless behavior is CurrentReplicas",
            ))
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_four_behaviours_choose_as_keda_does() {
        use FallbackBehavior::*;
        assert_eq!(Static.size(7, 3), 3);
        assert_eq!(CurrentReplicas.size(7, 3), 7);
        assert_eq!(CurrentReplicasIfHigher.size(7, 3), 7);
        assert_eq!(CurrentReplicasIfHigher.size(2, 3), 3);
        assert_eq!(CurrentReplicasIfLower.size(7, 3), 3);
        assert_eq!(CurrentReplicasIfLower.size(2, 3), 2);
        for b in [
            Static,
            CurrentReplicas,
            CurrentReplicasIfHigher,
            CurrentReplicasIfLower,
        ] {
            assert_eq!(FallbackBehavior::from_keda(b.keda_name()), Some(b));
        }
    }

    #[test]
    fn replicas_are_required_unless_the_current_size_is_kept() {
        let mut errs = Vec::new();
        validate_fallback(&mut errs, "spec.fallback", &FallbackSpec::default());
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "spec.fallback.replicas");
        let mut errs = Vec::new();
        let keep = FallbackSpec {
            behavior: Some(FallbackBehavior::CurrentReplicas),
            ..Default::default()
        };
        validate_fallback(&mut errs, "spec.fallback", &keep);
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(keep.failure_threshold_or_default(), Some(3));
        let by_time = FallbackSpec {
            failure_duration_seconds: Some(60),
            ..keep
        };
        assert_eq!(by_time.failure_threshold_or_default(), None);
    }
}
