//! Normalization of a recommendation: stabilization windows, rate-limit policies against
//! recorded scale events, and min/max — both Kubernetes paths, with `behavior` and without
//! (the "legacy" path), reproduced exactly, including how the history lists are updated.

use foresight_api::hpa::{HorizontalPodAutoscalerBehavior, HpaScalingRules};
use foresight_api::status::{Recommendation, ScaleEvent};
use jiff::Timestamp;

use crate::time::{seconds, sub};

/// How one policy counts a change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyKind {
    /// A number of pods.
    Pods,
    /// A percentage of the replicas at the start of the period.
    Percent,
    /// An unknown type (validation rejects it; the limit math skips it as Kubernetes does).
    Other,
}

/// One rate-limit policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Pods or Percent.
    pub kind: PolicyKind,
    /// The allowed change.
    pub value: i32,
    /// The period, in seconds.
    pub period_seconds: i32,
}

/// Which policy wins when several apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelectPolicy {
    /// The policy allowing the largest change (also any unrecognised value).
    Max,
    /// The policy allowing the smallest change.
    Min,
    /// No change in this direction.
    Disabled,
}

/// The rules of one direction, after defaulting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rules {
    /// Stabilization window, seconds.
    pub stabilization_window_seconds: i64,
    /// How policies combine.
    pub select: SelectPolicy,
    /// The policies.
    pub policies: Vec<Policy>,
}

impl Rules {
    /// Builds rules from an API-defaulted direction; `fallback_window` stands in for an unset
    /// stabilization window (the controller's downscale stabilization, for scale-down).
    pub fn from_api(rules: &HpaScalingRules, fallback_window: i64) -> Rules {
        Rules {
            stabilization_window_seconds: rules
                .stabilization_window_seconds
                .map(i64::from)
                .unwrap_or(fallback_window),
            select: match rules.select_policy.as_deref() {
                Some("Min") => SelectPolicy::Min,
                Some("Disabled") => SelectPolicy::Disabled,
                _ => SelectPolicy::Max,
            },
            policies: rules
                .policies
                .iter()
                .flatten()
                .map(|p| Policy {
                    kind: match p.type_.as_str() {
                        "Pods" => PolicyKind::Pods,
                        "Percent" => PolicyKind::Percent,
                        _ => PolicyKind::Other,
                    },
                    value: p.value,
                    period_seconds: p.period_seconds,
                })
                .collect(),
        }
    }

    /// The longest policy period (0 without policies).
    pub fn longest_period_seconds(&self) -> i32 {
        self.policies
            .iter()
            .map(|p| p.period_seconds)
            .max()
            .unwrap_or(0)
            .max(0)
    }
}

/// Both directions' rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Behavior {
    /// Scale-up rules.
    pub scale_up: Rules,
    /// Scale-down rules.
    pub scale_down: Rules,
}

impl Behavior {
    /// From an API behavior (defaulted here if needed); an unset scale-down window takes
    /// `downscale_window_seconds`, as `maybeInitScaleDownStabilizationWindow` does.
    pub fn from_api(
        behavior: &HorizontalPodAutoscalerBehavior,
        downscale_window_seconds: i64,
    ) -> Behavior {
        let up = foresight_api::defaults::generate_scale_up_rules(behavior.scale_up.as_ref());
        let down = foresight_api::defaults::generate_scale_down_rules(behavior.scale_down.as_ref());
        Behavior {
            scale_up: Rules::from_api(&up, 0),
            scale_down: Rules::from_api(&down, downscale_window_seconds),
        }
    }

    /// The longest period any policy in either direction counts events over.
    pub fn longest_period_seconds(&self) -> i32 {
        self.scale_up
            .longest_period_seconds()
            .max(self.scale_down.longest_period_seconds())
    }

    /// The longest stabilization window.
    pub fn longest_window_seconds(&self) -> i64 {
        self.scale_up
            .stabilization_window_seconds
            .max(self.scale_down.stabilization_window_seconds)
    }
}

/// Why the count was (or was not) limited: Kubernetes' `ScalingLimited` reasons.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitReason {
    /// Not limited.
    DesiredWithinRange,
    /// Raised to `minReplicas`.
    TooFewReplicas,
    /// Lowered to `maxReplicas`.
    TooManyReplicas,
    /// Held back by a scale-up policy.
    ScaleUpLimit,
    /// Held back by a scale-down policy.
    ScaleDownLimit,
}

impl LimitReason {
    /// Kubernetes' reason string.
    pub fn reason(self) -> &'static str {
        match self {
            LimitReason::DesiredWithinRange => "DesiredWithinRange",
            LimitReason::TooFewReplicas => "TooFewReplicas",
            LimitReason::TooManyReplicas => "TooManyReplicas",
            LimitReason::ScaleUpLimit => "ScaleUpLimit",
            LimitReason::ScaleDownLimit => "ScaleDownLimit",
        }
    }

    /// Kubernetes' message.
    pub fn message(self) -> &'static str {
        match self {
            LimitReason::DesiredWithinRange => "the desired count is within the acceptable range",
            LimitReason::TooFewReplicas => {
                "the desired replica count is less than the minimum replica count"
            }
            LimitReason::TooManyReplicas => {
                "the desired replica count is more than the maximum replica count"
            }
            LimitReason::ScaleUpLimit => {
                "the desired replica count is increasing faster than the maximum scale rate"
            }
            LimitReason::ScaleDownLimit => {
                "the desired replica count is decreasing faster than the maximum scale rate"
            }
        }
    }
}

/// The `AbleToScale` reason chosen by stabilization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StabilizationReason {
    /// Stabilization did not change the count.
    ReadyForNewScale,
    /// Held below the recommendation by the scale-up window.
    ScaleUpStabilized,
    /// Held above the recommendation by the scale-down window.
    ScaleDownStabilized,
}

impl StabilizationReason {
    /// Kubernetes' reason string.
    pub fn reason(self) -> &'static str {
        match self {
            StabilizationReason::ReadyForNewScale => "ReadyForNewScale",
            StabilizationReason::ScaleUpStabilized => "ScaleUpStabilized",
            StabilizationReason::ScaleDownStabilized => "ScaleDownStabilized",
        }
    }

    /// Kubernetes' message.
    pub fn message(self) -> &'static str {
        match self {
            StabilizationReason::ReadyForNewScale => "recommended size matches current size",
            StabilizationReason::ScaleUpStabilized => {
                "recent recommendations were lower than current one, applying the lowest recent recommendation"
            }
            StabilizationReason::ScaleDownStabilized => {
                "recent recommendations were higher than current one, applying the highest recent recommendation"
            }
        }
    }
}

/// Records `(replicas, now)`: over the last entry that is `old`, or appended. The list
/// never shrinks; old entries are recycled in place, as in Kubernetes.
fn record(
    recommendations: &mut Vec<Recommendation>,
    old: Option<usize>,
    replicas: i32,
    now: Timestamp,
) {
    let entry = Recommendation {
        replicas,
        timestamp: now,
    };
    match old {
        Some(i) => recommendations[i] = entry,
        None => recommendations.push(entry),
    }
}

/// `stabilizeRecommendationWithBehaviors`: holds a scale-up to the lowest and a scale-down to
/// the highest recommendation inside the respective window, and records `desired`.
pub fn stabilize(
    recommendations: &mut Vec<Recommendation>,
    current: i32,
    desired: i32,
    up_window_seconds: i64,
    down_window_seconds: i64,
    now: Timestamp,
) -> (i32, StabilizationReason) {
    let up_cutoff = sub(now, seconds(up_window_seconds));
    let down_cutoff = sub(now, seconds(down_window_seconds));
    let mut up = desired;
    let mut down = desired;
    let mut old = None;
    for (i, r) in recommendations.iter().enumerate() {
        if r.timestamp > up_cutoff {
            up = up.min(r.replicas);
        }
        if r.timestamp > down_cutoff {
            down = down.max(r.replicas);
        }
        if r.timestamp < up_cutoff && r.timestamp < down_cutoff {
            old = Some(i);
        }
    }
    let mut stabilized = current;
    if stabilized < up {
        stabilized = up;
    }
    if stabilized > down {
        stabilized = down;
    }
    record(recommendations, old, desired, now);
    let reason = if stabilized == desired {
        StabilizationReason::ReadyForNewScale
    } else if desired >= current {
        StabilizationReason::ScaleUpStabilized
    } else {
        StabilizationReason::ScaleDownStabilized
    };
    (stabilized, reason)
}

/// The replicas changed within the last `period_seconds` (events strictly after the cutoff).
pub fn changed_within(events: &[ScaleEvent], period_seconds: i32, now: Timestamp) -> i64 {
    let cutoff = sub(now, seconds(i64::from(period_seconds)));
    events
        .iter()
        .filter(|e| e.timestamp > cutoff)
        .map(|e| i64::from(e.replica_change))
        .sum()
}

fn to_i32(v: i64) -> i32 {
    v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}

/// Which direction a policy limit is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Scaling up.
    Up,
    /// Scaling down.
    Down,
}

/// The raw policy limit for one direction (`calculateScale{Up,Down}Limit...`): the most (up)
/// or least (down) replicas the policies allow now, given the changes within each period.
pub fn scale_limit(
    direction: Direction,
    current: i32,
    rules: &Rules,
    up_events: &[ScaleEvent],
    down_events: &[ScaleEvent],
    now: Timestamp,
) -> i32 {
    if rules.select == SelectPolicy::Disabled {
        return current;
    }
    // Up: Max picks the largest allowance; down: Max picks the smallest result.
    let pick_larger = matches!(
        (direction, rules.select),
        (Direction::Up, SelectPolicy::Max) | (Direction::Down, SelectPolicy::Min)
    );
    let mut result: i32 = if pick_larger { i32::MIN } else { i32::MAX };
    // Kubernetes keeps the previous policy's proposal for a policy of unknown type.
    let mut proposed: i32 = 0;
    for p in &rules.policies {
        let added = changed_within(up_events, p.period_seconds, now);
        let removed = changed_within(down_events, p.period_seconds, now);
        let start = i64::from(current) - added + removed;
        let start32 = to_i32(start);
        match (direction, p.kind) {
            (Direction::Up, PolicyKind::Pods) => {
                proposed = to_i32(i64::from(start32) + i64::from(p.value))
            }
            (Direction::Up, PolicyKind::Percent) => {
                proposed = (f64::from(start32) * (1.0 + f64::from(p.value) / 100.0)).ceil() as i32
            }
            (Direction::Down, PolicyKind::Pods) => {
                proposed = to_i32(i64::from(start32) - i64::from(p.value))
            }
            (Direction::Down, PolicyKind::Percent) => {
                proposed = (f64::from(start32) * (1.0 - f64::from(p.value) / 100.0)) as i32
            }
            (_, PolicyKind::Other) => {}
        }
        result = if pick_larger {
            result.max(proposed)
        } else {
            result.min(proposed)
        };
    }
    result
}

/// `convertDesiredReplicasWithBehaviorRate`: applies the policy limits and min/max.
#[allow(clippy::too_many_arguments)]
pub fn rate_limit(
    current: i32,
    desired: i32,
    min_replicas: i32,
    max_replicas: i32,
    behavior: &Behavior,
    up_events: &[ScaleEvent],
    down_events: &[ScaleEvent],
    now: Timestamp,
) -> (i32, LimitReason) {
    if desired > current {
        let limit = scale_limit(
            Direction::Up,
            current,
            &behavior.scale_up,
            up_events,
            down_events,
            now,
        )
        .max(current);
        let (upper, reason) = if max_replicas > limit {
            (limit, LimitReason::ScaleUpLimit)
        } else {
            (max_replicas, LimitReason::TooManyReplicas)
        };
        if desired > upper {
            return (upper, reason);
        }
    } else if desired < current {
        let limit = scale_limit(
            Direction::Down,
            current,
            &behavior.scale_down,
            up_events,
            down_events,
            now,
        )
        .min(current);
        let (lower, reason) = if min_replicas < limit {
            (limit, LimitReason::ScaleDownLimit)
        } else {
            (min_replicas, LimitReason::TooFewReplicas)
        };
        if desired < lower {
            return (lower, reason);
        }
    }
    (desired, LimitReason::DesiredWithinRange)
}

/// `stabilizeRecommendation` (legacy path): the maximum over the window, inclusive at the
/// cutoff; records `desired`.
pub fn legacy_stabilize(
    recommendations: &mut Vec<Recommendation>,
    desired: i32,
    window_seconds: i64,
    now: Timestamp,
) -> i32 {
    let cutoff = sub(now, seconds(window_seconds));
    let mut max = desired;
    let mut old = None;
    for (i, r) in recommendations.iter().enumerate() {
        if r.timestamp < cutoff {
            old = Some(i);
        } else if r.replicas > max {
            max = r.replicas;
        }
    }
    record(recommendations, old, desired, now);
    max
}

/// The legacy scale-up limit constants: `max(factor × current, minimum)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LegacyScaleUpLimit {
    /// Kubernetes' `scaleUpLimitFactor` (2.0).
    pub factor: f64,
    /// Kubernetes' `scaleUpLimitMinimum` (4.0).
    pub minimum: f64,
}

impl Default for LegacyScaleUpLimit {
    fn default() -> Self {
        LegacyScaleUpLimit {
            factor: 2.0,
            minimum: 4.0,
        }
    }
}

/// `convertDesiredReplicasWithRules` (legacy path).
pub fn legacy_clamp(
    current: i32,
    desired: i32,
    min_replicas: i32,
    max_replicas: i32,
    limit: LegacyScaleUpLimit,
) -> (i32, LimitReason) {
    let scale_up_limit = (limit.factor * f64::from(current)).max(limit.minimum) as i32;
    let (upper, reason) = if max_replicas > scale_up_limit {
        (scale_up_limit, LimitReason::ScaleUpLimit)
    } else {
        (max_replicas, LimitReason::TooManyReplicas)
    };
    if desired < min_replicas {
        (min_replicas, LimitReason::TooFewReplicas)
    } else if desired > upper {
        (upper, reason)
    } else {
        (desired, LimitReason::DesiredWithinRange)
    }
}

/// `storeScaleEvent`: marks the direction's events older than its longest policy period as
/// outdated (sticky), then records the change over the last outdated entry or appends it.
pub fn store_scale_event(events: &mut Vec<ScaleEvent>, rules: &Rules, change: i32, now: Timestamp) {
    let cutoff = sub(now, seconds(i64::from(rules.longest_period_seconds())));
    let mut old = None;
    for (i, e) in events.iter_mut().enumerate() {
        if e.timestamp < cutoff {
            e.outdated = true;
        }
        if e.outdated {
            old = Some(i);
        }
    }
    let event = ScaleEvent {
        replica_change: change,
        timestamp: now,
        outdated: false,
    };
    match old {
        Some(i) => events[i] = event,
        None => events.push(event),
    }
}

/// The outcome of normalizing one recommendation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Normalized {
    /// The recommendation after stabilization.
    pub stabilized: i32,
    /// The `AbleToScale` reason stabilization chose.
    pub stabilization: StabilizationReason,
    /// The final count.
    pub replicas: i32,
    /// The `ScalingLimited` reason.
    pub limit: LimitReason,
}

/// The inputs of one normalization besides the history.
#[derive(Clone, Copy, Debug)]
pub struct NormalizeArgs<'a> {
    /// `behavior`, or `None` for the legacy path.
    pub behavior: Option<&'a Behavior>,
    /// `scale.spec.replicas`.
    pub current: i32,
    /// The recommendation.
    pub desired: i32,
    /// Lower bound.
    pub min_replicas: i32,
    /// Upper bound.
    pub max_replicas: i32,
    /// The legacy path's stabilization window, seconds.
    pub legacy_window_seconds: i64,
    /// The legacy path's scale-up limit.
    pub legacy_limit: LegacyScaleUpLimit,
    /// Whether the scale-down stabilization window (either path's) applies. Kubernetes
    /// always applies it; an objective's operating point lets learned headroom hold the
    /// capacity instead (`PredictionPolicy::headroom_guards_scale_down`).
    pub hold_scale_down: bool,
    /// The frozen clock.
    pub now: Timestamp,
}

/// Kubernetes' `normalizeDesiredReplicas[WithBehaviors]`: stabilizes `desired` against the
/// recorded recommendations (recording it), then applies the rate limits and bounds.
pub fn normalize(
    recommendations: &mut Vec<Recommendation>,
    up: &[ScaleEvent],
    down: &[ScaleEvent],
    args: NormalizeArgs<'_>,
) -> Normalized {
    let NormalizeArgs {
        current,
        desired,
        min_replicas: min,
        max_replicas: max,
        now,
        ..
    } = args;
    match args.behavior {
        Some(b) => {
            let (stabilized, stabilization) = stabilize(
                recommendations,
                current,
                desired,
                b.scale_up.stabilization_window_seconds,
                if args.hold_scale_down {
                    b.scale_down.stabilization_window_seconds
                } else {
                    0
                },
                now,
            );
            let (replicas, limit) = rate_limit(current, stabilized, min, max, b, up, down, now);
            Normalized {
                stabilized,
                stabilization,
                replicas,
                limit,
            }
        }
        None => {
            let window = if args.hold_scale_down {
                args.legacy_window_seconds
            } else {
                0
            };
            let stabilized = legacy_stabilize(recommendations, desired, window, now);
            let stabilization = if stabilized == desired {
                StabilizationReason::ReadyForNewScale
            } else {
                StabilizationReason::ScaleDownStabilized
            };
            let (replicas, limit) = legacy_clamp(current, stabilized, min, max, args.legacy_limit);
            Normalized {
                stabilized,
                stabilization,
                replicas,
                limit,
            }
        }
    }
}

/// Records a rescale from `from` to `to` in the matching direction's events (behavior path
/// only; the legacy path keeps no events).
pub fn record_rescale(
    up: &mut Vec<ScaleEvent>,
    down: &mut Vec<ScaleEvent>,
    behavior: Option<&Behavior>,
    from: i32,
    to: i32,
    now: Timestamp,
) {
    let Some(b) = behavior else { return };
    if to > from {
        store_scale_event(up, &b.scale_up, to.saturating_sub(from), now);
    } else {
        store_scale_event(down, &b.scale_down, from.saturating_sub(to), now);
    }
}
