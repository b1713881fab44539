//! Foresight's decision core: given an autoscaler's spec, what it observes, its recorded
//! history and the current time, decide the replicas and explain why.
//!
//! Everything here is pure and synchronous: no I/O, no clock, no threads. Time is passed in.

pub mod cron;
pub mod prediction;
pub mod trace;

pub mod autoscaler;
pub mod behavior;
pub mod conditions;
pub mod decision;
pub mod explain;
pub mod forecasting;
pub mod history;
pub mod metrics;
pub mod pause;
pub mod pods;
pub mod proposals;
pub mod replicas;
pub mod resources;
pub mod snapshot;
pub mod targets;
pub mod time;
