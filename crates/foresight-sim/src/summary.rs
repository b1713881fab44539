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

/// The whole summary.
#[derive(Clone, Debug, Serialize)]
pub struct Summary<'a> {
    /// One entry per policy, in the order given.
    pub policies: Vec<&'a Scores>,
    /// The load.
    pub trace: TraceSummary<'a>,
    /// The model.
    pub model: &'a ModelConfig,
}

/// Builds the summary of `simulation`.
pub fn summary<'a>(
    simulation: &'a Simulation,
    source: &'a str,
    model: &'a ModelConfig,
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
        model,
    }
}

/// The summary as pretty-printed JSON, ending with a newline.
pub fn to_json(simulation: &Simulation, source: &str, model: &ModelConfig) -> String {
    let mut text = serde_json::to_string_pretty(&summary(simulation, source, model))
        .unwrap_or_else(|e| format!("{{\"error\": {:?}}}", e.to_string()));
    text.push('\n');
    text
}
