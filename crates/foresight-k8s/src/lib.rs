//! placeholder

pub mod forecasts;
pub mod prometheus;
pub mod promql;
