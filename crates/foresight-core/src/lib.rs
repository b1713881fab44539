//! Foresight's decision core: given an autoscaler's spec, what it observes, its recorded
//! history and the current time, decide the replicas and explain why.
//!
//! Everything here is pure and synchronous: no I/O, no clock, no threads. Time is passed in.

// No unsafe code here, ever; unwrap and expect only in tests (a panic in the controller
// is an outage, in the core a wrong answer).
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod cron;
pub mod prediction;
pub mod trace;

pub mod autoscaler;
pub mod behavior;
pub mod conditions;
pub mod decision;
pub mod explain;
pub mod forecasting;
pub mod formula;
pub mod history;
pub mod metrics;
pub mod objective;
pub mod pause;
pub mod pods;
pub mod proposals;
pub mod replicas;
pub mod resources;
pub mod rounding;
pub mod snapshot;
pub mod targets;
pub mod time;
pub mod version;
mod wide;
