//! What a refresh learns from the history besides the forecast: the headroom of each hour of
//! the day (`foresight_core::prediction::headroom`), and once a day either self-evaluation's
//! verdict (`foresight_replay::evaluation`) or, with `spec.objective`, the operating point
//! (`foresight_replay::tuner`): the simulator's replays, the same functions `foresight simulate`
//! runs. With an objective it also learns the forecast's own errors, for the points where the
//! forecast carries the headroom: from the history before the first refresh, as a replay does
//! (`foresight_replay::forecaster::backfill_errors`), then at every refresh. All are CPU
//! work; the refresh runs them on its blocking thread.

use foresight_core::autoscaler::{Autoscaler, PredictionPolicy};
use foresight_core::forecasting::HeadroomInput;
use foresight_core::objective::{Knobs, Objective, OperatingPoint};
use foresight_core::prediction::conformal::{ForecastErrors, ForecastMargin, DEFAULT_ALPHA};
use foresight_core::prediction::{headroom, EvaluationInput, Forecast, PredictorConfig, Workspace};
use foresight_core::trace::Sample;
use foresight_replay::evaluation::{evaluate, EVALUATION_INTERVAL_SECONDS};
use foresight_replay::forecaster::{backfill_errors, carried_margin, correction_in_force};
use foresight_replay::tuner::{tune, TUNING_INTERVAL_SECONDS};

use super::entries::{Entry, Learned, Workload};

/// What one refresh should learn, taken from its entry before the history is read.
#[derive(Clone, Debug, Default)]
pub(super) struct Lesson {
    /// The headroom quantile, when the spec asks for headroom.
    quantile: Option<f64>,
    /// The workload, once a reconcile has described it.
    workload: Option<Workload>,
    /// Whether a new self-evaluation verdict is due.
    evaluate: bool,
    /// The objective, when a new operating point is due.
    tune: Option<Objective>,
    /// The point in use (kept by the tuner's hysteresis, and what it carries into the next
    /// choice).
    point: Option<OperatingPoint>,
    /// Its knobs in force at the refresh (its block's, when it is a schedule over the day):
    /// their risk budget sets the headroom's quantile until a new point is chosen.
    in_force: Option<Knobs>,
    /// With an objective, once the workload is known: what the forecast's errors are learned
    /// from besides the history.
    errors: Option<ErrorLesson>,
}

/// The forecast's errors so far and the forecast they are to be compared with next.
#[derive(Clone, Debug)]
struct ErrorLesson {
    /// `None`: none learned yet, so they are learned from the history first.
    known: Option<ForecastErrors>,
    /// The forecast in use until this refresh, and the level correction the decisions
    /// applied to it.
    previous: Option<(Forecast, f64)>,
    predictor: PredictorConfig,
}

impl Lesson {
    /// What `entry` should learn at `now`. Headroom is learned from the first refresh on (for
    /// a start-up of 60 s until a reconcile has described the workload); a verdict or an
    /// operating point needs the workload described.
    pub(super) fn for_entry(entry: &Entry, now: i64) -> Lesson {
        let due = match &entry.evaluation {
            EvaluationInput::Done(e) => now - e.at >= EVALUATION_INTERVAL_SECONDS,
            _ => true,
        };
        let point = entry.operating_point.as_ref();
        let tuning_due = point.is_none_or(|p| now - p.chosen_at >= TUNING_INTERVAL_SECONDS);
        let errors = match (&entry.objective, &entry.workload) {
            (Some(_), Some(w)) => {
                let horizon = w.autoscaler.prediction.as_ref().map(|p| p.horizon);
                let accuracy = entry.accuracy.summary();
                Some(ErrorLesson {
                    known: entry.errors.clone(),
                    previous: entry
                        .forecast
                        .clone()
                        .zip(horizon.map(|h| correction_in_force(h, accuracy.as_ref()))),
                    predictor: entry.predictor.clone(),
                })
            }
            _ => None,
        };
        Lesson {
            quantile: entry.headroom_quantile,
            workload: entry.workload.clone(),
            evaluate: entry.self_evaluation && due,
            tune: entry.objective.filter(|_| tuning_due),
            point: point.cloned(),
            in_force: point.map(|p| p.knobs_at(now)),
            errors,
        }
    }

    /// The lead stretch a decision sizes for: from the pods' start-up until two syncs later
    /// (a start-up of 60 s and syncs of 15 s until a reconcile has described the workload).
    fn lead(&self) -> (i64, i64) {
        let (startup, sync) =
            self.workload
                .as_ref()
                .map_or((PredictionPolicy::DEFAULT_STARTUP_SECONDS, 15), |w| {
                    (
                        w.assumptions.startup_seconds,
                        w.autoscaler.settings.sync_period_seconds.max(1),
                    )
                });
        (startup, startup.saturating_add(2 * sync))
    }

    /// Learns from `history` (samples `interval` seconds apart) at `now`.
    pub(super) fn learn(&self, history: &[Sample], interval: i64, now: i64) -> Learned {
        let operating_point = self.choose_point(history, interval, now);
        // A new point's risk budget applies at once, as it does in the simulator.
        let point = operating_point
            .as_ref()
            .map(|p| p.knobs_at(now))
            .or(self.in_force);
        let quantile = match point {
            Some(knobs) => knobs.headroom_quantile(self.quantile),
            None => self.quantile,
        };
        let headroom = match quantile {
            None => HeadroomInput::Off,
            Some(q) => match headroom::learn(history, interval, self.lead(), q) {
                Ok(h) => HeadroomInput::Ready(h),
                Err(reason) => HeadroomInput::NotReady(reason),
            },
        };
        let (errors, forecast_margin) = match &self.errors {
            Some(e) => e.learn(history, interval, self.lead(), point),
            None => (None, None),
        };
        let evaluation = match (&self.workload, self.evaluate) {
            (Some(w), true) => Some(
                match evaluate(&narrowed(w), history, interval, now, w.assumptions) {
                    Ok(e) => EvaluationInput::Done(e),
                    Err(why) => EvaluationInput::Pending(why),
                },
            ),
            _ => None,
        };
        Learned {
            headroom,
            evaluation,
            operating_point,
            errors,
            forecast_margin,
        }
    }

    /// A new operating point, when one is due and the history is long enough to replay
    /// (until it is, the spec runs as written, as it does in the simulator).
    fn choose_point(&self, history: &[Sample], interval: i64, now: i64) -> Option<OperatingPoint> {
        let (Some(w), Some(objective)) = (&self.workload, &self.tune) else {
            return None;
        };
        tune(
            &narrowed(w),
            objective,
            history,
            interval,
            now,
            w.assumptions,
            self.point.as_ref(),
        )
        .ok()
    }
}

impl ErrorLesson {
    /// The errors with `history`'s added (samples `interval` seconds apart), and the margin
    /// they call for at `point`, when it lets the forecast carry the headroom. The first
    /// time, the errors are learned from the history itself, forecasting each of its last
    /// days from the history before it: the function a replay learns them with. `None`
    /// while there is no history.
    fn learn(
        &self,
        history: &[Sample],
        interval: i64,
        lead: (i64, i64),
        point: Option<Knobs>,
    ) -> (Option<ForecastErrors>, Option<ForecastMargin>) {
        let Some(last) = history.last() else {
            return (self.known.clone(), None);
        };
        let mut errors = match &self.known {
            Some(known) => known.clone(),
            None => {
                let mut fresh = ForecastErrors::new(DEFAULT_ALPHA);
                let mut plans = Workspace::default();
                backfill_errors(
                    &mut fresh,
                    &self.predictor,
                    &mut plans,
                    history,
                    interval,
                    lead,
                );
                fresh
            }
        };
        if let Some((previous, correction)) = &self.previous {
            // Only stretches the history has closed: up to the end of its last interval.
            let end = last.ts.saturating_add(interval);
            errors.record(previous, *correction, history, interval, lead, end);
        }
        let margin = point.and_then(|k| carried_margin(&mut errors, &k));
        (Some(errors), margin)
    }
}

/// The autoscaler with only the metric the history is of: a replay feeds one load, and each
/// metric is judged on its own.
fn narrowed(w: &Workload) -> Autoscaler {
    let mut a = (*w.autoscaler).clone();
    if a.metrics.len() > 1 {
        if let Some(m) = a.metrics.get(w.index).cloned() {
            a.metrics = vec![m];
        }
    }
    a
}
