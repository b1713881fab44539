//! Prediction in the simulation: the history a controller would query (the workload's total
//! served load, one sample per predictor interval) and a predictor refitted on it every
//! refit interval of simulated time, handing the decision its forecast.

use std::collections::VecDeque;

use foresight_core::autoscaler::{Autoscaler, Horizon};
use foresight_core::objective::{Knobs, Objective, OperatingPoint};
use foresight_core::prediction::EvaluationInput;

use crate::evaluation::Assumptions;
use foresight_core::decision::Observation;
use foresight_core::forecasting::{ForecastInput, HeadroomInput};
use foresight_core::prediction::conformal::{ForecastErrors, ForecastMargin, DEFAULT_ALPHA};
use foresight_core::prediction::{
    predict_with, Accuracy, AccuracyTracker, Forecast, Prediction, PredictorConfig, Workspace,
};
use foresight_core::trace::Sample;
use serde::Serialize;

use crate::config::ModelConfig;
use crate::load::LoadTrace;
use crate::meter::Meter;
use crate::track::ForecastTrack;

/// Days of a replay's seeded history whose forecast errors are learned before it starts.
pub const BACKFILL_DAYS: i64 = 2;

/// Learns the forecast's errors from `history` (samples `interval` seconds apart) as a shell
/// that had been forecasting all along would have recorded them: each of its last
/// [`BACKFILL_DAYS`] days is forecast from the history before it and compared with what
/// followed, for decisions sizing for the stretch `lead` seconds ahead. A replay runs it on
/// the history it is seeded with, the controller's forecast cache on the history it reads at
/// its first refresh: the same errors from the same history.
pub fn backfill_errors(
    errors: &mut ForecastErrors,
    config: &PredictorConfig,
    plans: &mut Workspace,
    history: &[Sample],
    interval: i64,
    lead: (i64, i64),
) {
    let Some(last) = history.last() else { return };
    let end = last.ts.saturating_add(interval);
    for day in (1..=BACKFILL_DAYS).rev() {
        let cut = end.saturating_sub(day * 86_400);
        let before = history.partition_point(|s| s.ts < cut);
        if let Prediction::Ready(f) = predict_with(plans, config, &history[..before], cut) {
            let upto = cut.saturating_add(86_400).min(end);
            errors.record(&f, 1.0, history, interval, lead, upto);
        }
    }
}

/// The margin `errors` call for where an operating point `point` lets the forecast carry the
/// headroom, at its budget (the share of the lead stretches it may fall short in); `None`
/// at any other point or before any error.
pub fn carried_margin(errors: &mut ForecastErrors, point: &Knobs) -> Option<ForecastMargin> {
    let budget = point.forecast_budget_percent.filter(|_| point.prediction)?;
    errors.retarget(budget / 100.0);
    errors.margin()
}

/// The level correction the decisions apply to a forecast, given how accurate the forecasts
/// have been: the errors of a forecast are measured against it as it was used.
pub fn correction_in_force(horizon: Horizon, accuracy: Option<&Accuracy>) -> f64 {
    match horizon {
        Horizon::LeadTime => foresight_core::forecasting::correction(accuracy),
        Horizon::Window => 1.0,
    }
}

/// The predictor's settings for `autoscaler`, when prediction is on.
pub fn predictor_config(autoscaler: &Autoscaler) -> Option<PredictorConfig> {
    autoscaler.prediction.as_ref().map(|p| p.predictor.clone())
}

/// How prediction fared over a whole run: when it first had a forecast and with which period,
/// or why it never had one; how much of the time it was demoted.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PredictionSummary {
    /// The first refit with a forecast (Unix seconds); `None` when there never was one.
    pub ready_from: Option<i64>,
    /// The period the last forecast repeated (seconds; DSP only).
    pub period_seconds: Option<i64>,
    /// Why the predictor had no forecast at the last refit without one.
    pub not_ready_reason: Option<String>,
    /// Refits in all, and of those the ones with a forecast.
    pub refits: u32,
    /// Refits that produced a forecast.
    pub ready_refits: u32,
    /// Refits after which prediction was demoted (`ForecastInaccurate`).
    pub demoted_refits: u32,
    /// Self-evaluation's verdicts: each replay's time, saving at equal shortfall (percent)
    /// and whether prediction was kept.
    pub evaluations: Vec<EvaluationSummary>,
    /// With `spec.objective`: the operating points the tuner chose, one per daily replay.
    pub operating_points: Vec<OperatingPointSummary>,
}

/// One operating point the tuner chose.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct OperatingPointSummary {
    /// When (Unix seconds).
    pub at: i64,
    /// The first Utilization target it runs at, percent.
    pub target_utilization: Option<i32>,
    /// The headroom risk budget, percent (with prediction).
    pub risk_budget_percent: Option<f64>,
    /// Whether prediction proposes.
    pub prediction: bool,
    /// Whether its replay met the objective.
    pub meets_objective: bool,
    /// The choice in one sentence.
    pub description: String,
}

/// One self-evaluation verdict.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct EvaluationSummary {
    /// When (Unix seconds).
    pub at: i64,
    /// Saving at equal shortfall over the replay, percent.
    pub saving_percent: f64,
    /// Whether prediction was kept.
    pub kept: bool,
}

impl PredictionSummary {
    /// One line for people: "ready after 2.0 days (daily period)", "ready in only 4 of 359
    /// refits (1%), first after 12.5 days (daily period); otherwise: no daily or weekly period
    /// found ..." or "never ready: history 1d < 2 periods".
    pub fn describe(&self, span_start: i64) -> String {
        let why_not = self
            .not_ready_reason
            .as_deref()
            .unwrap_or("no forecast was made");
        let Some(from) = self.ready_from else {
            return format!("never ready: {why_not}");
        };
        let day = (from - span_start).max(0) as f64 / 86_400.0;
        let period = match self.period_seconds {
            Some(86_400) => " (daily period)".to_owned(),
            Some(604_800) => " (weekly period)".to_owned(),
            Some(p) => format!(" (period {p} s)"),
            None => String::new(),
        };
        let share = f64::from(self.ready_refits) / f64::from(self.refits.max(1)) * 100.0;
        let mut text = if share < 50.0 {
            format!(
                "ready in only {} of {} refits ({share:.0}%), first after {day:.1} days{period}; \
                 otherwise: {why_not}",
                self.ready_refits, self.refits
            )
        } else {
            format!("ready after {day:.1} days{period}")
        };
        if !self.evaluations.is_empty() {
            let kept = self.evaluations.iter().filter(|e| e.kept).count();
            text.push_str(&format!(
                "; kept by {kept} of {} daily replays of its own history",
                self.evaluations.len()
            ));
        }
        if let Some(last) = self.operating_points.last() {
            let met = self
                .operating_points
                .iter()
                .filter(|p| p.meets_objective)
                .count();
            text.push_str(&format!(
                "; {} daily operating points chosen by replay ({met} met the objective), the last: {}",
                self.operating_points.len(),
                last.description
            ));
        }
        if self.demoted_refits > 0 && self.refits > 0 {
            text.push_str(&format!(
                "; demoted after {:.0}% of the refits (ForecastInaccurate)",
                f64::from(self.demoted_refits) / f64::from(self.refits) * 100.0
            ));
        }
        text
    }
}

/// Keeps the metric's history and refits the predictor.
#[derive(Clone, Debug)]
pub struct Forecaster {
    config: PredictorConfig,
    interval: i64,
    history_seconds: i64,
    window: i64,
    refit_every: i64,
    next_refit: i64,
    metrics: usize,
    history: VecDeque<Sample>,
    last_boundary: Option<(i64, f64)>,
    forecast: Option<Forecast>,
    accuracy: AccuracyTracker,
    accuracy_window: i64,
    last_refit: Option<i64>,
    summary: PredictionSummary,
    headroom_quantile: Option<f64>,
    sync_seconds: i64,
    /// The autoscaler, for self-evaluation's replays (`None` when it is off).
    evaluated: Option<Box<Autoscaler>>,
    evaluation: EvaluationInput,
    /// The autoscaler and its objective, for the tuner's replays (`None` without one).
    tuned: Option<(Box<Autoscaler>, Objective)>,
    operating_point: Option<OperatingPoint>,
    /// The schedule's block the decisions were last handed the headroom for.
    handed_block: Option<i64>,
    plans: Plans,
    /// The forecast's own errors, where it may carry the headroom (the spec's policy says
    /// so, or an objective's tuner may choose it); `None` otherwise.
    errors: Option<ForecastErrors>,
    /// The spec's budget for them (set at an operating point).
    error_budget: Option<f64>,
    /// The level correction the decisions applied to the forecast in use.
    correction: f64,
    horizon: Horizon,
}

/// The predictor's FFT plans, kept from one refit to the next: planning the transforms of a
/// week's series cost about a tenth of a replay with prediction. A cache only (the forecast
/// does not depend on it), so a clone starts without one.
#[derive(Debug, Default)]
struct Plans(Workspace);

impl Clone for Plans {
    fn clone(&self) -> Self {
        Plans(Workspace::reusing_period(self.0.period_reuse_seconds()))
    }
}

impl Forecaster {
    /// A forecaster for `autoscaler`, or `None` when its prediction is off.
    pub fn for_autoscaler(autoscaler: &Autoscaler, model: &ModelConfig) -> Option<Forecaster> {
        let policy = autoscaler.prediction.as_ref()?;
        let window = policy.window_seconds;
        let config = policy.predictor.clone();
        let (interval, history_seconds) =
            (config.interval_secs().max(1), config.history_secs().max(1));
        Some(Forecaster {
            config,
            interval,
            history_seconds,
            window,
            refit_every: model.refit_interval_seconds.max(1),
            next_refit: i64::MIN,
            metrics: autoscaler.metrics.len(),
            history: VecDeque::new(),
            last_boundary: None,
            forecast: None,
            accuracy: AccuracyTracker::default(),
            last_refit: None,
            summary: PredictionSummary::default(),
            accuracy_window: policy.accuracy_window_seconds,
            headroom_quantile: policy.headroom_quantile,
            sync_seconds: autoscaler.settings.sync_period_seconds.max(1),
            // With an objective the tuner replays the history instead: prediction on or off
            // is one of its candidates.
            evaluated: (policy.self_evaluation && autoscaler.objective.is_none())
                .then(|| Box::new(autoscaler.clone())),
            evaluation: EvaluationInput::Pending("no history replayed yet".to_owned()),
            tuned: autoscaler
                .objective
                .map(|o| (Box::new(autoscaler.clone()), o)),
            operating_point: None,
            handed_block: None,
            plans: Plans(Workspace::reusing_period(model.period_reuse_seconds)),
            errors: (policy.forecast_error_budget.is_some() || autoscaler.objective.is_some())
                .then(|| {
                    ForecastErrors::new(policy.forecast_error_budget.unwrap_or(DEFAULT_ALPHA))
                }),
            error_budget: policy.forecast_error_budget,
            correction: 1.0,
            horizon: policy.horizon,
        })
    }

    /// Starts the history with `prior` (the load before the run), as a controller that has
    /// been watching the workload would have it.
    pub fn seed(&mut self, prior: &[Sample]) {
        self.history.extend(prior.iter().copied());
    }

    /// Where the forecast may carry the headroom, learns its errors from `prior` (the history
    /// seeded) before the run with [`backfill_errors`], for decisions `startup_seconds`
    /// ahead, as a controller learns them from the history it reads at its first refresh.
    /// Without this a replay of a few days would judge the margin by its first hours' errors.
    pub fn backfill_errors(&mut self, startup_seconds: i64) {
        let Some(errors) = self.errors.as_mut() else {
            return;
        };
        let lead = (startup_seconds, startup_seconds + 2 * self.sync_seconds);
        backfill_errors(
            errors,
            &self.config,
            &mut self.plans.0,
            self.history.make_contiguous(),
            self.interval,
            lead,
        );
    }

    /// The predictor's sample interval, seconds.
    pub fn interval_seconds(&self) -> i64 {
        self.interval
    }

    /// The forecast in use, if any.
    pub fn forecast(&self) -> Option<&Forecast> {
        self.forecast.as_ref()
    }

    /// When the predictor was last refitted.
    pub fn last_refit(&self) -> Option<i64> {
        self.last_refit
    }

    /// How prediction fared so far.
    pub fn summary(&self) -> &PredictionSummary {
        &self.summary
    }

    /// Records whether the decision kept prediction after the latest verdict.
    pub fn record_kept(&mut self, kept: bool) {
        if let Some(last) = self.summary.evaluations.last_mut() {
            last.kept = kept;
        }
    }

    /// Counts a refit after which the decision had prediction demoted.
    pub fn record_demoted(&mut self) {
        self.summary.demoted_refits += 1;
    }

    /// How the forecasts compared with the load that followed them, over the accuracy window.
    pub fn accuracy(&self) -> Option<Accuracy> {
        self.accuracy.summary()
    }

    /// Records a history sample when `now` closes a sample interval: the average total
    /// served load over it, stamped at its start (as a trace's value holds from its stamp).
    /// With `recorded` (the trace replayed), the sample is the trace's mean over the interval,
    /// served or not: the same bits in every replay of the trace, which a
    /// [`crate::track::ForecastTrack`] shares its fits between (see there why).
    pub fn observe(&mut self, now: i64, meter: &Meter, recorded: Option<&LoadTrace>) {
        if now.rem_euclid(self.interval) != 0 {
            return;
        }
        let served = meter.now.served;
        if let Some((from, before)) = self.last_boundary {
            if now > from {
                let value = match recorded {
                    Some(trace) => trace.mean_over(from, now),
                    None => (served - before) / (now - from) as f64,
                };
                self.history.push_back(Sample { ts: from, value });
            }
        }
        self.last_boundary = Some((now, served));
        let oldest = now - self.history_seconds - self.interval;
        while self.history.front().is_some_and(|s| s.ts < oldest) {
            self.history.pop_front();
        }
    }

    /// Refits when a refit is due at `now`, and hands the result to the decision through
    /// `observation.metrics`: the forecast, the headroom learned for a start-up of
    /// `startup_seconds` (the decisions' latest), and self-evaluation's verdict (`proposing`:
    /// whether the latest verdict kept prediction). Returns the new forecast's peak inside the
    /// prediction window (Unix seconds, load units), when there is one.
    /// With a `track` of the load replayed, the fit is read from it when the history is the
    /// recorded load's.
    pub fn refit_if_due(
        &mut self,
        now: i64,
        observation: &mut Observation,
        startup_seconds: i64,
        proposing: bool,
        track: Option<&mut ForecastTrack>,
    ) -> Option<(i64, f64)> {
        if now < self.next_refit {
            if self.block_at(now) != self.handed_block {
                self.hand_over_block(now, observation, startup_seconds, track);
            }
            return None;
        }
        self.next_refit = now.saturating_add(self.refit_every);
        self.last_refit = Some(now);
        // The forecast in use until now meets the history that arrived meanwhile, as the
        // controller's forecast cache compares them at each refresh.
        let lead = (startup_seconds, startup_seconds + 2 * self.sync_seconds);
        if let (Some(errors), Some(previous)) = (self.errors.as_mut(), &self.forecast) {
            errors.record(
                previous,
                self.correction,
                self.history.make_contiguous(),
                self.interval,
                lead,
                now,
            );
        }
        match &self.forecast {
            Some(previous) => self.accuracy.record(
                previous,
                self.history.make_contiguous(),
                now,
                self.accuracy_window,
            ),
            None => self.accuracy.expire(now, self.accuracy_window),
        }
        let history = self.history.make_contiguous();
        let mut track = track.filter(|t| t.fits_predictor(&self.config));
        let shared = track
            .as_deref_mut()
            .and_then(|t| t.prediction(history, now));
        let prediction =
            shared.unwrap_or_else(|| predict_with(&mut self.plans.0, &self.config, history, now));
        let input = match prediction {
            Prediction::Ready(f) => {
                self.forecast = Some(f.clone());
                ForecastInput::Ready(f)
            }
            Prediction::NotReady { reason } => {
                self.forecast = None;
                ForecastInput::NotReady(reason)
            }
        };
        self.summary.refits += 1;
        match &input {
            ForecastInput::Ready(f) => {
                self.summary.ready_refits += 1;
                self.summary.ready_from.get_or_insert(now);
                self.summary.period_seconds = f.period_seconds;
            }
            ForecastInput::NotReady(reason) | ForecastInput::Failed(reason) => {
                self.summary.not_ready_reason = Some(reason.clone());
            }
            ForecastInput::Off => {}
        }
        if observation.metrics.len() < self.metrics {
            observation
                .metrics
                .resize_with(self.metrics, Default::default);
        }
        let accuracy = self.accuracy.summary();
        self.tune_if_due(now, observation, startup_seconds, proposing);
        observation.operating_point = self.operating_point.clone();
        let headroom = self.headroom_at(now, startup_seconds, track);
        self.handed_block = self.block_at(now);
        self.evaluate_if_due(now, observation, startup_seconds, proposing);
        self.correction = correction_in_force(self.horizon, accuracy.as_ref());
        let margin = self.forecast_margin(now);
        for seen in observation.metrics.iter_mut().take(self.metrics) {
            seen.forecast_margin = margin.clone();
            seen.forecast = input.clone();
            seen.accuracy = accuracy;
            seen.headroom = headroom.clone();
            seen.evaluation = self.evaluation.clone();
        }
        self.forecast
            .as_ref()
            .and_then(|f| f.peak_in(now, now.saturating_add(self.window)))
    }
}

impl Forecaster {
    /// Runs at `point` from now on without choosing another: a replay of a schedule the tuner
    /// composed.
    pub fn hold_point(&mut self, point: OperatingPoint) {
        self.tuned = None;
        self.operating_point = Some(point);
    }

    /// The block of the operating point's schedule `now` falls in; `None` without one.
    fn block_at(&self, now: i64) -> Option<i64> {
        self.operating_point.as_ref()?.block_at(now)
    }

    /// The headroom learned at the risk budget in force at `now` (the operating point's, the
    /// spec's without one).
    fn headroom_at(
        &mut self,
        now: i64,
        startup_seconds: i64,
        track: Option<&mut ForecastTrack>,
    ) -> HeadroomInput {
        let quantile = match &self.operating_point {
            Some(p) => p.knobs_at(now).headroom_quantile(self.headroom_quantile),
            None => self.headroom_quantile,
        };
        let Some(q) = quantile else {
            return HeadroomInput::Off;
        };
        let lead = (startup_seconds, startup_seconds + 2 * self.sync_seconds);
        let history = self.history.make_contiguous();
        let shared = track.and_then(|t| t.headroom(history, now, self.interval, lead, q));
        match shared.unwrap_or_else(|| {
            foresight_core::prediction::headroom::learn(history, self.interval, lead, q)
        }) {
            Ok(h) => HeadroomInput::Ready(h),
            Err(reason) => HeadroomInput::NotReady(reason),
        }
    }

    /// Between refits, where a schedule's block begins: the headroom and the forecast's
    /// margin at the new block's knobs (the forecast itself stands).
    fn hand_over_block(
        &mut self,
        now: i64,
        observation: &mut Observation,
        startup_seconds: i64,
        track: Option<&mut ForecastTrack>,
    ) {
        let track = track.filter(|t| t.fits_predictor(&self.config));
        let headroom = self.headroom_at(now, startup_seconds, track);
        let margin = self.forecast_margin(now);
        self.handed_block = self.block_at(now);
        for seen in observation.metrics.iter_mut().take(self.metrics) {
            seen.forecast_margin = margin.clone();
            seen.headroom = headroom.clone();
        }
    }

    /// The margin the forecast's errors call for, where the forecast carries the headroom:
    /// at the operating point's budget with an objective, the spec's otherwise.
    fn forecast_margin(&mut self, now: i64) -> Option<ForecastMargin> {
        let errors = self.errors.as_mut()?;
        match &self.operating_point {
            Some(p) => carried_margin(errors, &p.knobs_at(now)),
            None => {
                errors.retarget(self.error_budget?);
                errors.margin()
            }
        }
    }

    /// Chooses a new operating point once a day, with `spec.objective`: the history so far
    /// replayed under the tuner's candidates (see [`crate::tuner`]).
    fn tune_if_due(
        &mut self,
        now: i64,
        observation: &Observation,
        startup_seconds: i64,
        proposing: bool,
    ) {
        let Some((autoscaler, objective)) = &self.tuned else {
            return;
        };
        if let Some(p) = &self.operating_point {
            if now - p.chosen_at < crate::tuner::TUNING_INTERVAL_SECONDS {
                return;
            }
        }
        let assumptions = Assumptions::from_pods(&observation.pods, startup_seconds, proposing);
        if let Ok(p) = crate::tuner::tune(
            autoscaler,
            objective,
            self.history.make_contiguous(),
            self.interval,
            now,
            assumptions,
            self.operating_point.as_ref(),
        ) {
            self.summary.operating_points.push(OperatingPointSummary {
                at: now,
                target_utilization: p.knobs.utilization,
                risk_budget_percent: p.knobs.risk_budget_percent.filter(|_| p.knobs.prediction),
                prediction: p.knobs.prediction,
                meets_objective: p.meets,
                description: p.describe(),
            });
            self.operating_point = Some(p);
        }
    }

    /// Renews self-evaluation's verdict once a day: the history so far replayed with and
    /// without prediction (see [`crate::evaluation`]).
    fn evaluate_if_due(
        &mut self,
        now: i64,
        observation: &Observation,
        startup_seconds: i64,
        proposing: bool,
    ) {
        let Some(autoscaler) = &self.evaluated else {
            self.evaluation = EvaluationInput::Off;
            return;
        };
        if let EvaluationInput::Done(e) = &self.evaluation {
            if now - e.at < crate::evaluation::EVALUATION_INTERVAL_SECONDS {
                return;
            }
        }
        let assumptions = Assumptions::from_pods(&observation.pods, startup_seconds, proposing);
        self.evaluation = match crate::evaluation::evaluate(
            autoscaler,
            self.history.make_contiguous(),
            self.interval,
            now,
            assumptions,
        ) {
            Ok(e) => {
                self.summary.evaluations.push(EvaluationSummary {
                    at: now,
                    saving_percent: (e.saving_percent() * 10.0).round() / 10.0,
                    // The decision says, from the previous verdict (`record_kept`).
                    kept: false,
                });
                EvaluationInput::Done(e)
            }
            Err(why) => EvaluationInput::Pending(why),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::web;
    use foresight_core::prediction::predict;

    fn forecaster(prediction: &str) -> Option<Forecaster> {
        let a = web(&format!("  maxReplicas: 10\n{prediction}"));
        Forecaster::for_autoscaler(&a, &ModelConfig::default())
    }

    const DSP: &str = "  prediction:
    predictionWindowSeconds: 600
    predictionAlgorithm: {algorithmType: dsp, dsp: {sampleInterval: 60s, historyLength: 3d}}
";

    #[test]
    fn no_prediction_no_forecaster() {
        assert!(forecaster("").is_none());
    }

    #[test]
    fn history_holds_the_mean_served_load_of_each_interval_stamped_at_its_start() {
        let mut f = forecaster(DSP).unwrap();
        assert_eq!(f.interval_seconds(), 60);
        let mut meter = Meter::new(0, 15, 30, 0.0, 0.0);
        let mut t = 0;
        f.observe(t, &meter, None);
        for served in [2.0, 2.0, 4.0, 4.0, 1.0, 1.0, 1.0, 1.0] {
            meter.add(30, 1, served);
            t += 30;
            meter.reach(t);
            f.observe(t, &meter, None);
        }
        let history: Vec<(i64, f64)> = f.history.iter().map(|s| (s.ts, s.value)).collect();
        assert_eq!(history, [(0, 2.0), (60, 4.0), (120, 1.0), (180, 1.0)]);
    }

    #[test]
    fn refits_with_the_kept_plans_forecast_as_a_fresh_predictor_does() {
        // Three days of a daily cycle, then refits six hours apart as the history grows past
        // its length: each forecast equals the one a predictor planning afresh makes.
        let mut f = forecaster(DSP).unwrap();
        let day = |t: i64| 10.0 + 4.0 * (t as f64 * std::f64::consts::TAU / 86_400.0).sin();
        let mut observation = Observation::default();
        let mut ready = 0;
        for step in 0..8 {
            let now = 3 * 86_400 + step * 6 * 3600;
            let from = f.history.back().map_or(0, |s| s.ts + 60);
            f.seed(
                &(from / 60..now / 60)
                    .map(|m| Sample {
                        ts: m * 60,
                        value: day(m * 60),
                    })
                    .collect::<Vec<_>>(),
            );
            f.refit_if_due(now, &mut observation, 60, true, None);
            let fresh = predict(&f.config, f.history.make_contiguous(), now);
            match (&fresh, f.forecast()) {
                (Prediction::Ready(fresh), Some(kept)) => {
                    assert_eq!(kept, fresh, "at {now}");
                    ready += 1;
                }
                (Prediction::NotReady { .. }, None) => {}
                (fresh, kept) => panic!("at {now}: fresh {fresh:?}, kept {kept:?}"),
            }
        }
        assert_eq!(
            ready, 8,
            "a daily cycle over three days is forecast at every refit"
        );
    }

    #[test]
    fn refits_are_spaced_by_the_refit_interval_and_reach_the_observation() {
        let mut f = forecaster(DSP).unwrap();
        let mut observation = Observation::default();
        f.refit_if_due(0, &mut observation, 60, true, None);
        // One input per metric (the defaulted CPU metric), not ready without history.
        assert_eq!(observation.metrics.len(), 1);
        assert!(matches!(
            observation.metrics[0].forecast,
            ForecastInput::NotReady(_)
        ));
        observation.metrics[0].forecast = ForecastInput::Off;
        f.refit_if_due(3599, &mut observation, 60, true, None);
        assert_eq!(
            observation.metrics[0].forecast,
            ForecastInput::Off,
            "refitted before the hour"
        );
        f.refit_if_due(3600, &mut observation, 60, true, None);
        assert!(matches!(
            observation.metrics[0].forecast,
            ForecastInput::NotReady(_)
        ));
    }
}
