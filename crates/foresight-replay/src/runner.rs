//! Runs one policy over a load trace: every sync period the core decides from what the
//! modelled cluster shows, the cluster acts on it, and the model advances to the next sync.

use std::borrow::Cow;

use foresight_api::status::{EffectiveHorizontalPodAutoscalerStatus, ScalingHistory};
use foresight_core::autoscaler::{Autoscaler, MetricSource, Target};
use foresight_core::decision::{decide, Observation, ScaleOutcome};
use foresight_core::metrics::MetricData;
use foresight_core::trace::Sample;

use crate::cluster::{timestamp, Cluster, PodTemplate};
use crate::config::{ModelConfig, Recording};
use crate::forecaster::{Forecaster, PredictionSummary};
use crate::load::{LoadCursor, LoadTrace};
use crate::meter::Meter;
use crate::pipeline::{Feed, Pipeline};
use crate::score::{ScoreKeeper, Scores};
use crate::timeline::{Recorder, Timeline};
use crate::track::ForecastTrack;

/// Decisions between two progress reports.
pub const PROGRESS_BATCH: u64 = 1024;

/// A policy's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyOutcome {
    /// The scores.
    pub scores: Scores,
    /// What the report draws (with [`Recording::Full`]).
    pub timeline: Option<Timeline>,
    /// How prediction fared; `None` when the policy does not predict.
    pub prediction: Option<PredictionSummary>,
}

/// The instants a run covers: decisions at `start`, `start + sync`, ... before `end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// The first decision (Unix seconds).
    pub start: i64,
    /// The end of the trace (exclusive).
    pub end: i64,
}

impl Span {
    /// The span of `trace`, starting at the first whole minute so that every grid the model
    /// uses (sync, scrape, sample intervals) lines up.
    pub fn of(trace: &LoadTrace) -> Span {
        let start = trace.start();
        Span {
            start: start.div_euclid(60) * 60 + if start.rem_euclid(60) == 0 { 0 } else { 60 },
            end: trace.end(),
        }
    }

    /// The number of decisions a policy syncing every `sync` seconds makes.
    pub fn decisions(&self, sync: i64) -> u64 {
        let sync = sync.max(1);
        let length = (self.end - self.start).max(0);
        u64::try_from((length + sync - 1) / sync).unwrap_or(0)
    }
}

/// The load one pod carries at the policy's target: what `--peak-replicas` scales against.
/// The first CPU utilization or per-pod average-value target decides; without one, a pod's
/// capacity.
pub fn load_per_pod_at_target(autoscaler: &Autoscaler, model: &ModelConfig) -> f64 {
    for metric in &autoscaler.metrics {
        match (&metric.source, metric.target) {
            (MetricSource::Resource { .. }, Target::Utilization(pct)) if pct > 0 => {
                return model.pod_cpu_request() * f64::from(pct) / 100.0;
            }
            (_, Target::AverageValue(milli)) if milli > 0 => return milli as f64 / 1000.0,
            _ => {}
        }
    }
    model.pod_capacity
}

/// The pods a workload starts with: what the policy's target asks for at the first load,
/// within its bounds, so that no policy starts from a transient.
fn initial_replicas(autoscaler: &Autoscaler, model: &ModelConfig, load: f64) -> i32 {
    let per_pod = load_per_pod_at_target(autoscaler, model);
    let wanted = if per_pod > 0.0 {
        (load / per_pod).ceil()
    } else {
        1.0
    };
    let wanted = if wanted.is_finite() {
        wanted.min(f64::from(i32::MAX)) as i32
    } else {
        1
    };
    wanted.clamp(
        autoscaler.min_replicas,
        autoscaler.max_replicas.max(autoscaler.min_replicas),
    )
}

/// Whether the latest self-evaluation verdict in `status` kept prediction (true without one).
pub fn prediction_proposing(status: &EffectiveHorizontalPodAutoscalerStatus) -> bool {
    status
        .prediction
        .iter()
        .flat_map(|p| &p.metrics)
        .filter_map(|m| m.evaluation.as_ref())
        .all(|e| e.kept)
}

/// What the controller sees while the metric APIs are down: every reading failed, as the
/// shells report a failed API call.
fn outage_observation(seen: &Observation) -> Observation {
    const DOWN: &str = "the metrics API is unavailable (simulated outage)";
    let mut failed = seen.clone();
    failed.resource_metrics = Err(DOWN.to_owned());
    for m in &mut failed.metrics {
        m.reading = MetricData::Failed(DOWN.to_owned());
    }
    failed
}

/// Seconds between the instants the model stops at: every sync, scrape, window, predictor
/// sample and refit boundary is a multiple of it.
fn grid_seconds(sync: i64, model: &ModelConfig, forecaster: Option<&Forecaster>) -> i64 {
    let mut g = gcd(sync, model.scrape_interval_seconds);
    g = gcd(g, model.metric_window_seconds);
    if let Some(f) = forecaster {
        g = gcd(g, f.interval_seconds());
    }
    g.max(1)
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}

/// Runs `autoscaler` (named `name`) over `trace` in the model. `progress` is called with the
/// number of decisions made since its last call.
pub fn run_policy(
    name: &str,
    autoscaler: &Autoscaler,
    trace: &LoadTrace,
    model: &ModelConfig,
    bucket_seconds: i64,
    progress: &(dyn Fn(u64) + Sync),
) -> PolicyOutcome {
    run_policy_after(
        name,
        autoscaler,
        trace,
        model,
        bucket_seconds,
        &[],
        progress,
    )
}

/// [`run_policy`] with the predictor's history already holding `prior` (the load before the
/// trace): a replay of recent history whose predictor learned from the history before it.
pub fn run_policy_after(
    name: &str,
    autoscaler: &Autoscaler,
    trace: &LoadTrace,
    model: &ModelConfig,
    bucket_seconds: i64,
    prior: &[Sample],
    progress: &(dyn Fn(u64) + Sync),
) -> PolicyOutcome {
    let autoscaler = quiet_for(autoscaler, model);
    let replay = Replay::new(name, &autoscaler, trace, model, bucket_seconds, prior, None);
    run_to_end(replay, name, progress, &mut |_, _| {})
}

/// [`run_policy`] with the predictor's fits read from `track` (the fits of `trace`'s
/// recorded load) wherever the replay's history is the recorded load's: the same outcome as
/// fitting each itself, for a fraction of the work when several replays share the track.
pub fn run_policy_on_track(
    name: &str,
    autoscaler: &Autoscaler,
    trace: &LoadTrace,
    model: &ModelConfig,
    bucket_seconds: i64,
    track: &mut ForecastTrack,
    progress: &(dyn Fn(u64) + Sync),
) -> PolicyOutcome {
    let autoscaler = quiet_for(autoscaler, model);
    let replay = Replay::new(
        name,
        &autoscaler,
        trace,
        model,
        bucket_seconds,
        &[],
        Some(track),
    );
    run_to_end(replay, name, progress, &mut |_, _| {})
}

/// A replay's figures over one day of it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DayFigures {
    /// Minutes under-provisioned that day.
    pub under_minutes: f64,
    /// Replica-hours that day.
    pub replica_hours: f64,
}

/// [`run_policy_after`], also returning the figures of each whole day from the trace's first
/// whole minute (a last part day counts as one): what a tuner judges a candidate by day by
/// day rather than only by the sum, since one calm day can hide a bad one.
pub fn run_policy_by_day(
    name: &str,
    autoscaler: &Autoscaler,
    trace: &LoadTrace,
    model: &ModelConfig,
    bucket_seconds: i64,
    prior: &[Sample],
) -> (PolicyOutcome, Vec<DayFigures>) {
    let (outcome, days, _) = run_policy_by_day_and_block(
        name,
        autoscaler,
        trace,
        model,
        bucket_seconds,
        prior,
        1,
        None,
    );
    (outcome, days)
}

/// [`run_policy_by_day`], also returning the figures of each of `blocks` equal blocks of
/// hours of the day (UTC, from midnight), summed over the days; with `hold`, the replay runs
/// at that operating point (the autoscaler's objective applies it) without choosing another.
#[allow(clippy::too_many_arguments)]
pub fn run_policy_by_day_and_block(
    name: &str,
    autoscaler: &Autoscaler,
    trace: &LoadTrace,
    model: &ModelConfig,
    bucket_seconds: i64,
    prior: &[Sample],
    blocks: usize,
    hold: Option<foresight_core::objective::OperatingPoint>,
) -> (PolicyOutcome, Vec<DayFigures>, Vec<DayFigures>) {
    let blocks = blocks.clamp(1, 24);
    let block_seconds = DAY_SECONDS / i64::try_from(blocks).unwrap_or(1);
    // The figures so far at each day's end, then at the end.
    let mut marks: Vec<(f64, f64)> = Vec::new();
    let mut by_block = vec![DayFigures::default(); blocks];
    let mut block_from: Option<(i64, (f64, f64))> = None;
    let mut last = (0.0, 0.0);
    let mut day_end = Span::of(trace).start.saturating_add(DAY_SECONDS);
    let autoscaler = quiet_for(autoscaler, model);
    let mut replay = Replay::new(name, &autoscaler, trace, model, bucket_seconds, prior, None);
    if let (Some(point), Some(f)) = (hold, replay.forecaster.as_mut()) {
        f.hold_point(point);
    }
    let mut close_block = |from: Option<(i64, (f64, f64))>, so_far: (f64, f64)| {
        if let Some((start, before)) = from {
            let b = usize::try_from(start.rem_euclid(DAY_SECONDS) / block_seconds).unwrap_or(0);
            if let Some(f) = by_block.get_mut(b) {
                f.under_minutes += so_far.0 - before.0;
                f.replica_hours += so_far.1 - before.1;
            }
        }
    };
    let outcome = run_to_end(replay, name, &|_| {}, &mut |t, so_far| {
        if t >= day_end {
            marks.push(so_far);
            day_end = day_end.saturating_add(DAY_SECONDS);
        }
        let starts_block = t.rem_euclid(block_seconds) == 0;
        if block_from.is_none() || starts_block {
            close_block(block_from, so_far);
            block_from = Some((t, so_far));
        }
        last = so_far;
    });
    close_block(block_from, last);
    if marks.last() != Some(&last) {
        marks.push(last);
    }
    let days = marks
        .iter()
        .scan((0.0, 0.0), |before: &mut (f64, f64), &(under, hours)| {
            let day = DayFigures {
                under_minutes: under - before.0,
                replica_hours: hours - before.1,
            };
            *before = (under, hours);
            Some(day)
        })
        .collect();
    (outcome, days, by_block)
}

const DAY_SECONDS: i64 = 86_400;

/// `autoscaler` as a replay runs it: one that keeps only scores reads no explanation, so
/// its decisions skip building it (the same decisions, without their text).
fn quiet_for<'a>(autoscaler: &'a Autoscaler, model: &ModelConfig) -> Cow<'a, Autoscaler> {
    if model.recording == Recording::ScoresOnly && autoscaler.settings.explain {
        Cow::Owned(Autoscaler {
            settings: foresight_core::autoscaler::PerObjectSettings {
                explain: false,
                ..autoscaler.settings.clone()
            },
            ..autoscaler.clone()
        })
    } else {
        Cow::Borrowed(autoscaler)
    }
}

/// Decides, acts and advances `replay` to the end of its span; `at_step` sees each decision
/// instant, and at last the end, with the minutes short and the replica-hours up to it.
fn run_to_end(
    mut replay: Replay<'_>,
    name: &str,
    progress: &(dyn Fn(u64) + Sync),
    at_step: &mut dyn FnMut(i64, (f64, f64)),
) -> PolicyOutcome {
    let span = replay.span;
    let mut unreported = 0u64;
    let mut t = span.start;
    while t < span.end {
        at_step(t, replay.keeper.so_far());
        replay.decide_at(t);
        let next = t.saturating_add(replay.sync).min(span.end);
        replay.advance(t, next);
        t = next;
        unreported += 1;
        if unreported == PROGRESS_BATCH {
            progress(unreported);
            unreported = 0;
        }
    }
    if unreported > 0 {
        progress(unreported);
    }
    at_step(span.end, replay.keeper.so_far());
    replay.finish(name)
}

/// One policy's replay in progress: the modelled cluster and what watches it.
struct Replay<'a> {
    autoscaler: &'a Autoscaler,
    model: &'a ModelConfig,
    span: Span,
    sync: i64,
    /// The meter's grid (see [`grid_seconds`]).
    grid: i64,
    forecaster: Option<Forecaster>,
    /// The fits of the recorded load, when the replay shares them (see [`crate::track`]).
    track: Option<&'a mut ForecastTrack>,
    trace: &'a LoadTrace,
    pipeline: Pipeline,
    cluster: Cluster,
    meter: Meter,
    keeper: ScoreKeeper,
    recorder: Option<Recorder>,
    cursor: LoadCursor<'a>,
    /// The status and history the core hands back from each decision.
    status: EffectiveHorizontalPodAutoscalerStatus,
    history: ScalingHistory,
    /// Nothing before this is scored (the warm-up); pods started before it are not counted
    /// either.
    score_from: i64,
    started_before_scoring: Option<u64>,
    outages: Vec<(i64, i64)>,
    failing: Option<Observation>,
}

impl<'a> Replay<'a> {
    fn new(
        name: &str,
        autoscaler: &'a Autoscaler,
        trace: &'a LoadTrace,
        model: &'a ModelConfig,
        bucket_seconds: i64,
        prior: &[Sample],
        track: Option<&'a mut ForecastTrack>,
    ) -> Replay<'a> {
        let span = Span::of(trace);
        let sync = autoscaler.settings.sync_period_seconds.max(1);
        let mut forecaster = Forecaster::for_autoscaler(autoscaler, model);
        if let Some(f) = forecaster.as_mut() {
            f.seed(prior);
            f.backfill_errors(model.startup_delay_seconds);
        }
        let grid = grid_seconds(sync, model, forecaster.as_ref());
        let pipeline = Pipeline::new(model, Feed::for_autoscaler(autoscaler));
        let first_load = trace.value_at(span.start);
        let replicas = initial_replicas(autoscaler, model, first_load);
        let template = PodTemplate {
            capacity: model.pod_capacity,
            cpu_request_millicores: model.pod_cpu_request_millicores,
            startup_delay: model.startup_delay_seconds,
            startup_jitter: model.startup_jitter_seconds,
            startup_tail: model.startup_tail_seconds,
        };
        let cluster = Cluster::new(name, replicas, span.start, template, model.seed);
        let served = first_load.min(cluster.ready_capacity());
        let per_pod = if replicas > 0 {
            served / f64::from(replicas)
        } else {
            0.0
        };
        let meter = Meter::new(span.start, grid, pipeline.lookback(), per_pod, served);
        Replay {
            autoscaler,
            model,
            span,
            sync,
            grid,
            forecaster,
            track,
            trace,
            pipeline,
            cluster,
            meter,
            keeper: ScoreKeeper::default(),
            recorder: (model.recording == Recording::Full)
                .then(|| Recorder::new(span.start, bucket_seconds, sync)),
            cursor: trace.cursor(),
            status: EffectiveHorizontalPodAutoscalerStatus {
                current_replicas: Some(replicas),
                desired_replicas: Some(replicas),
                ..Default::default()
            },
            history: ScalingHistory::default(),
            score_from: span.start.saturating_add(model.warm_up_seconds.max(0)),
            started_before_scoring: None,
            outages: model.outage_periods(span.start),
            failing: None,
        }
    }

    /// One decision at `t`, from what the modelled cluster shows, and the cluster acting on
    /// it.
    fn decide_at(&mut self, t: i64) {
        if t >= self.score_from && self.started_before_scoring.is_none() {
            self.started_before_scoring = Some(self.cluster.pods_started);
        }
        self.refit_if_due(t);
        self.pipeline.refresh(t, &mut self.cluster, &self.meter);
        let observation = if self.outages.iter().any(|&(a, b)| a <= t && t < b) {
            &*self
                .failing
                .insert(outage_observation(self.cluster.observation()))
        } else {
            self.cluster.observation()
        };
        // The core takes status and history by value and hands them back from `finish`.
        let decision = decide(
            self.autoscaler,
            observation,
            std::mem::take(&mut self.status),
            std::mem::take(&mut self.history),
            timestamp(t),
        );
        let from = self.cluster.replicas();
        let scale_to = decision.scale_to;
        let outcome = match scale_to {
            Some(n) => {
                self.cluster.scale_to(n, t, self.meter.now.per_pod);
                ScaleOutcome::Applied { at: timestamp(t) }
            }
            None => ScaleOutcome::NotAttempted,
        };
        if t >= self.score_from {
            self.keeper.decision(from, scale_to);
        }
        let mut reconciled = decision.finish(self.autoscaler, outcome);
        let record = reconciled.status.last_decision.take();
        if let (Some(r), Some(record)) = (self.recorder.as_mut(), record) {
            if scale_to.is_some_and(|n| n != from) {
                r.rescale(record);
            }
        }
        self.note_prediction(t, &reconciled.status);
        self.status = reconciled.status;
        self.history = reconciled.history;
    }

    /// Refits the forecaster when a refit is due, learning headroom for the start-up the
    /// decisions last assumed.
    fn refit_if_due(&mut self, t: i64) {
        let Some(f) = self.forecaster.as_mut() else {
            return;
        };
        let startup = self.status.prediction.as_ref().map_or(
            foresight_core::autoscaler::PredictionPolicy::DEFAULT_STARTUP_SECONDS,
            |p| p.startup_seconds,
        );
        let proposing = prediction_proposing(&self.status);
        let observation = self.cluster.observation_mut();
        let track = self.track.as_deref_mut();
        if let Some(peak) = f.refit_if_due(t, observation, startup, proposing, track) {
            if let Some(r) = self.recorder.as_mut() {
                r.forecast_peak(peak.0, peak.1);
            }
        }
    }

    /// What the decision at a refit said of prediction: demotions, self-evaluation's verdict.
    fn note_prediction(&mut self, t: i64, status: &EffectiveHorizontalPodAutoscalerStatus) {
        let (Some(f), Some(p)) = (self.forecaster.as_mut(), status.prediction.as_ref()) else {
            return;
        };
        if f.last_refit() != Some(t) {
            return;
        }
        if p.metrics.iter().any(|m| m.demoted) {
            f.record_demoted();
        }
        if let Some(e) = p.metrics.iter().find_map(|m| m.evaluation.as_ref()) {
            if e.evaluated_at.as_second() == t {
                f.record_kept(e.kept);
            }
        }
        if let Some(r) = self.recorder.as_mut() {
            r.prediction(t, p);
        }
    }

    /// Advances the model from the decision at `t` to the next at `next`, stopping wherever
    /// something changes (the load, the meter's grid, the start of scoring, a pod ready).
    fn advance(&mut self, t: i64, next: i64) {
        let mut a = t;
        while a < next {
            let (load, load_changes) = self.cursor.at(a);
            let on_grid = (a.div_euclid(self.grid) + 1) * self.grid;
            let scoring_starts = if a < self.score_from {
                self.score_from
            } else {
                i64::MAX
            };
            let b = next
                .min(load_changes)
                .min(on_grid)
                .min(scoring_starts)
                .min(self.cluster.next_ready().max(a + 1));
            self.segment(a, b, load);
            self.meter.reach(b);
            if let Some(f) = self.forecaster.as_mut() {
                let recorded = self.track.is_some().then_some(self.trace);
                f.observe(b, &self.meter, recorded);
            }
            if self.cluster.next_ready() <= b {
                self.cluster.mark_ready(b, self.meter.now.per_pod);
            }
            a = b;
        }
        self.keeper.close_interval();
        if let Some(r) = self.recorder.as_mut() {
            r.close_tick();
        }
    }

    /// Meters, scores and records `[a, b)`, over which nothing changes.
    fn segment(&mut self, a: i64, b: i64, load: f64) {
        let capacity = self.cluster.ready_capacity();
        let replicas = self.cluster.replicas();
        self.meter
            .add(b - a, self.cluster.ready_count(), load.min(capacity));
        if a >= self.score_from {
            let short_below = capacity * self.model.short_from_share;
            self.keeper
                .segment(b - a, load, short_below, capacity, replicas);
        }
        if let Some(r) = self.recorder.as_mut() {
            let forecast = self.forecaster.as_ref().and_then(|f| f.forecast());
            r.segment(a, b, load, capacity, replicas, forecast);
        }
    }

    fn finish(self, name: &str) -> PolicyOutcome {
        let started = self.cluster.pods_started;
        PolicyOutcome {
            scores: self.keeper.finish(
                name,
                started - self.started_before_scoring.unwrap_or(started),
            ),
            timeline: self.recorder.map(Recorder::finish),
            prediction: self.forecaster.map(|f| f.summary().clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{synthetic, web};

    /// A replay that keeps only scores decides without building the explanation; it must
    /// decide exactly as one that records everything.
    #[test]
    fn a_scores_only_replay_decides_as_a_full_one() {
        let autoscaler = web("  minReplicas: 2
  maxReplicas: 40
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
  prediction:
    predictionAlgorithm: {algorithmType: dsp, dsp: {sampleInterval: 1m, historyLength: 2d}}
    headroom: {riskBudgetPercent: 5}
");
        assert!(autoscaler.settings.explain);
        let load = synthetic(4, 3);
        let run = |recording| {
            let model = ModelConfig {
                recording,
                refit_interval_seconds: 4 * 3600,
                ..Default::default()
            };
            run_policy("web", &autoscaler, &load, &model, 3600, &|_| {})
        };
        let (full, scores_only) = (run(Recording::Full), run(Recording::ScoresOnly));
        assert!(full.scores.scale_events > 0 && full.scores.replica_hours > 0.0);
        assert_eq!(full.scores, scores_only.scores);
        assert_eq!(full.prediction, scores_only.prediction);
        assert!(full.prediction.is_some_and(|p| p.ready_refits > 0));
    }

    /// A replay day by day decides as the plain one, and its days add up to its scores.
    #[test]
    fn the_days_of_a_replay_add_up_to_its_scores() {
        let autoscaler = web("  minReplicas: 1
  maxReplicas: 40
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 90}}
");
        let load = synthetic(3, 5);
        let model = ModelConfig::default();
        let plain = run_policy("web", &autoscaler, &load, &model, 3600, &|_| {});
        let (by_day, days) = run_policy_by_day("web", &autoscaler, &load, &model, 3600, &[]);
        assert_eq!(plain.scores, by_day.scores);
        assert_eq!(days.len(), 3, "{days:?}");
        assert!(days.iter().all(|d| d.replica_hours > 0.0), "{days:?}");
        let under: f64 = days.iter().map(|d| d.under_minutes).sum();
        let hours: f64 = days.iter().map(|d| d.replica_hours).sum();
        assert!(plain.scores.under_provisioned_minutes > 0.0);
        assert!((under - plain.scores.under_provisioned_minutes).abs() < 0.01);
        assert!((hours - plain.scores.replica_hours).abs() < 0.01);
    }

    /// A replay held at a schedule over the day runs each block at its own knobs: on a flat
    /// load, the blocks at target 90% hold fewer pods than those at 75%, where one point all
    /// day holds the same in every block.
    #[test]
    fn a_replay_held_at_a_schedule_runs_each_block_at_its_knobs() {
        use crate::load::LoadPoint;
        use foresight_core::objective::{Knobs, OperatingPoint};
        let autoscaler = web("  minReplicas: 1
  maxReplicas: 40
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 75}}
  prediction:
    predictionAlgorithm: {algorithmType: dsp, dsp: {sampleInterval: 1m, historyLength: 2d}}
  objective: {shortfall: AsReactive, maxUtilization: 90}
");
        // Three days of a flat 4.4 cores, a minute apart.
        let load = LoadTrace::new(
            (0..3 * 1440)
                .map(|m| LoadPoint {
                    ts: m * 60,
                    value: 4.4,
                })
                .collect(),
        )
        .unwrap();
        let at = |utilization: i32| Knobs {
            forecast_budget_percent: None,
            utilization: Some(utilization),
            risk_budget_percent: None,
            prediction: false,
        };
        let point = OperatingPoint {
            knobs: at(75),
            chosen_at: 0,
            replayed_seconds: 3 * 86_400,
            under_minutes: 0.0,
            replica_hours: 0.0,
            reactive_under_minutes: 0.0,
            reactive_replica_hours: 0.0,
            meets: true,
            written_utilization: Some(75),
            blocks: Vec::new(),
            carried_minutes: 0.0,
        };
        let schedule = OperatingPoint {
            blocks: [90, 90, 75, 75, 75, 90].map(at).to_vec(),
            ..point.clone()
        };
        let model = ModelConfig::default();
        let blocks_at = |p: OperatingPoint| {
            run_policy_by_day_and_block("web", &autoscaler, &load, &model, 3600, &[], 6, Some(p)).2
        };
        let (single, scheduled) = (blocks_at(point), blocks_at(schedule));
        let hours = |b: &[DayFigures]| b.iter().map(|f| f.replica_hours).collect::<Vec<_>>();
        // One point all day: every block alike but the first, which starts from the
        // replay's first pods.
        assert!(
            single[1..]
                .windows(2)
                .all(|w| (w[0].replica_hours - w[1].replica_hours).abs() < 0.5),
            "{:?}",
            hours(&single)
        );
        // The schedule: 04-08 (90%) and 20-24 (90%) cheaper than the blocks at 75%, which
        // cost what the single point's do.
        for night in [1, 5] {
            for day in [2, 3, 4] {
                assert!(
                    scheduled[night].replica_hours < scheduled[day].replica_hours * 0.9,
                    "{:?}",
                    hours(&scheduled)
                );
            }
        }
        for day in [3, 4] {
            assert!(
                (scheduled[day].replica_hours - single[day].replica_hours).abs() < 0.5,
                "{:?} vs {:?}",
                hours(&scheduled),
                hours(&single)
            );
        }
        assert!(scheduled[1..].iter().all(|b| b.under_minutes == 0.0));
    }
}
