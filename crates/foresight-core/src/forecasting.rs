//! The prediction proposal: the replicas a metric's forecast peak needs, against the metric's
//! own target (DESIGN §4, step 3).

use foresight_api::quantity::Quantity;
use jiff::Timestamp;

use crate::autoscaler::{Metric, MetricSource, Target};
use crate::pods::{pod_requests, Pod};
use crate::prediction::Forecast;
use crate::replicas::{ceil_i32, Tolerance};

/// What prediction offers the decision for one metric.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum ForecastInput {
    /// Prediction is off, or does not cover this metric.
    #[default]
    Off,
    /// The predictor has no forecast yet, and says why (`history 1d 4h < 2 periods`).
    NotReady(String),
    /// The history could not be read (e.g. Prometheus is down).
    Failed(String),
    /// A forecast.
    Ready(Forecast),
}

/// A forecast turned into a proposal.
#[derive(Clone, Debug, PartialEq)]
pub struct ForecastProposal {
    /// Proposed replicas.
    pub replicas: i32,
    /// The forecast peak inside the window, in the metric's unit.
    pub peak: f64,
    /// When the peak occurs.
    pub peak_time: Timestamp,
    /// The target, formatted.
    pub target: String,
}

/// The replicas the forecast peak inside `[now, now + window]` needs. `Err` says why the
/// forecast cannot be used (it does not cover the window, or the target cannot be met per pod).
pub fn forecast_proposal(
    metric: &Metric,
    forecast: &Forecast,
    now: Timestamp,
    window_seconds: i64,
    current: i32,
    pods: &[Pod],
    tolerance: Tolerance,
) -> Result<ForecastProposal, String> {
    let from = now.as_second();
    let Some((at, peak)) = forecast.peak_in(from, from.saturating_add(window_seconds)) else {
        return Err(format!(
            "the forecast does not cover the next {window_seconds}s (it is out of date)"
        ));
    };
    let peak_time = Timestamp::from_second(at).unwrap_or(now);
    // Forecasts are in the metric's unit (cores, bytes, requests/s); targets in thousandths.
    let peak_milli = peak * 1000.0;
    let (exact, target) = match (&metric.source, metric.target) {
        (
            MetricSource::Resource {
                resource,
                container,
            },
            Target::Utilization(pct),
        ) => {
            let requests = pod_requests(pods, resource, container.as_deref())?;
            let counted: Vec<i64> = requests.into_iter().filter(|r| *r > 0).collect();
            if counted.is_empty() {
                return Err(format!(
                    "no pod requests {resource}, so a forecast cannot be turned into replicas"
                ));
            }
            let average_request =
                counted.iter().map(|r| *r as f64).sum::<f64>() / counted.len() as f64;
            let per_pod = average_request * f64::from(pct) / 100.0;
            (
                peak_milli / per_pod,
                format!(
                    "{pct}% of {} per pod",
                    Quantity::from_milli(average_request as i64)
                ),
            )
        }
        (_, Target::AverageValue(t)) => (
            peak_milli / t as f64,
            format!("{} per pod", Quantity::from_milli(t)),
        ),
        (_, Target::Value(t)) => {
            // A Value target scales the current count in proportion, as the HPA does.
            (
                peak_milli / t as f64 * f64::from(current.max(1)),
                Quantity::from_milli(t).to_string(),
            )
        }
        _ => return Err("the metric has no target a forecast can be compared with".to_owned()),
    };
    if !exact.is_finite() || exact < 0.0 {
        return Err(format!(
            "the forecast peak {peak} gives no meaningful replica count"
        ));
    }
    let replicas = if current > 0 && tolerance.within(exact / f64::from(current)) {
        current
    } else {
        ceil_i32(exact)
    };
    Ok(ForecastProposal {
        replicas,
        peak,
        peak_time,
        target,
    })
}
