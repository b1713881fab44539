//! Prediction: forecast a metric from its history, so that the decision can scale for the
//! peak ahead instead of the load now.

pub mod estimator;
pub mod forecast;
pub mod period;
pub mod preprocess;
pub mod spectrum;

pub use forecast::{Algorithm, Forecast, Prediction};
