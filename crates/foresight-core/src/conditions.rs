//! Status conditions, kept the way Kubernetes keeps them: setting a condition replaces its
//! reason and message, appends it if new, and moves `lastTransitionTime` only when the status
//! flips.

use foresight_api::status::{Condition, ConditionStatus};
use jiff::Timestamp;

/// `AbleToScale`: whether the target's scale can be read and written.
pub const ABLE_TO_SCALE: &str = "AbleToScale";
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

/// Sets condition `type_` in `conditions`.
pub fn set(
    conditions: &mut Vec<Condition>,
    type_: &str,
    status: ConditionStatus,
    reason: &str,
    message: impl Into<String>,
    now: Timestamp,
) {
    let message = message.into();
    if let Some(c) = conditions.iter_mut().find(|c| c.type_ == type_) {
        if c.status != status {
            c.last_transition_time = Some(now);
        }
        c.status = status;
        c.reason.clear();
        c.reason.push_str(reason);
        c.message = message;
    } else {
        conditions.push(Condition {
            type_: type_.to_owned(),
            status,
            last_transition_time: Some(now),
            reason: reason.to_owned(),
            message,
        });
    }
}

/// The condition of type `type_`, if present.
pub fn get<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Removes condition `type_` (for a feature that was switched off).
pub fn remove(conditions: &mut Vec<Condition>, type_: &str) {
    conditions.retain(|c| c.type_ != type_);
}
