//! Prediction: forecasts of a metric from its history (DSP and percentile predictors).

mod forecast;

pub use forecast::{Algorithm, Forecast, Prediction};
