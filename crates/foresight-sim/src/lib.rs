//! Foresight's simulator: what `foresight simulate` and `foresight recommend` show of a replay.
//! The replay itself (modelled cluster, runner, scores, frontier, bound, self-evaluation,
//! tuner) is the `foresight-replay` crate the controller also runs; this crate adds
//!
//! - [`summary`]: the JSON summary of a simulation;
//! - [`report`]: the HTML report with SVG charts, and the fleet table;
//! - [`recommend`]: one workload's current policy against the recommended one.
//!
//! The engine's modules are re-exported under their own names, so `foresight_sim::runner` is
//! `foresight_replay::runner`.

// No unsafe code here, ever; unwrap and expect only in tests.
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod recommend;
pub mod report;
pub mod summary;

pub use foresight_replay::{
    bound, cluster, config, error, evaluation, fleet, forecaster, frontier, load, meter,
    objective_frontier, parallel, pipeline, policy, runner, score, simulation, synthetic, timeline,
    track, tuner, verdict, windows,
};
pub use foresight_replay::{
    simulate, LoadPoint, LoadScale, LoadTrace, ModelConfig, Outage, Policy, Recording, SimError,
    Simulation,
};
