//! Status conditions, kept the way Kubernetes keeps them: setting a condition replaces its
//! reason and message, appends it if new, and moves `lastTransitionTime` only when the status
//! flips.

use foresight_api::status::{Condition, ConditionStatus};
use jiff::Timestamp;

/// `AbleToScale`: whether the target's scale can be read and written.
pub const ABLE_TO_SCALE: &str = "AbleToScale";
/// Kubernetes 1.37+: whether the autoscaler itself scaled the target to zero (HPAScaleToZero).
pub const SCALED_TO_ZERO: &str = "ScaledToZero";
/// `ScalingActive`: whether metrics allow a decision.
pub const SCALING_ACTIVE: &str = "ScalingActive";
/// `ScalingLimited`: whether a bound or policy held the count back.
pub const SCALING_LIMITED: &str = "ScalingLimited";
/// `Ready`: Foresight's summary condition.
pub const READY: &str = "Ready";
/// `PredictionReady`: whether forecasts are in use.
pub const PREDICTION_READY: &str = "PredictionReady";
/// `CronActive`: whether a cron window is open.
pub const CRON_ACTIVE: &str = "CronActive";
/// `FallbackActive`: whether `spec.fallback` decides because a metric keeps failing.
pub const FALLBACK_ACTIVE: &str = "FallbackActive";
/// `Active` (with `spec.idle`): whether a metric is above its activation value.
pub const ACTIVE: &str = "Active";
/// `Paused`: whether a pause annotation holds the autoscaler.
pub const PAUSED: &str = "Paused";

/// Sets condition `type_` in `conditions`. The message is given in parts, concatenated; an
/// unchanged message costs no allocation (this runs on every decision).
pub fn set_parts(
    conditions: &mut Vec<Condition>,
    type_: &str,
    status: ConditionStatus,
    reason: &str,
    message: &[&str],
    now: Timestamp,
) {
    let same_message = |existing: &str| {
        let mut rest = existing;
        for part in message {
            match rest.strip_prefix(part) {
                Some(r) => rest = r,
                None => return false,
            }
        }
        rest.is_empty()
    };
    match conditions.iter_mut().find(|c| c.type_ == type_) {
        Some(c) => {
            if c.status != status {
                c.last_transition_time = Some(now);
                c.status = status;
            }
            if c.reason != reason {
                c.reason.clear();
                c.reason.push_str(reason);
            }
            if !same_message(&c.message) {
                c.message = message.concat();
            }
        }
        None => conditions.push(Condition {
            type_: type_.to_owned(),
            status,
            last_transition_time: Some(now),
            reason: reason.to_owned(),
            message: message.concat(),
        }),
    }
}

/// Sets condition `type_` in `conditions` (see [`set_parts`]).
pub fn set(
    conditions: &mut Vec<Condition>,
    type_: &str,
    status: ConditionStatus,
    reason: &str,
    message: &str,
    now: Timestamp,
) {
    set_parts(conditions, type_, status, reason, &[message], now);
}

/// The condition of type `type_`, if present.
pub fn get<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Removes condition `type_` (for a feature that was switched off).
pub fn remove(conditions: &mut Vec<Condition>, type_: &str) {
    conditions.retain(|c| c.type_ != type_);
}
