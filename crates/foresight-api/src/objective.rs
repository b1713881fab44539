//! `spec.objective`: the risk the user accepts, instead of the knobs that trade risk for cost.
//! With it, the autoscaler replays its own recent history under a few operating points
//! (headroom risk budget, prediction on or off, the target up to `maxUtilization`) and runs
//! at the cheapest whose replayed shortfall meets the objective (docs/prediction.md).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::hpa::MetricSpec;
use crate::validation::FieldError;

/// The word for "as safe as this spec without prediction, at its own targets".
pub const AS_REACTIVE: &str = "AsReactive";
/// The largest share of time a shortfall objective may name, percent.
pub const MAX_SHORTFALL_PERCENT: f64 = 50.0;
/// The hottest `maxUtilization` accepted, percent of the pods' requests.
pub const MAX_UTILIZATION: i32 = 1000;

/// `spec.objective`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObjectiveSpec {
    /// The risk accepted: `AsReactive` (as often short as this spec without prediction, at
    /// its own targets) or the share of minutes the pods may be short of what the load
    /// needs, such as `"0.5%"` (more than 0, at most 50%).
    #[schemars(regex(pattern = r"^(AsReactive|([0-9]+(\.[0-9]+)?|\.[0-9]+)%)$"))]
    pub shortfall: String,
    /// The hottest a Utilization target may run, percent (default: the target as written, so
    /// only headroom and prediction move). At least every Utilization target, at most 1000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1000))]
    pub max_utilization: Option<i32>,
}

/// What `shortfall` asks for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shortfall {
    /// As safe as the spec without prediction at its own targets.
    AsReactive,
    /// At most this share of the minutes short (a fraction: 0.005 for `"0.5%"`).
    Share(f64),
}

impl Shortfall {
    /// Reads `AsReactive` or a share such as `"0.5%"`; `Err` says what is wrong in the
    /// user's words.
    pub fn parse(text: &str) -> Result<Shortfall, String> {
        if text == AS_REACTIVE {
            return Ok(Shortfall::AsReactive);
        }
        let Some(number) = text.strip_suffix('%') else {
            return Err(format!(
                "must be {AS_REACTIVE} or a share of time in percent, such as \"0.5%\""
            ));
        };
        let valid_digits = !number.is_empty()
            && number.chars().all(|c| c.is_ascii_digit() || c == '.')
            && number.matches('.').count() <= 1
            && number != ".";
        let value: f64 = match number.parse() {
            Ok(v) if valid_digits => v,
            _ => {
                return Err(format!(
                    "must be {AS_REACTIVE} or a share of time in percent, such as \"0.5%\""
                ))
            }
        };
        if !(value > 0.0 && value <= MAX_SHORTFALL_PERCENT) {
            return Err(format!(
                "must be more than 0% and at most {MAX_SHORTFALL_PERCENT}% of the time"
            ));
        }
        Ok(Shortfall::Share(value / 100.0))
    }
}

/// The Utilization targets of `metrics` (Resource and ContainerResource), with their paths.
fn utilization_targets(metrics: &[MetricSpec]) -> Vec<(String, i32)> {
    let mut out = Vec::new();
    for (i, m) in metrics.iter().enumerate() {
        let (kind, target) = match (&m.resource, &m.container_resource) {
            (Some(r), _) => ("resource", &r.target),
            (None, Some(c)) => ("containerResource", &c.target),
            _ => continue,
        };
        if target.type_ == "Utilization" {
            if let Some(u) = target.average_utilization {
                out.push((
                    format!("spec.metrics[{i}].{kind}.target.averageUtilization"),
                    u,
                ));
            }
        }
    }
    out
}

/// Checks `spec.objective` against the rest of the spec.
pub fn validate_objective(
    errs: &mut Vec<FieldError>,
    path: &str,
    objective: &ObjectiveSpec,
    metrics: &[MetricSpec],
    has_prediction: bool,
) {
    if let Err(why) = Shortfall::parse(&objective.shortfall) {
        errs.push(FieldError::invalid(
            format!("{path}.shortfall"),
            &objective.shortfall,
            why,
        ));
    }
    if !has_prediction {
        errs.push(FieldError::required(
            "spec.prediction",
            "an objective is met by replaying the history prediction keeps: set spec.prediction too",
        ));
    }
    if let Some(max) = objective.max_utilization {
        let field = format!("{path}.maxUtilization");
        if !(1..=MAX_UTILIZATION).contains(&max) {
            errs.push(FieldError::invalid(
                &field,
                max,
                format!("must be between 1 and {MAX_UTILIZATION} (percent of the pods' requests)"),
            ));
        } else if let Some((at, target)) = utilization_targets(metrics)
            .into_iter()
            .find(|(_, t)| *t > max)
        {
            errs.push(FieldError::invalid(
                &field,
                max,
                format!("must be at least the target it lets run hotter ({at} is {target})"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortfall_reads_as_reactive_and_shares() {
        assert_eq!(Shortfall::parse("AsReactive"), Ok(Shortfall::AsReactive));
        assert_eq!(Shortfall::parse("1%"), Ok(Shortfall::Share(0.01)));
        assert_eq!(Shortfall::parse("0.5%"), Ok(Shortfall::Share(0.005)));
        assert_eq!(Shortfall::parse(".5%"), Ok(Shortfall::Share(0.005)));
    }

    #[test]
    fn shortfall_rejects_what_is_neither() {
        for bad in [
            "asReactive",
            "1",
            "%",
            "-1%",
            "0%",
            "51%",
            "1e2%",
            "inf%",
            "NaN%",
            "1.2.3%",
        ] {
            assert!(Shortfall::parse(bad).is_err(), "{bad}");
        }
    }
}
