//! The machine-readable summary (`foresight simulate --json`): the scores of every policy and
//! what they were measured on. The same inputs and seed give byte-identical output.

use serde::Serialize;

use crate::config::ModelConfig;
use crate::forecaster::PredictionSummary;
use crate::score::Scores;
use crate::simulation::Simulation;
use crate::verdict::{deltas, Delta, EqualRisk};

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

/// How prediction fared for one policy.
#[derive(Clone, Debug, Serialize)]
pub struct PolicyPrediction<'a> {
    /// The policy.
    pub policy: &'a str,
    /// The figures.
    #[serde(flatten)]
    pub summary: &'a PredictionSummary,
    /// The same in words.
    pub text: String,
}

/// The whole summary.
#[derive(Clone, Debug, Serialize)]
pub struct Summary<'a> {
    /// One entry per policy, in the order given.
    pub policies: Vec<&'a Scores>,
    /// Every policy after the first against the first.
    pub against_first: Vec<Delta>,
    /// Each predictive policy against a reactive policy as safe as it.
    pub equal_risk: &'a [EqualRisk],
    /// Each predictive policy's prediction: ready from when, the period, or why not.
    pub prediction: Vec<PolicyPrediction<'a>>,
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
    equal_risk: &'a [EqualRisk],
) -> Summary<'a> {
    let time = |secs: i64| crate::cluster::timestamp(secs).to_string();
    let policies: Vec<&Scores> = simulation.policies.iter().map(|p| &p.scores).collect();
    Summary {
        against_first: deltas(&policies),
        policies,
        equal_risk,
        prediction: simulation
            .policies
            .iter()
            .filter_map(|p| {
                let summary = p.prediction.as_ref()?;
                Some(PolicyPrediction {
                    policy: &p.scores.name,
                    summary,
                    text: summary.describe(simulation.span.start),
                })
            })
            .collect(),
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
pub fn to_json(
    simulation: &Simulation,
    source: &str,
    model: &ModelConfig,
    equal_risk: &[EqualRisk],
) -> String {
    let mut text = serde_json::to_string_pretty(&summary(simulation, source, model, equal_risk))
        .unwrap_or_else(|e| format!("{{\"error\": {:?}}}", e.to_string()));
    text.push('\n');
    text
}
