//! `spec.crons`: time windows that hold a number of replicas.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One cron window: between a `start` firing and the next `end` firing, hold `targetReplicas`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CronSpec {
    /// Unique name within the object.
    #[serde(default)]
    pub name: String,
    /// Free text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// IANA time zone (`Europe/Paris`), `UTC` (the default when empty), or `Local` (the
    /// controller's zone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    /// 5-field crontab at which the window opens, e.g. `0 6 ? * 1-5`.
    #[serde(default)]
    pub start: String,
    /// 5-field crontab at which the window closes.
    #[serde(default)]
    pub end: String,
    /// Replicas to hold while the window is open.
    #[serde(default)]
    pub target_replicas: i32,
}

/// Validates `spec.crons` (at `path`), appending every problem to `errs`.
pub fn validate_crons(
    errs: &mut Vec<crate::validation::FieldError>,
    path: &str,
    crons: &[CronSpec],
) {
    use crate::validation::FieldError;
    let mut seen = std::collections::BTreeSet::new();
    for (i, c) in crons.iter().enumerate() {
        let p = format!("{path}[{i}]");
        if c.name.is_empty() {
            errs.push(FieldError::required(
                format!("{p}.name"),
                "must name the cron",
            ));
        } else if !seen.insert(c.name.as_str()) {
            errs.push(FieldError::duplicate(format!("{p}.name"), &c.name));
        }
        if c.target_replicas < 0 {
            errs.push(FieldError::invalid(
                format!("{p}.targetReplicas"),
                c.target_replicas,
                "must be greater than or equal to 0",
            ));
        }
    }
}
