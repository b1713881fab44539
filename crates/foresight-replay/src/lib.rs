//! Foresight's replay engine: replays a load trace through a modelled cluster, drives it with
//! the same decision core the controller uses, and scores each policy. The controller runs it
//! for self-evaluation and the objective's tuner, `foresight simulate` and `foresight
//! recommend` for their figures; it draws nothing (the HTML report is `foresight-sim`'s), so
//! the controller links no report code.
//!
//! The model is described in one place, `docs/simulator.md`. The pieces:
//!
//! - [`load`] and [`synthetic`]: the load, from a trace or generated;
//! - [`cluster`]: pods that start up, serve and are deleted;
//! - [`meter`] and [`pipeline`]: what metrics-server would report, with its scrape, window and lag;
//! - [`forecaster`]: the predictor's history and periodic refits; [`track`]: the fits of a
//!   recorded load, shared by the replays of it that predict alike;
//! - [`runner`]: one policy's decide–act–advance loop; [`simulation`]: several side by side;
//!   [`fleet`]: many workloads at once;
//! - [`score`], [`timeline`], [`windows`]: what is measured and kept;
//! - [`verdict`]: each policy against the baseline; [`frontier`]: the reactive policy at a
//!   sweep of targets, and every policy against it at equal shortfall; [`bound`]: the
//!   clairvoyant bound every cost is measured against;
//! - [`objective_frontier`]: a policy with an objective replayed at every swept shortfall;
//! - [`evaluation`] (prediction's self-evaluation) and [`tuner`] (the objective's operating
//!   point), the two replays the controller runs once a day.

// No unsafe code here, ever; unwrap and expect only in tests (a panic in the controller
// is an outage, in the core a wrong answer).
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod bound;
pub mod cluster;
pub mod config;
pub mod error;
pub mod evaluation;
pub mod fleet;
pub mod forecaster;
pub mod frontier;
pub mod load;
pub mod meter;
pub mod objective_frontier;
pub mod parallel;
pub mod pipeline;
pub mod policy;
pub mod runner;
pub mod score;
pub mod simulation;
pub mod synthetic;
pub mod timeline;
pub mod track;
pub mod tuner;
pub mod verdict;
pub mod windows;

#[cfg(test)]
mod test_support;

pub use config::{ModelConfig, Outage, Recording};
pub use error::SimError;
pub use load::{LoadPoint, LoadTrace};
pub use policy::Policy;
pub use simulation::{simulate, LoadScale, Simulation};
