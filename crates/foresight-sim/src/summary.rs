//! The machine-readable summary (`foresight simulate --json`): the scores of every policy and
//! what they were measured on. The same inputs and seed give byte-identical output.

use serde::Serialize;

use crate::bound::ClairvoyantBound;
use crate::config::ModelConfig;
use crate::forecaster::PredictionSummary;
use crate::frontier::Comparison;
use crate::score::Scores;
use crate::simulation::Simulation;
use crate::verdict::{deltas, Delta};

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

/// A policy's scores and its cost against the clairvoyant bound.
#[derive(Clone, Debug, Serialize)]
pub struct PolicyScores<'a> {
    /// The scores.
    #[serde(flatten)]
    pub scores: &'a Scores,
    /// Replica-hours as a multiple of the clairvoyant bound's.
    pub cost_vs_bound: Option<f64>,
}

/// The whole summary.
#[derive(Clone, Debug, Serialize)]
pub struct Summary<'a> {
    /// One entry per policy, in the order given.
    pub policies: Vec<PolicyScores<'a>>,
    /// The least any autoscaler could spend without under-provisioning.
    pub clairvoyant_bound: &'a ClairvoyantBound,
    /// Every policy after the first against the first.
    pub against_first: Vec<Delta>,
    /// The first policy's reactive variant at a sweep of targets, and every policy against it
    /// at equal shortfall (absent with `--no-frontier`).
    pub frontier: Option<&'a Comparison>,
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
    frontier: Option<&'a Comparison>,
) -> Summary<'a> {
    let time = |secs: i64| crate::cluster::timestamp(secs).to_string();
    let scores: Vec<&Scores> = simulation.policies.iter().map(|p| &p.scores).collect();
    Summary {
        against_first: deltas(&scores),
        policies: scores
            .iter()
            .map(|s| PolicyScores {
                scores: s,
                cost_vs_bound: simulation
                    .bound
                    .multiple(s.replica_hours)
                    .map(|m| (m * 1000.0).round() / 1000.0),
            })
            .collect(),
        clairvoyant_bound: &simulation.bound,
        frontier,
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
    frontier: Option<&Comparison>,
) -> String {
    let mut text = serde_json::to_string_pretty(&summary(simulation, source, model, frontier))
        .unwrap_or_else(|e| format!("{{\"error\": {:?}}}", e.to_string()));
    text.push('\n');
    text
}
