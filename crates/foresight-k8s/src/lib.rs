//! placeholder

pub mod prometheus;
pub mod promql;
