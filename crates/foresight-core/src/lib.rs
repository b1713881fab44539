//! Foresight's decision core: given an autoscaler's spec, what it observes, its recorded
//! history and the current time, decide the replicas and explain why.
//!
//! Everything here is pure and synchronous: no I/O, no clock, no threads. Time is passed in.

pub mod cron;
pub mod prediction;
pub mod trace;
