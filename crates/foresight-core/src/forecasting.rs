//! The prediction proposal: the replicas a metric's forecast peak needs, against the metric's
//! own target, over the stretch of the forecast that matters (docs/prediction.md, "From
//! forecast to replicas"); the lead time that stretch is measured by; and when a forecast has
//! been wrong for long enough to be demoted.

use foresight_api::quantity::Quantity;
use foresight_api::status::ConditionStatus;
use jiff::Timestamp;

use crate::autoscaler::{Horizon, Metric, MetricSource, PredictionPolicy, Target};
use crate::pods::Pod;
use crate::prediction::{Accuracy, Forecast};
use crate::replicas::{ceil_i32, ReplicaContext};

/// Forecasts are judged only once this many values have been compared (an hour of
/// one-minute samples): a handful of samples says little.
pub const MIN_SAMPLES_TO_JUDGE: u32 = 60;

/// Demoted prediction resumes once its error is below this share of the threshold, so that an
/// error hovering around the threshold does not flap prediction on and off.
pub const RECOVERY_SHARE: f64 = 0.8;

/// The most a forecast is discounted for running high (to half).
pub const MIN_CORRECTION: f64 = 0.5;

/// The stretch of the forecast a proposal covers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reach {
    /// How far ahead, seconds.
    pub horizon_seconds: i64,
    /// The start-up time it assumes, seconds.
    pub startup_seconds: i64,
    /// Whether that start-up time was measured from pods.
    pub startup_measured: bool,
}

/// How far ahead a proposal must look. `LeadTime`: capacity asked for now is ready after the
/// start-up time, and the next decision (a sync period later) can only add capacity that is
/// ready a start-up time after that; the metrics the decision reads are a sync period old. So
/// this decision answers for the load until start-up + two sync periods from now.
pub fn reach(policy: &PredictionPolicy, pods: &[Pod], sync_period_seconds: i64) -> Reach {
    let measured = measured_startup(pods);
    let (startup, startup_measured) = match (policy.startup_seconds, measured) {
        (Some(s), _) => (s, false),
        (None, Some(m)) => (m, true),
        (None, None) => (PredictionPolicy::DEFAULT_STARTUP_SECONDS, false),
    };
    let horizon_seconds = match policy.horizon {
        Horizon::Window => policy.window_seconds,
        Horizon::LeadTime => startup.saturating_add(sync_period_seconds.max(1).saturating_mul(2)),
    };
    Reach {
        horizon_seconds,
        startup_seconds: startup,
        startup_measured,
    }
}

/// The pods' start-up time: the 75th percentile of creation → Ready over the Ready pods that
/// took a measurable time (at most an hour: longer means readiness flapped later).
/// Every decision with prediction measures it, so the times of up to [`STARTUPS_ON_STACK`]
/// pods are sorted on the stack and only a larger workload's in a list.
fn measured_startup(pods: &[Pod]) -> Option<i64> {
    let took = pods.iter().filter_map(|p| {
        let ready = p.ready.filter(|c| c.status == ConditionStatus::True)?;
        let started = p.start_time?;
        let seconds = ready.last_transition_time.as_second() - started.as_second();
        (1..=3600).contains(&seconds).then_some(seconds)
    });
    let mut on_stack = [0i64; STARTUPS_ON_STACK];
    let mut counted = 0usize;
    let mut spilled = Vec::new();
    for seconds in took {
        match on_stack.get_mut(counted) {
            Some(slot) if spilled.is_empty() => *slot = seconds,
            _ => {
                if spilled.is_empty() {
                    spilled.extend_from_slice(&on_stack);
                }
                spilled.push(seconds);
            }
        }
        counted += 1;
    }
    let took = if spilled.is_empty() {
        on_stack.get_mut(..counted)?
    } else {
        &mut spilled[..]
    };
    if took.is_empty() {
        return None;
    }
    took.sort_unstable();
    took.get((took.len() * 3).div_ceil(4).saturating_sub(1))
        .copied()
}

/// See [`measured_startup`].
const STARTUPS_ON_STACK: usize = 128;

/// Why prediction is demoted for a metric, or `None` when its forecasts may propose.
/// `was_demoted` says whether it was demoted at the last decision: it then stays demoted until
/// its error falls below [`RECOVERY_SHARE`] of the threshold, and while it cannot be judged.
/// Without `explain` the reason is empty: the decision is told whether, not why (this runs on
/// every decision, and replays keeping only scores make hundreds of thousands).
pub fn demotion(
    policy: &PredictionPolicy,
    accuracy: Option<&Accuracy>,
    was_demoted: bool,
    explain: bool,
) -> Option<String> {
    if policy.max_error_percent <= 0 {
        return None;
    }
    let threshold = policy.max_error_percent as f64;
    let say = |reason: &dyn Fn() -> String| Some(if explain { reason() } else { String::new() });
    // Formatted only when it is said.
    let window = || {
        foresight_api::duration::format_duration(std::time::Duration::from_secs(
            policy.accuracy_window_seconds.max(0).unsigned_abs(),
        ))
    };
    match accuracy.filter(|a| a.samples >= MIN_SAMPLES_TO_JUDGE) {
        Some(a) if a.error_percent > threshold => say(&|| {
            format!(
                "forecast error {:.0}% > {threshold:.0}% over the last {} ({} samples, MAPE \
                 {:.0}%, under-forecast {:.0}% of the time)",
                a.error_percent,
                window(),
                a.samples,
                a.mape_percent,
                a.under_forecast_percent
            )
        }),
        Some(a) if was_demoted && a.error_percent > threshold * RECOVERY_SHARE => say(&|| {
            format!(
                "forecast error {:.0}% is not yet below {:.0}% (80% of the {threshold:.0}% \
                 limit) over the last {}",
                a.error_percent,
                threshold * RECOVERY_SHARE,
                window()
            )
        }),
        None if was_demoted => say(&|| {
            "forecast error not measured since demotion; waiting for a measurement".to_owned()
        }),
        _ => None,
    }
}

/// What a lead-time proposal multiplies the forecast by: Σ observed / Σ forecast over the
/// accuracy window when the forecasts ran high (an estimator's built-in margin, a level that
/// has drifted down), so that prediction adds capacity for the shape it foresees rather than
/// for its own bias; never below [`MIN_CORRECTION`], and never above 1: a forecast that runs
/// low is not raised (the observed metrics still propose what they see). 1 before forecasts
/// have been compared with enough observations.
pub fn correction(accuracy: Option<&Accuracy>) -> f64 {
    accuracy
        .filter(|a| a.samples >= MIN_SAMPLES_TO_JUDGE)
        .map_or(1.0, |a| a.level.clamp(MIN_CORRECTION, 1.0))
}

/// What prediction offers the decision for one metric.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum ForecastInput {
    /// Prediction is off, or does not cover this metric.
    #[default]
    Off,
    /// The predictor has no forecast yet, and says why (`history 1d 4h < 2 periods`).
    NotReady(String),
    /// The history could not be read (e.g. Prometheus is down).
    Failed(String),
    /// A forecast.
    Ready(Forecast),
}

/// What learned headroom offers the decision for one metric.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum HeadroomInput {
    /// Headroom is off, or does not cover this metric.
    #[default]
    Off,
    /// Nothing learned yet, and why (`headroom needs a day of history, 3h so far`).
    NotReady(String),
    /// What was learned.
    Ready(crate::prediction::Headroom),
}

/// The replicas that carry `load` (in the metric's unit, as forecasts and headroom are) at
/// full capacity: a pod carries its request of a Utilization target's resource, and a
/// replica the whole of a value target. A Value target's replicas scale with the value, from
/// the `current` count.
pub fn replicas_at_capacity(
    metric: &Metric,
    load: f64,
    current: i32,
    ctx: &ReplicaContext<'_>,
) -> Result<f64, String> {
    let milli = load * 1000.0;
    match (&metric.source, metric.target) {
        (
            MetricSource::Resource {
                resource,
                container,
            },
            Target::Utilization(_),
        ) => {
            let average = ctx
                .averages
                .of(ctx.pods, resource, container.as_deref(), ctx.kubernetes)?
                .ok_or_else(|| format!("no pod requests {resource}"))?;
            Ok(milli / average)
        }
        (_, Target::AverageValue(t)) if t > 0 => Ok(milli / t as f64),
        (_, Target::Value(t)) if t > 0 => Ok(milli / t as f64 * f64::from(current.max(1))),
        _ => Err("the metric has no target to carry a load against".to_owned()),
    }
}

/// A forecast turned into a proposal.
#[derive(Clone, Debug, PartialEq)]
pub struct ForecastProposal {
    /// Proposed replicas.
    pub replicas: i32,
    /// The forecast peak inside the window, in the metric's unit.
    pub peak: f64,
    /// When the peak occurs.
    pub peak_time: Timestamp,
    /// The target, formatted.
    pub target: String,
}

/// What a proposal covers: the forecast from now for `horizon_seconds`, multiplied by
/// `correction` (see [`correction`]). `strict_up`: a count above the current one is never held back by the
/// tolerance (the lead-time horizon exists so that capacity is there in time).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Span {
    /// Where the span starts, seconds after now: capacity asked for now cannot be ready
    /// before the start-up time, so the load before it is not this proposal's to meet (the
    /// observed metrics still propose for the load now).
    pub from_seconds: i64,
    /// Seconds ahead of now.
    pub horizon_seconds: i64,
    /// Factor applied to the forecast peak.
    pub correction: f64,
    /// Whether scale-ups skip the tolerance.
    pub strict_up: bool,
}

impl Span {
    /// The span a forecast is read over: from the end of start-up to the horizon
    /// (`LeadTime`, where scale-ups skip the tolerance), or the whole window (`Window`).
    pub fn of(horizon: Horizon, reach: Reach, correction: f64) -> Span {
        Span {
            from_seconds: match horizon {
                Horizon::LeadTime => reach.startup_seconds,
                Horizon::Window => 0,
            },
            horizon_seconds: reach.horizon_seconds,
            correction,
            strict_up: horizon == Horizon::LeadTime,
        }
    }
}

/// The exact replicas a load of `peak_milli` (thousandths of the metric's unit) needs
/// against the metric's target, and the target as the decision record shows it (empty
/// without `explain`).
fn replicas_for(
    metric: &Metric,
    peak_milli: f64,
    current: i32,
    ctx: &ReplicaContext<'_>,
) -> Result<(f64, String), String> {
    let explain = ctx.explain;
    let text = |make: &dyn Fn() -> String| if explain { make() } else { String::new() };
    match (&metric.source, metric.target) {
        (
            MetricSource::Resource {
                resource,
                container,
            },
            Target::Utilization(pct),
        ) => {
            let average_request = ctx
                .averages
                .of(ctx.pods, resource, container.as_deref(), ctx.kubernetes)?
                .ok_or_else(|| {
                    format!(
                        "no pod requests {resource}, so a forecast cannot be turned into \
                             replicas"
                    )
                })?;
            let per_pod = average_request * f64::from(pct) / 100.0;
            let request = || Quantity::from_milli(average_request as i64);
            let target = text(&|| format!("{pct}% of {} per pod", request()));
            Ok((peak_milli / per_pod, target))
        }
        (_, Target::AverageValue(t)) => Ok((
            peak_milli / t as f64,
            text(&|| format!("{} per pod", Quantity::from_milli(t))),
        )),
        // A Value target scales the current count in proportion, as the HPA does.
        (_, Target::Value(t)) => Ok((
            peak_milli / t as f64 * f64::from(current.max(1)),
            text(&|| Quantity::from_milli(t).to_string()),
        )),
        _ => Err("the metric has no target a forecast can be compared with".to_owned()),
    }
}

/// The replicas the forecast peak over `span` needs. `Err` says why the forecast cannot be
/// used (it does not cover the span, or the target cannot be met per pod). `ctx` gives the
/// clock, the pods (whose requests a Utilization target's load is carried by), the tolerance
/// and the Kubernetes release.
pub fn forecast_proposal(
    metric: &Metric,
    forecast: &Forecast,
    span: Span,
    current: i32,
    ctx: &ReplicaContext<'_>,
) -> Result<ForecastProposal, String> {
    let now = ctx.now;
    let from = now.as_second();
    let window_seconds = span.horizon_seconds;
    // The point that holds at the span's start began up to a step before it: a short span
    // must not miss the value in force then.
    let start = from.saturating_add(span.from_seconds.clamp(0, window_seconds));
    let first = if span.strict_up {
        start.saturating_sub(forecast.step.max(1) - 1)
    } else {
        start
    };
    let Some((at, peak)) = forecast.peak_in(first, from.saturating_add(window_seconds)) else {
        return Err(format!(
            "the forecast does not cover the next {window_seconds}s (it is out of date)"
        ));
    };
    let peak = peak * span.correction.max(0.0);
    let peak_time = Timestamp::from_second(at).unwrap_or(now);
    // Forecasts are in the metric's unit (cores, bytes, requests/s); targets in thousandths.
    let (exact, target) = replicas_for(metric, peak * 1000.0, current, ctx)?;
    if !exact.is_finite() || exact < 0.0 {
        return Err(format!(
            "the forecast peak {peak} gives no meaningful replica count"
        ));
    }
    let needed = ceil_i32(exact);
    let replicas = if span.strict_up && needed > current {
        needed
    } else if current > 0 && ctx.tolerance.within(exact / f64::from(current)) {
        current
    } else {
        needed
    };
    Ok(ForecastProposal {
        replicas,
        peak,
        peak_time,
        target,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pods::ReadyCondition;

    /// A pod that took `seconds` from its start to Ready (not ready when `None`).
    fn pod(seconds: Option<i64>) -> Pod {
        let start = Timestamp::from_second(1_700_000_000).unwrap();
        Pod {
            start_time: Some(start),
            ready: Some(ReadyCondition {
                status: if seconds.is_some() {
                    ConditionStatus::True
                } else {
                    ConditionStatus::False
                },
                last_transition_time: Timestamp::from_second(
                    start.as_second() + seconds.unwrap_or(30),
                )
                .unwrap(),
            }),
            ..Default::default()
        }
    }

    /// The 75th percentile by sorting every measurable time, as the spec of it reads.
    fn by_sorting(pods: &[Pod]) -> Option<i64> {
        let mut took: Vec<i64> = pods
            .iter()
            .filter(|p| p.ready.is_some_and(|r| r.status == ConditionStatus::True))
            .map(|p| {
                p.ready.unwrap().last_transition_time.as_second()
                    - p.start_time.unwrap().as_second()
            })
            .filter(|s| (1..=3600).contains(s))
            .collect();
        took.sort_unstable();
        took.get((took.len() * 3).div_ceil(4).checked_sub(1)?)
            .copied()
    }

    #[test]
    fn the_startup_measured_is_the_75th_percentile_of_the_ready_pods_few_or_many() {
        assert_eq!(measured_startup(&[]), None);
        assert_eq!(measured_startup(&[pod(None), pod(Some(0))]), None);
        let few: Vec<Pod> = [40, 90, 60, 7200, 45]
            .iter()
            .map(|&s| pod(Some(s)))
            .chain([pod(None)])
            .collect();
        assert_eq!(measured_startup(&few), Some(60));
        assert_eq!(measured_startup(&few), by_sorting(&few));
        // Beyond what is sorted on the stack, and at its edge.
        for count in [
            STARTUPS_ON_STACK - 1,
            STARTUPS_ON_STACK,
            STARTUPS_ON_STACK + 1,
            500,
        ] {
            let many: Vec<Pod> = (0..count)
                .map(|i| pod(Some(1 + (i as i64 * 7919) % 600)))
                .collect();
            assert_eq!(measured_startup(&many), by_sorting(&many), "{count} pods");
            assert!(measured_startup(&many).is_some());
        }
    }
}
