//! Prediction's part of the decision. For each metric: self-evaluation decides whether
//! prediction may propose at all (it replayed the recent history with and without it); then
//! the forecast proposes the replicas its peak over the horizon needs (unless it is not
//! ready or demoted), and learned headroom proposes the replicas that carry the observed load
//! plus the rise this hour of the day has shown. Metrics without a proposal fall back to their
//! observed value, and the `PredictionReady` condition says why.

use std::borrow::Cow;

use foresight_api::status::{
    EvaluationStatus, ForecastAccuracyStatus, PredictionStatus, ProposalRecord,
};

use super::{Candidate, Decision, Observation};
use crate::autoscaler::{Autoscaler, Horizon, Metric, PredictionPolicy, Target};
use crate::conditions::{self, PREDICTION_READY};
use crate::forecasting::{self, forecast_proposal, ForecastInput, HeadroomInput, Reach, Span};
use crate::prediction::{Accuracy, Evaluation, EvaluationInput, Forecast};
use crate::proposals::Scale;
use crate::replicas::{ceil_i32, ReplicaContext};
use crate::rounding::round;

/// Why a metric's prediction proposes nothing, by the condition reason it leads to.
enum Idle {
    /// No forecast (or none that covers the horizon), or self-evaluation has no verdict yet.
    NotReady(String),
    /// The history could not be read.
    Failed(String),
    /// The forecast is demoted for being wrong.
    Demoted(String),
    /// The replay of the recent history showed no saving.
    NoSaving(String),
}

/// What one metric's prediction gave: how many proposals it made (and, when the decision
/// explains itself, a description of each), and why the forecast made none when it did not.
#[derive(Default)]
struct MetricOutcome {
    in_use: usize,
    /// Its learned headroom proposed where it guards the scale-down.
    guards_scale_down: bool,
    texts: Vec<String>,
    idle: Option<Idle>,
}

impl MetricOutcome {
    /// Counts a proposal; `text` describes it (empty when the decision explains nothing, and
    /// then not kept: the list is only the condition's message).
    fn proposed(&mut self, text: String) {
        self.in_use += 1;
        if !text.is_empty() {
            self.texts.push(text);
        }
    }
}

/// The `PredictionReady` condition's inputs, gathered metric by metric: how many metrics
/// are in use, missing, off for no saving or demoted (which decides the condition), and
/// their descriptions when the decision explains itself (its message).
#[derive(Default)]
struct Tally {
    in_use: usize,
    /// Metrics whose learned headroom guards the scale-down.
    guarding: usize,
    missing: usize,
    no_saving: usize,
    demoted: usize,
    failed: bool,
    in_use_texts: Vec<String>,
    missing_texts: Vec<String>,
    no_saving_texts: Vec<String>,
    demoted_texts: Vec<String>,
}

impl Tally {
    /// Adds metric `id`'s outcome; `explain` keeps the texts.
    fn add(&mut self, id: &str, o: MetricOutcome, explain: bool) {
        self.in_use += o.in_use;
        self.guarding += usize::from(o.guards_scale_down);
        self.in_use_texts.extend(o.texts);
        let Some(idle) = &o.idle else { return };
        // A metric whose headroom proposes is in use even while its forecast is not, so it
        // is not counted missing.
        let missing = o.in_use == 0;
        let say = |how: &str, r: &str| format!("{id}: {how}{r}");
        let (label, reason) = match idle {
            Idle::NotReady(r) => ("", r),
            Idle::Failed(r) => {
                self.failed = true;
                ("", r)
            }
            Idle::Demoted(r) => {
                self.demoted += 1;
                if explain {
                    self.demoted_texts.push(say("", r));
                }
                ("demoted: ", r)
            }
            Idle::NoSaving(r) => {
                self.no_saving += 1;
                if explain {
                    self.no_saving_texts.push(say("", r));
                }
                ("off: ", r)
            }
        };
        if missing {
            self.missing += 1;
            if explain {
                self.missing_texts.push(say(label, reason));
            }
        }
    }
}

/// The metric's pieces of the observation.
struct Seen<'o> {
    forecast: &'o ForecastInput,
    accuracy: Option<&'o Accuracy>,
    headroom: &'o HeadroomInput,
    evaluation: &'o EvaluationInput,
    /// The margin the forecast's own errors call for, when the forecast carries the headroom.
    margin: Option<&'o crate::prediction::conformal::ForecastMargin>,
    /// The objective's operating point, when it runs without prediction.
    tuned_off: Option<&'o crate::objective::OperatingPoint>,
}

impl Decision {
    /// Prediction's proposals for every metric (see the module docs), `status.prediction`
    /// and the `PredictionReady` condition. `exact` holds each metric's observed need at its
    /// target (unrounded), `None` where the metric could not be read.
    pub(super) fn predict(
        &mut self,
        a: &Autoscaler,
        obs: &Observation,
        scale: &Scale,
        ctx: &ReplicaContext<'_>,
        exact: &[Option<f64>],
        candidates: &mut Vec<Candidate>,
    ) {
        let Some(policy) = &a.prediction else {
            conditions::remove(&mut self.status.conditions, PREDICTION_READY);
            self.status.prediction = None;
            return;
        };
        let reach = forecasting::reach(policy, ctx.pods, a.settings.sync_period_seconds);
        // The previous entry: its verdicts carry over, and (the status being rebuilt on every
        // decision) its strings are reused for this decision's.
        let mut previous = self.status.prediction.take();
        let single = a.metrics.len() == 1;
        let mut records = Vec::new();
        let mut tally = Tally::default();
        for (i, metric) in a.metrics.iter().enumerate() {
            let m = obs.metrics.get(i);
            let seen = Seen {
                forecast: m.map_or(&ForecastInput::Off, |m| &m.forecast),
                accuracy: m.and_then(|m| m.accuracy.as_ref()),
                headroom: m.map_or(&HeadroomInput::Off, |m| &m.headroom),
                evaluation: m.map_or(&EvaluationInput::Off, |m| &m.evaluation),
                margin: m.and_then(|m| m.forecast_margin.as_ref()),
                tuned_off: obs.operating_point.as_ref().filter(|p| {
                    a.objective.is_some() && !p.knobs_at(self.time.as_second()).prediction
                }),
            };
            let need = exact.get(i).copied().flatten();
            let (id, verdict) = previous_verdict(previous.as_mut(), metric, single);
            let (outcome, record) = self.predict_metric(
                policy, metric, &id, verdict, &seen, need, reach, scale, ctx, candidates,
            );
            tally.add(&id, outcome, self.explain);
            if let Some(mut r) = record {
                r.metric = id;
                records.push(r);
            }
        }
        self.scale_down_guarded = !a.metrics.is_empty() && tally.guarding == a.metrics.len();
        let horizon = match policy.horizon {
            Horizon::LeadTime => "LeadTime",
            Horizon::Window => "Window",
        };
        let horizon = match previous {
            Some(p) if p.horizon == horizon => p.horizon,
            _ => horizon.to_owned(),
        };
        self.status.prediction = Some(PredictionStatus {
            horizon,
            horizon_seconds: reach.horizon_seconds,
            startup_seconds: reach.startup_seconds,
            startup_measured: reach.startup_measured,
            metrics: records,
        });
        self.set_prediction_condition(tally);
    }

    /// One metric's prediction: the self-evaluation gate, the forecast, the headroom. Returns
    /// what it did and the metric's entry in `status.prediction.metrics` (none when
    /// prediction does not cover it).
    #[allow(clippy::too_many_arguments)]
    fn predict_metric(
        &mut self,
        policy: &PredictionPolicy,
        metric: &Metric,
        id: &str,
        (was_demoted, was_kept): (bool, bool),
        seen: &Seen<'_>,
        need: Option<f64>,
        reach: Reach,
        scale: &Scale,
        ctx: &ReplicaContext<'_>,
        candidates: &mut Vec<Candidate>,
    ) -> (MetricOutcome, Option<ForecastAccuracyStatus>) {
        let demotion = forecasting::demotion(policy, seen.accuracy, was_demoted, self.explain);
        let correction = match policy.horizon {
            Horizon::LeadTime => forecasting::correction(seen.accuracy),
            Horizon::Window => 1.0,
        };
        let covered = !matches!(seen.forecast, ForecastInput::Off)
            || !matches!(seen.evaluation, EvaluationInput::Off);
        let evaluation = match seen.evaluation {
            EvaluationInput::Done(e) => Some((e, e.keeps_prediction(was_kept))),
            _ => None,
        };
        // Demoted means a forecast exists and is not trusted; without one there is nothing
        // to demote (and the condition says why there is none).
        let demoted = demotion.is_some() && matches!(seen.forecast, ForecastInput::Ready(_));
        let record =
            covered.then(|| accuracy_record(seen.accuracy, correction, demoted, evaluation));
        let mut outcome = MetricOutcome::default();
        // The reasons are texts only a decision that explains itself keeps (see `Tally`):
        // a replay's decisions, thousands a tuning, skip formatting them.
        let explain = self.explain;
        let tuned_off = seen.tuned_off.map(|p| {
            Idle::NoSaving(if explain {
                format!("the objective's operating point: {}", p.describe())
            } else {
                String::new()
            })
        });
        if let Some(idle) = tuned_off.or_else(|| gate(policy, seen.evaluation, was_kept, explain)) {
            self.record_idle(metric, &idle);
            outcome.idle = Some(idle);
            return (outcome, record);
        }
        let forecast = match (seen.forecast, demotion) {
            (ForecastInput::Off, _) => Err(Idle::NotReady(format!("{id}: no forecast supplied"))),
            (ForecastInput::NotReady(r), _) => Err(Idle::NotReady(r.clone())),
            (ForecastInput::Failed(e), _) => Err(Idle::Failed(format!("history unavailable: {e}"))),
            (ForecastInput::Ready(_), Some(why)) => Err(Idle::Demoted(why)),
            (ForecastInput::Ready(f), None) => {
                let span = Span::of(policy.horizon, reach, correction);
                match seen
                    .margin
                    .filter(|_| policy.forecast_error_budget.is_some())
                {
                    Some(margin) => self
                        .carried_forecast_candidate(
                            metric, f, margin, need, span, scale, ctx, candidates,
                        )
                        .map_err(Idle::NotReady),
                    None => self
                        .forecast_candidate(policy, metric, f, span, reach, scale, ctx, candidates)
                        .map_err(Idle::NotReady),
                }
            }
        };
        // Where the forecast carries the headroom, learned headroom does not add its own.
        let carried =
            forecast.is_ok() && seen.margin.is_some() && policy.forecast_error_budget.is_some();
        match forecast {
            Ok(text) => outcome.proposed(text),
            Err(idle) => {
                if !matches!(seen.forecast, ForecastInput::Off) {
                    self.record_idle(metric, &idle);
                }
                outcome.idle = Some(idle);
            }
        }
        // The shell learns headroom only when the spec asks for it; a stale input for a spec
        // that turned it off proposes nothing.
        if let (Some(need), HeadroomInput::Ready(h), Some(_), false) =
            (need, seen.headroom, policy.headroom_quantile, carried)
        {
            if self.headroom_candidate(metric, h, need, scale, ctx, candidates) {
                let guards = policy.headroom_guards_scale_down;
                outcome.guards_scale_down = guards;
                outcome.proposed(self.text(|| {
                    if guards {
                        format!("{id} (headroom, holding the scale-down in place of its window)")
                    } else {
                        format!("{id} (headroom)")
                    }
                }));
            }
        }
        (outcome, record)
    }

    /// The forecast's proposal; `Ok` describes it for the condition, `Err` says why the
    /// forecast could not be used.
    #[allow(clippy::too_many_arguments)]
    fn forecast_candidate(
        &mut self,
        policy: &PredictionPolicy,
        metric: &Metric,
        f: &Forecast,
        span: Span,
        reach: Reach,
        scale: &Scale,
        ctx: &ReplicaContext<'_>,
        candidates: &mut Vec<Candidate>,
    ) -> Result<String, String> {
        let p = forecast_proposal(metric, f, span, scale.spec_replicas, ctx)?;
        if !self.explain {
            candidates.push(Candidate {
                replicas: p.replicas,
                name: Cow::Borrowed("prediction"),
            });
            return Ok(String::new());
        }
        let period = match f.period_seconds {
            Some(86_400) => ", daily period".to_owned(),
            Some(604_800) => ", weekly period".to_owned(),
            Some(s) => format!(", period {s}s"),
            None => String::new(),
        };
        let reach_text = match policy.horizon {
            Horizon::LeadTime => format!(
                "next {}s (start-up {}s{} + 2 syncs), forecast x{:.2}",
                reach.horizon_seconds,
                reach.startup_seconds,
                if reach.startup_measured {
                    " measured"
                } else {
                    ""
                },
                span.correction
            ),
            Horizon::Window => format!("window {}s", reach.horizon_seconds),
        };
        self.record.proposals.push(ProposalRecord {
            source: "prediction".to_owned(),
            name: metric.friendly_name().to_owned(),
            replicas: Some(p.replicas),
            current: Some(format!("peak {:.3} at {}", p.peak, p.peak_time)),
            target: Some(p.target),
            detail: Some(format!(
                "{}{period}, estimator {}, {reach_text}",
                f.algorithm, f.estimator
            )),
            ..Default::default()
        });
        candidates.push(Candidate {
            replicas: p.replicas,
            name: Cow::Owned(format!("predicted {}", metric.display_name())),
        });
        Ok(format!("{} ({}{period})", metric.identifier(), f.algorithm))
    }

    /// The forecast's proposal where it carries the headroom: the replicas that carry the
    /// load seen now plus the rise the forecast foresees to its peak over the lead stretch
    /// plus the margin its own past errors call for at this hour of the week, at the pods'
    /// full capacity (the margin is the safety; the observed metrics still propose at their
    /// target). `Ok` describes it for the condition.
    #[allow(clippy::too_many_arguments)]
    fn carried_forecast_candidate(
        &mut self,
        metric: &Metric,
        f: &Forecast,
        margin: &crate::prediction::conformal::ForecastMargin,
        need: Option<f64>,
        span: Span,
        scale: &Scale,
        ctx: &ReplicaContext<'_>,
        candidates: &mut Vec<Candidate>,
    ) -> Result<String, String> {
        let need = need.ok_or("the metric could not be read")?;
        let p = forecast_proposal(metric, f, span, scale.spec_replicas, ctx)?;
        let now = self.time.as_second();
        let at_now = f
            .value_at(now.saturating_sub(f.step.max(1)))
            .ok_or("the forecast does not cover now")?
            * span.correction.max(0.0);
        let extra = margin.at(now);
        let rise = ((p.peak - at_now).max(0.0) + extra).max(0.0);
        let carried = match metric.target {
            Target::Utilization(pct) => need * f64::from(pct) / 100.0,
            _ => need,
        };
        let exact =
            carried + forecasting::replicas_at_capacity(metric, rise, scale.spec_replicas, ctx)?;
        if !exact.is_finite() || exact < 0.0 {
            return Err(format!(
                "a rise of {rise} gives no meaningful replica count"
            ));
        }
        let replicas = ceil_i32(exact);
        self.record.proposals.push(ProposalRecord {
            source: "prediction".to_owned(),
            name: metric.friendly_name().to_owned(),
            replicas: Some(replicas),
            current: Some(format!(
                "{carried:.2} pods of load + a rise of {rise:.3} (the forecast's {:.3} to its \
                 peak at {}, {} a margin of {:.3})",
                (p.peak - at_now).max(0.0),
                p.peak_time,
                if extra < 0.0 { "less" } else { "plus" },
                extra.abs()
            )),
            target: Some("the pods' capacity".to_owned()),
            detail: Some(format!(
                "{}, estimator {}, the forecast carrying the headroom: the {:.1}% quantile of \
                 its errors at this hour of the week, from {} samples",
                f.algorithm,
                f.estimator,
                margin.quantile * 100.0,
                margin.samples
            )),
            ..Default::default()
        });
        candidates.push(Candidate {
            replicas,
            name: Cow::Owned(format!("predicted {}", metric.display_name())),
        });
        Ok(format!(
            "{} ({}, carrying the headroom)",
            metric.identifier(),
            f.algorithm
        ))
    }

    /// Learned headroom's proposal: the replicas that carry the observed load plus the rise
    /// this hour has shown, at full capacity (the risk is being short, not being above the
    /// target). It only adds a candidate, so it never lowers what the observed metrics
    /// propose. Returns whether it proposed.
    fn headroom_candidate(
        &mut self,
        metric: &Metric,
        h: &crate::prediction::Headroom,
        need: f64,
        scale: &Scale,
        ctx: &ReplicaContext<'_>,
        candidates: &mut Vec<Candidate>,
    ) -> bool {
        // A Utilization target runs below the pods' requests, which are what they carry.
        let carried = match metric.target {
            Target::Utilization(pct) => need * f64::from(pct) / 100.0,
            _ => need,
        };
        let rise = h.rise_at(self.time.as_second());
        let Ok(extra) = forecasting::replicas_at_capacity(metric, rise, scale.spec_replicas, ctx)
        else {
            return false;
        };
        if !(extra.is_finite() && extra >= 0.0 && carried.is_finite()) {
            return false;
        }
        let replicas = ceil_i32(carried + extra);
        if !self.explain {
            candidates.push(Candidate {
                replicas,
                name: Cow::Borrowed("headroom"),
            });
            return true;
        }
        self.record.proposals.push(ProposalRecord {
            source: "headroom".to_owned(),
            name: metric.friendly_name().to_owned(),
            replicas: Some(replicas),
            current: Some(format!(
                "{carried:.2} pods of load + {extra:.2} for a rise of {rise:.3}"
            )),
            target: Some("the pods' capacity".to_owned()),
            detail: Some(format!(
                "the {:.1}% quantile of this hour's rise {}-{}s ahead, from {} samples",
                h.quantile * 100.0,
                h.lead_from_seconds,
                h.lead_to_seconds,
                h.samples
            )),
            ..Default::default()
        });
        candidates.push(Candidate {
            replicas,
            name: Cow::Owned(format!("headroom {}", metric.display_name())),
        });
        true
    }

    /// Records why the metric's prediction proposed nothing.
    fn record_idle(&mut self, metric: &Metric, idle: &Idle) {
        if !self.explain {
            return;
        }
        let reason = match idle {
            Idle::NotReady(r) | Idle::Failed(r) => r.clone(),
            Idle::Demoted(r) => format!("demoted: {r}"),
            Idle::NoSaving(r) => format!("off: {r}"),
        };
        self.record.proposals.push(ProposalRecord {
            source: "prediction".to_owned(),
            name: metric.friendly_name().to_owned(),
            error: Some(reason),
            ..Default::default()
        });
    }

    /// `PredictionReady`: true when every metric's prediction proposes; otherwise false,
    /// with the reason of what held it back.
    fn set_prediction_condition(&mut self, t: Tally) {
        // Which lists are empty decides the condition; their text is only its message.
        let (status, reason) = prediction_condition(&t);
        let message = match reason {
            _ if !self.explain => String::new(),
            "PredictSucceed" => format!("forecasts in use: {}", t.in_use_texts.join(", ")),
            "PredictPartial" => format!(
                "forecasts in use: {}; observed metrics only for {}",
                t.in_use_texts.join(", "),
                t.missing_texts.join("; ")
            ),
            "NoSavingInReplay" => format!(
                "prediction off where replaying the recent history showed no saving at equal \
                 shortfall, scaling on observed metrics: {}",
                t.no_saving_texts.join("; ")
            ),
            "ForecastInaccurate" => format!(
                "prediction demoted, scaling on observed metrics: {}",
                t.demoted_texts.join("; ")
            ),
            _ => format!(
                "no forecast in use, scaling on observed metrics: {}",
                t.missing_texts.join("; ")
            ),
        };
        self.set(PREDICTION_READY, status, reason, &message);
    }
}

/// The `PredictionReady` condition's status and reason, as [`Decision::set_prediction_condition`]
/// chooses them, without the message.
fn prediction_condition(t: &Tally) -> (bool, &'static str) {
    match (t.in_use == 0, t.missing == 0) {
        (false, true) => (true, "PredictSucceed"),
        (false, false) => (false, "PredictPartial"),
        _ if t.no_saving > 0 => (false, "NoSavingInReplay"),
        _ if t.demoted > 0 => (false, "ForecastInaccurate"),
        _ if t.failed => (false, "PredictFailed"),
        _ => (false, "PredictNotReady"),
    }
}

/// What the last status said of `metric`: its identifier (the previous entry's string when
/// the autoscaler has a `single` metric, so it cannot be another metric's), whether it was
/// demoted, and whether the last self-evaluation kept prediction (until a verdict says
/// otherwise, it does; see `gate`).
fn previous_verdict(
    previous: Option<&mut PredictionStatus>,
    metric: &Metric,
    single: bool,
) -> (String, (bool, bool)) {
    let entry = previous.and_then(|p| {
        p.metrics
            .iter_mut()
            .find(|m| metric.has_identifier(&m.metric))
    });
    let was_demoted = entry.as_ref().is_some_and(|m| m.demoted);
    let was_kept = entry
        .as_ref()
        .and_then(|m| m.evaluation.as_ref())
        .is_none_or(|e| e.kept);
    let id = match entry {
        Some(m) if single => std::mem::take(&mut m.metric),
        _ => metric.identifier(),
    };
    (id, (was_demoted, was_kept))
}

/// Whether self-evaluation lets prediction propose: `None` when it may. Before the first
/// verdict (too little history to replay) it may: the history it records meanwhile is what
/// the first replay judges, and a replay of history recorded while prediction was off sees
/// the spikes prediction would have met only as saturated pods. Between a restart and the
/// next verdict, the previous verdict (in status) holds.
fn gate(
    policy: &PredictionPolicy,
    evaluation: &EvaluationInput,
    was_kept: bool,
    explain: bool,
) -> Option<Idle> {
    if !policy.self_evaluation {
        return None;
    }
    match evaluation {
        EvaluationInput::Off => None,
        // A restarted shell has no verdict yet; the previous one, in status, still holds.
        EvaluationInput::Pending(_) if !was_kept => Some(Idle::NoSaving(
            "the last replay showed no saving; waiting for the next".to_owned(),
        )),
        EvaluationInput::Pending(_) => None,
        EvaluationInput::Done(e) if e.keeps_prediction(was_kept) => None,
        EvaluationInput::Done(e) => Some(Idle::NoSaving(if explain {
            e.describe()
        } else {
            String::new()
        })),
    }
}

/// One metric's accuracy and self-evaluation as status shows them (whole numbers).
fn accuracy_record(
    accuracy: Option<&Accuracy>,
    correction: f64,
    demoted: bool,
    evaluation: Option<(&Evaluation, bool)>,
) -> ForecastAccuracyStatus {
    let pct = |v: f64| round(v).clamp(0.0, 1e9) as i64;
    let whole = |v: f64| round(v).clamp(-1e12, 1e12) as i64;
    ForecastAccuracyStatus {
        // Filled in by the caller, which owns the identifier.
        metric: String::new(),
        samples: accuracy.map_or(0, |a| i64::from(a.samples)),
        error_percent: accuracy.map_or(0, |a| pct(a.error_percent)),
        mape_percent: accuracy.map_or(0, |a| pct(a.mape_percent)),
        under_forecast_percent: accuracy.map_or(0, |a| pct(a.under_forecast_percent)),
        peak_error_percent: accuracy.map_or(0, |a| pct(a.peak_error_percent)),
        correction_percent: round((correction - 1.0) * 100.0) as i64,
        demoted,
        evaluation: evaluation.map(|(e, kept)| EvaluationStatus {
            evaluated_at: jiff::Timestamp::from_second(e.at).unwrap_or_default(),
            replayed_seconds: e.replayed_seconds,
            kept,
            saving_percent: whole(e.saving_percent()),
            predictive_under_seconds: whole(e.predictive_under_seconds),
            predictive_replica_hours: whole(e.predictive_replica_hours),
            reactive_replica_hours: whole(e.equal_shortfall_replica_hours),
        }),
    }
}
