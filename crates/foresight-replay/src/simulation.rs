//! A whole simulation: several policies over the same load, side by side.

use foresight_core::autoscaler::Autoscaler;
use foresight_core::version::KubernetesVersion;

use crate::bound::{clairvoyant_bound, ClairvoyantBound};
use crate::config::ModelConfig;
use crate::error::SimError;
use crate::load::LoadTrace;
use crate::parallel::{parallel_map, threads_for};
use crate::policy::Policy;
use crate::runner::{load_per_pod_at_target, run_policy, PolicyOutcome, Span};
use crate::windows::{cron_windows, CronWindow};

/// The report's charts have about this many points across.
const CHART_BUCKETS: i64 = 2000;

/// How the trace's values become load.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LoadScale {
    /// The trace's peak becomes what this many pods carry at the first policy's target.
    PeakReplicas(u32),
    /// The values are the load already (load units: cores for CPU metrics).
    AsIs,
}

/// A compiled policy, ready to run.
#[derive(Clone, Debug)]
pub struct CompiledPolicy {
    /// Its name.
    pub name: String,
    /// The compiled spec.
    pub autoscaler: Autoscaler,
}

/// Validates and compiles every policy; the error names the policy and the field.
pub fn compile_policies(policies: &[Policy]) -> Result<Vec<CompiledPolicy>, SimError> {
    compile_policies_as(policies, KubernetesVersion::default())
}

/// As [`compile_policies`], deciding as the HPA of Kubernetes `kubernetes`.
pub fn compile_policies_as(
    policies: &[Policy],
    kubernetes: KubernetesVersion,
) -> Result<Vec<CompiledPolicy>, SimError> {
    policies
        .iter()
        .map(|p| {
            let autoscaler = p.compile_as(kubernetes)?;
            Ok(CompiledPolicy {
                name: p.name.clone(),
                autoscaler,
            })
        })
        .collect()
}

/// The outcome of a simulation.
#[derive(Clone, Debug, PartialEq)]
pub struct Simulation {
    /// The decisions' span.
    pub span: Span,
    /// Seconds per chart bucket.
    pub bucket_seconds: i64,
    /// Mean load per chart bucket (load units).
    pub load: Vec<f64>,
    /// The largest load.
    pub peak_load: f64,
    /// The load one pod carries at the first policy's target.
    pub load_per_pod: f64,
    /// Each policy's outcome, in the order given.
    pub policies: Vec<PolicyOutcome>,
    /// Each policy's cron windows inside the span, in the order given.
    pub cron_windows: Vec<Vec<CronWindow>>,
    /// The least any autoscaler could spend on this load without under-provisioning.
    pub bound: ClairvoyantBound,
    /// The metric outages (`[start, end)`, Unix seconds) inside the span.
    pub outages: Vec<(i64, i64)>,
}

/// The chart bucket for a span: whole minutes, about [`CHART_BUCKETS`] across.
pub fn bucket_seconds(span: Span) -> i64 {
    let length = (span.end - span.start).max(60);
    let minutes = (length / CHART_BUCKETS + 59) / 60;
    minutes.max(1) * 60
}

/// Decisions the whole simulation makes (for a progress bar).
pub fn total_decisions(trace: &LoadTrace, policies: &[CompiledPolicy]) -> u64 {
    let span = Span::of(trace);
    policies
        .iter()
        .map(|p| span.decisions(p.autoscaler.settings.sync_period_seconds))
        .sum()
}

/// The trace turned into load.
pub fn scaled_load(
    trace: &LoadTrace,
    scale: LoadScale,
    policies: &[CompiledPolicy],
    model: &ModelConfig,
) -> LoadTrace {
    match scale {
        LoadScale::AsIs => trace.clone(),
        LoadScale::PeakReplicas(n) => {
            let per_pod = policies.first().map_or(model.pod_capacity, |p| {
                load_per_pod_at_target(&p.autoscaler, model)
            });
            trace.scaled_to_peak(f64::from(n) * per_pod)
        }
    }
}

/// Runs every policy over `load` (already scaled), in parallel, and collects what the report
/// needs. `progress` is called with batches of decisions made.
pub fn simulate(
    load: &LoadTrace,
    policies: &[CompiledPolicy],
    model: &ModelConfig,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Simulation, SimError> {
    model.validate()?;
    let span = Span::of(load);
    if span.end <= span.start {
        return Err(SimError::Trace(
            "the trace is shorter than a minute after its first whole minute".to_owned(),
        ));
    }
    let bucket = bucket_seconds(span);
    let outcomes = parallel_map(policies, threads_for(policies.len()), |p| {
        run_policy(&p.name, &p.autoscaler, load, model, bucket, progress)
    });
    let cron_windows = policies
        .iter()
        .map(|p| cron_windows(&p.autoscaler, span))
        .collect();
    let bounds = policies.first().map_or((0, i32::MAX), |p| {
        (p.autoscaler.min_replicas, p.autoscaler.max_replicas)
    });
    let bound = clairvoyant_bound(
        load,
        span,
        span.start.saturating_add(model.warm_up_seconds),
        model.pod_capacity,
        bounds,
        model.startup_delay_seconds,
    );
    Ok(Simulation {
        span,
        bucket_seconds: bucket,
        load: bucket_means(load, span, bucket),
        peak_load: load.peak(),
        load_per_pod: policies.first().map_or(model.pod_capacity, |p| {
            load_per_pod_at_target(&p.autoscaler, model)
        }),
        policies: outcomes,
        cron_windows,
        bound,
        outages: model
            .outage_periods(span.start)
            .into_iter()
            .filter(|&(a, _)| a < span.end)
            .map(|(a, b)| (a, b.min(span.end)))
            .collect(),
    })
}

/// The load's mean over each bucket of the span.
fn bucket_means(load: &LoadTrace, span: Span, bucket: i64) -> Vec<f64> {
    let mut cursor = load.cursor();
    let mut means = Vec::new();
    let mut start = span.start;
    while start < span.end {
        let end = (start + bucket).min(span.end);
        let mut sum = 0.0;
        let mut a = start;
        while a < end {
            let (value, changes) = cursor.at(a);
            let b = changes.min(end);
            sum += value * (b - a) as f64;
            a = b;
        }
        means.push(sum / (end - start) as f64);
        start = end;
    }
    means
}
