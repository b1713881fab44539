//! Runs one policy over a load trace: every sync period the core decides from what the
//! modelled cluster shows, the cluster acts on it, and the model advances to the next sync.

use foresight_api::status::{EffectiveHorizontalPodAutoscalerStatus, ScalingHistory};
use foresight_core::autoscaler::{Autoscaler, MetricSource, Target};
use foresight_core::decision::{decide, Observation, ScaleOutcome};
use foresight_core::metrics::MetricData;
use foresight_core::trace::Sample;

use crate::cluster::{timestamp, Cluster, PodTemplate};
use crate::config::{ModelConfig, Recording};
use crate::forecaster::{Forecaster, PredictionSummary};
use crate::load::LoadTrace;
use crate::meter::Meter;
use crate::pipeline::{Feed, Pipeline};
use crate::score::{ScoreKeeper, Scores};
use crate::timeline::{Recorder, Timeline};

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
    let span = Span::of(trace);
    let sync = autoscaler.settings.sync_period_seconds.max(1);
    let mut forecaster = Forecaster::for_autoscaler(autoscaler, model);
    if let Some(f) = forecaster.as_mut() {
        f.seed(prior);
    }
    let grid = grid_seconds(sync, model, forecaster.as_ref());
    let pipeline_feeds = Feed::for_autoscaler(autoscaler);
    let mut pipeline = Pipeline::new(model, pipeline_feeds);

    let first_load = trace.value_at(span.start);
    let replicas = initial_replicas(autoscaler, model, first_load);
    let template = PodTemplate {
        capacity: model.pod_capacity,
        cpu_request_millicores: model.pod_cpu_request_millicores,
        startup_delay: model.startup_delay_seconds,
        startup_jitter: model.startup_jitter_seconds,
        startup_tail: model.startup_tail_seconds,
    };
    let mut cluster = Cluster::new(name, replicas, span.start, template, model.seed);
    let served = first_load.min(cluster.ready_capacity());
    let per_pod = if replicas > 0 {
        served / f64::from(replicas)
    } else {
        0.0
    };
    let mut meter = Meter::new(span.start, grid, pipeline.lookback(), per_pod, served);
    let mut keeper = ScoreKeeper::default();
    let mut recorder = (model.recording == Recording::Full)
        .then(|| Recorder::new(span.start, bucket_seconds, sync));
    let mut cursor = trace.cursor();

    let mut status = EffectiveHorizontalPodAutoscalerStatus {
        current_replicas: Some(replicas),
        desired_replicas: Some(replicas),
        ..Default::default()
    };
    let mut history = ScalingHistory::default();
    let mut unreported = 0u64;
    // Nothing before `score_from` is scored (the warm-up); pods started before it are not
    // counted either.
    let score_from = span.start.saturating_add(model.warm_up_seconds.max(0));
    let mut started_before_scoring = None;
    let outages = model.outage_periods(span.start);
    let mut failing = None;
    let mut t = span.start;
    while t < span.end {
        if t >= score_from && started_before_scoring.is_none() {
            started_before_scoring = Some(cluster.pods_started);
        }
        if let Some(f) = forecaster.as_mut() {
            // Headroom is learned for the start-up the decisions last assumed.
            let startup = status.prediction.as_ref().map_or(
                foresight_core::autoscaler::PredictionPolicy::DEFAULT_STARTUP_SECONDS,
                |p| p.startup_seconds,
            );
            let proposing = prediction_proposing(&status);
            if let Some(peak) = f.refit_if_due(t, cluster.observation_mut(), startup, proposing) {
                if let Some(r) = recorder.as_mut() {
                    r.forecast_peak(peak.0, peak.1);
                }
            }
        }
        pipeline.refresh(t, &mut cluster, &meter);
        let observation = if outages.iter().any(|&(a, b)| a <= t && t < b) {
            &*failing.insert(outage_observation(cluster.observation()))
        } else {
            cluster.observation()
        };
        // The core takes status and history by value and hands them back from `finish`.
        let decision = decide(
            autoscaler,
            observation,
            std::mem::take(&mut status),
            std::mem::take(&mut history),
            timestamp(t),
        );
        let from = cluster.replicas();
        let scale_to = decision.scale_to;
        let outcome = match scale_to {
            Some(n) => {
                cluster.scale_to(n, t, meter.now.per_pod);
                ScaleOutcome::Applied { at: timestamp(t) }
            }
            None => ScaleOutcome::NotAttempted,
        };
        if t >= score_from {
            keeper.decision(from, scale_to);
        }
        let mut reconciled = decision.finish(autoscaler, outcome);
        let record = reconciled.status.last_decision.take();
        if let (Some(r), Some(record)) = (recorder.as_mut(), record) {
            if scale_to.is_some_and(|n| n != from) {
                r.rescale(record);
            }
        }
        if let (Some(f), Some(p)) = (forecaster.as_mut(), reconciled.status.prediction.as_ref()) {
            if f.last_refit() == Some(t) {
                if p.metrics.iter().any(|m| m.demoted) {
                    f.record_demoted();
                }
                if let Some(e) = p.metrics.iter().find_map(|m| m.evaluation.as_ref()) {
                    if e.evaluated_at.as_second() == t {
                        f.record_kept(e.kept);
                    }
                }
                if let Some(r) = recorder.as_mut() {
                    r.prediction(t, p);
                }
            }
        }
        status = reconciled.status;
        history = reconciled.history;

        let next = t.saturating_add(sync).min(span.end);
        // Advance the model to the next decision, stopping wherever something changes.
        let mut a = t;
        while a < next {
            let (load, load_changes) = cursor.at(a);
            let on_grid = (a.div_euclid(grid) + 1) * grid;
            let scoring_starts = if a < score_from { score_from } else { i64::MAX };
            let b = next
                .min(load_changes)
                .min(on_grid)
                .min(scoring_starts)
                .min(cluster.next_ready().max(a + 1));
            let capacity = cluster.ready_capacity();
            let replicas = cluster.replicas();
            meter.add(b - a, cluster.ready_count(), load.min(capacity));
            if a >= score_from {
                keeper.segment(
                    b - a,
                    load,
                    capacity * model.short_from_share,
                    capacity,
                    replicas,
                );
            }
            if let Some(r) = recorder.as_mut() {
                r.segment(
                    a,
                    b,
                    load,
                    capacity,
                    replicas,
                    forecaster.as_ref().and_then(|f| f.forecast()),
                );
            }
            meter.reach(b);
            if let Some(f) = forecaster.as_mut() {
                f.observe(b, &meter);
            }
            if cluster.next_ready() <= b {
                cluster.mark_ready(b, meter.now.per_pod);
            }
            a = b;
        }
        keeper.close_interval();
        if let Some(r) = recorder.as_mut() {
            r.close_tick();
        }
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
    PolicyOutcome {
        scores: keeper.finish(
            name,
            cluster.pods_started - started_before_scoring.unwrap_or(cluster.pods_started),
        ),
        timeline: recorder.map(Recorder::finish),
        prediction: forecaster.map(|f| f.summary().clone()),
    }
}
