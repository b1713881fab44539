//! The machine-readable summary (`foresight simulate --json`): the scores of every policy and
//! what they were measured on. The same inputs and seed give byte-identical output.

use serde::Serialize;

use crate::config::ModelConfig;
use crate::score::Scores;
use crate::simulation::Simulation;

/// What the load was.
#[derive(Clone, Debug, Serialize)]
pub struct TraceSummary<'a> {
    /// Where it came from (a file name, `synthetic`, or the bundled example).
    pub source: &'a str,
    /// First decision, RFC 3339.
    pub start: String,
    /// End of the trace, RFC 3339.
    pub end: String,
    /// The largest load, load units.
    pub peak_load: f64,
    /// The load one pod carries at the first policy's target.
    pub load_per_pod_at_target: f64,
}

/// The model's settings that shaped the result.
#[derive(Clone, Debug, Serialize)]
pub struct ModelSummary {
    /// Seconds from creation to ready.
    pub startup_delay_seconds: i64,
    /// Extra start-up seconds, drawn per pod.
    pub startup_jitter_seconds: i64,
    /// Seed of the jitter.
    pub seed: u64,
    /// metrics-server scrape interval.
    pub scrape_interval_seconds: i64,
    /// Sample window.
    pub metric_window_seconds: i64,
    /// Extra delay of metrics.
    pub metric_lag_seconds: i64,
    /// CPU request per pod, millicores.
    pub pod_cpu_request_millicores: i64,
    /// Load one ready pod serves.
    pub pod_capacity: f64,
    /// Seconds between predictor refits.
    pub refit_interval_seconds: i64,
}

/// The whole summary.
#[derive(Clone, Debug, Serialize)]
pub struct Summary<'a> {
    /// One entry per policy, in the order given.
    pub policies: Vec<&'a Scores>,
    /// The load.
    pub trace: TraceSummary<'a>,
    /// The model.
    pub model: ModelSummary,
}

/// Builds the summary of `simulation`.
pub fn summary<'a>(
    simulation: &'a Simulation,
    source: &'a str,
    model: &ModelConfig,
) -> Summary<'a> {
    let time = |secs: i64| crate::cluster::timestamp(secs).to_string();
    Summary {
        policies: simulation.policies.iter().map(|p| &p.scores).collect(),
        trace: TraceSummary {
            source,
            start: time(simulation.span.start),
            end: time(simulation.span.end),
            peak_load: (simulation.peak_load * 1000.0).round() / 1000.0,
            load_per_pod_at_target: simulation.load_per_pod,
        },
        model: ModelSummary {
            startup_delay_seconds: model.startup_delay_seconds,
            startup_jitter_seconds: model.startup_jitter_seconds,
            seed: model.seed,
            scrape_interval_seconds: model.scrape_interval_seconds,
            metric_window_seconds: model.metric_window_seconds,
            metric_lag_seconds: model.metric_lag_seconds,
            pod_cpu_request_millicores: model.pod_cpu_request_millicores,
            pod_capacity: model.pod_capacity,
            refit_interval_seconds: model.refit_interval_seconds,
        },
    }
}

/// The summary as pretty-printed JSON, ending with a newline.
pub fn to_json(simulation: &Simulation, source: &str, model: &ModelConfig) -> String {
    let mut text = serde_json::to_string_pretty(&summary(simulation, source, model))
        .unwrap_or_else(|e| format!("{{\"error\": {:?}}}", e.to_string()));
    text.push('\n');
    text
}
