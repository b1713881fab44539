//! Many workloads at once (capacity planning, benchmarks): each workload is one policy over
//! its own load, run in parallel, scores returned in input order.

use foresight_core::autoscaler::Autoscaler;

use crate::config::ModelConfig;
use crate::load::LoadTrace;
use crate::parallel::{parallel_map, threads_for};
use crate::runner::run_policy;
use crate::score::Scores;
use crate::simulation::bucket_seconds;

/// One workload: its name, its autoscaler and its load.
#[derive(Clone, Debug)]
pub struct Workload {
    /// Name.
    pub name: String,
    /// The compiled policy.
    pub autoscaler: Autoscaler,
    /// The load, already scaled.
    pub load: LoadTrace,
}

/// Runs every workload and returns their scores, in input order, whatever the thread count.
pub fn run_fleet(
    workloads: &[Workload],
    model: &ModelConfig,
    threads: Option<usize>,
) -> Vec<Scores> {
    let threads = threads.unwrap_or_else(|| threads_for(workloads.len()));
    parallel_map(workloads, threads, |w| {
        let span = crate::runner::Span::of(&w.load);
        run_policy(
            &w.name,
            &w.autoscaler,
            &w.load,
            model,
            bucket_seconds(span),
            &|_| {},
        )
        .scores
    })
}
