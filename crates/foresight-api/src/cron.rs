//! `spec.crons`: time windows that hold a number of replicas.

use jiff::tz::TimeZone;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::schedule::Schedule;
use crate::validation::FieldError;

/// One cron window: between a `start` firing and the next `end` firing, hold `targetReplicas`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend(
    "required" = ["name", "start", "end", "targetReplicas"],
    "x-kubernetes-validations" = [{
        "rule": "self.start != self.end",
        "message": "start and end must differ: a window that closes as it opens never holds",
    }],
))]
pub struct CronSpec {
    /// Unique name within the object.
    #[serde(default)]
    #[schemars(length(min = 1, max = 63))]
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
    #[schemars(length(min = 1, max = 256))]
    pub start: String,
    /// 5-field crontab at which the window closes.
    #[serde(default)]
    #[schemars(length(min = 1, max = 256))]
    pub end: String,
    /// Replicas to hold while the window is open.
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub target_replicas: i32,
}

/// The `timezone` value that stands for the zone the controller runs in.
pub const LOCAL_TIME_ZONE: &str = "Local";

/// A `timezone` that is neither empty, `UTC`, `Local` nor a zone in the time zone database.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown time zone {name:?}: {reason}")]
pub struct UnknownTimeZone {
    /// The name as written.
    pub name: String,
    /// Why it was not accepted.
    pub reason: String,
}

/// The zone a cron's `timezone` names: UTC when empty or absent, `local` for `Local` (the
/// caller decides what the controller's zone is), otherwise the IANA zone of that name.
///
/// Names must be spelled exactly as in the database: the lookup we use ignores case, but Go
/// and most other tools do not, and a manifest should mean the same everywhere. `localtime`
/// (the host's zone file on many systems) is refused in favour of the explicit `Local`.
pub fn resolve_time_zone(
    name: Option<&str>,
    local: &TimeZone,
) -> Result<TimeZone, UnknownTimeZone> {
    let unknown = |reason: String| UnknownTimeZone {
        name: name.unwrap_or_default().to_owned(),
        reason,
    };
    match name.unwrap_or_default() {
        "" | "UTC" => Ok(TimeZone::UTC),
        LOCAL_TIME_ZONE => Ok(local.clone()),
        "localtime" => Err(unknown(
            "use \"Local\" for the zone the controller runs in".to_owned(),
        )),
        other => {
            let tz = TimeZone::get(other).map_err(|e| {
                unknown(format!(
                    "use an IANA name such as \"Europe/Paris\", \"UTC\" or \"Local\" ({e})"
                ))
            })?;
            match tz.iana_name() {
                Some(canonical) if canonical != other => Err(unknown(format!(
                    "names are case-sensitive; did you mean {canonical:?}?"
                ))),
                _ => Ok(tz),
            }
        }
    }
}

/// A cron entry whose name, zone and schedules passed validation.
#[derive(Clone, Debug)]
pub struct CheckedCron {
    /// The cron's name, unique within the object.
    pub name: String,
    /// The zone its schedules are read in.
    pub time_zone: TimeZone,
    /// When the window opens.
    pub start: Schedule,
    /// When the window closes.
    pub end: Schedule,
    /// Replicas to hold while the window is open.
    pub target_replicas: i32,
}

/// Checks `crons` (found at `path`, e.g. `spec.crons`) and returns them parsed, or every
/// problem with its field path (`{path}[i].name`, `.timezone`, `.start`, `.end`,
/// `.targetReplicas`). `local` is the zone `Local` stands for.
pub fn check_crons(
    path: &str,
    crons: &[CronSpec],
    local: &TimeZone,
) -> Result<Vec<CheckedCron>, Vec<FieldError>> {
    let mut errs = Vec::new();
    let mut checked = Vec::with_capacity(crons.len());
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
        let time_zone = resolve_time_zone(c.timezone.as_deref(), local)
            .map_err(|e| {
                errs.push(FieldError::invalid(
                    format!("{p}.timezone"),
                    &e.name,
                    e.to_string(),
                ))
            })
            .ok();
        let start = Schedule::parse(&c.start)
            .map_err(|e| {
                errs.push(FieldError::invalid(
                    format!("{p}.start"),
                    &c.start,
                    e.problem.to_string(),
                ))
            })
            .ok();
        let end = match Schedule::parse(&c.end) {
            Err(e) => {
                errs.push(FieldError::invalid(
                    format!("{p}.end"),
                    &c.end,
                    e.problem.to_string(),
                ));
                None
            }
            // Identical text is always a mistake: every start would coincide with an end, so the
            // window could never open. (Crane treats it as always open instead.)
            Ok(_) if c.end == c.start => {
                errs.push(FieldError::invalid(
                    format!("{p}.end"),
                    &c.end,
                    "is the same as start; the window would be empty",
                ));
                None
            }
            Ok(end) => Some(end),
        };
        if c.target_replicas < 0 {
            errs.push(FieldError::invalid(
                format!("{p}.targetReplicas"),
                c.target_replicas,
                "must be greater than or equal to 0",
            ));
        }
        if let (Some(time_zone), Some(start), Some(end)) = (time_zone, start, end) {
            checked.push(CheckedCron {
                name: c.name.clone(),
                time_zone,
                start,
                end,
                target_replicas: c.target_replicas,
            });
        }
    }
    if errs.is_empty() {
        Ok(checked)
    } else {
        Err(errs)
    }
}

/// Validates `spec.crons` (at `path`), appending every problem to `errs`. `Local` is always
/// a valid zone, so validation does not need to know which zone it stands for.
pub fn validate_crons(errs: &mut Vec<FieldError>, path: &str, crons: &[CronSpec]) {
    if let Err(found) = check_crons(path, crons, &TimeZone::UTC) {
        errs.extend(found);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cron(name: &str, timezone: Option<&str>, start: &str, end: &str, target: i32) -> CronSpec {
        CronSpec {
            name: name.to_owned(),
            description: None,
            timezone: timezone.map(str::to_owned),
            start: start.to_owned(),
            end: end.to_owned(),
            target_replicas: target,
        }
    }

    fn paths(crons: &[CronSpec]) -> Vec<String> {
        let mut errs = Vec::new();
        validate_crons(&mut errs, "spec.crons", crons);
        errs.into_iter().map(|e| e.field).collect()
    }

    #[test]
    fn accepts_valid_crons_in_every_kind_of_zone() {
        let crons = [
            cron("a", None, "0 9 * * *", "0 17 * * *", 5),
            cron("b", Some(""), "0 6 ? * 1-5", "0 9 ? * 1-5", 80),
            cron("c", Some("UTC"), "0 22 * * *", "0 6 * * *", 0),
            cron("d", Some("Local"), "*/15 * * * *", "5-50/15 * * * *", 1),
            cron("e", Some("Europe/Paris"), "0 0 1 JAN *", "0 0 1 APR *", 3),
        ];
        assert_eq!(paths(&crons), Vec::<String>::new());
    }

    #[test]
    fn reports_each_problem_on_its_field() {
        let crons = [
            cron("", None, "0 9 * * *", "0 17 * * *", 5),
            cron(
                "peak",
                Some("Mars/Olympus_Mons"),
                "0 9 * * *",
                "0 17 * * *",
                5,
            ),
            cron("peak", None, "0 9 * * 8", "0 17 * *", -1),
            cron("same", None, "0 9 * * *", "0 9 * * *", 1),
        ];
        assert_eq!(
            paths(&crons),
            [
                "spec.crons[0].name",
                "spec.crons[1].timezone",
                "spec.crons[2].name",
                "spec.crons[2].start",
                "spec.crons[2].end",
                "spec.crons[2].targetReplicas",
                "spec.crons[3].end",
            ]
        );
    }

    #[test]
    fn messages_say_what_is_wrong() {
        let mut errs = Vec::new();
        validate_crons(
            &mut errs,
            "spec.crons",
            &[
                cron("a", None, "0 6 ? * 8", "0 9 * * *", 1),
                cron("b", None, "0 9 * * *", "0 9 * * *", 1),
                cron("c", Some("Nowhere/City"), "0 9 * * *", "0 10 * * *", 1),
            ],
        );
        let messages: Vec<String> = errs.iter().map(ToString::to_string).collect();
        assert_eq!(
            messages[0],
            r#"spec.crons[0].start: Invalid value: "0 6 ? * 8": day-of-week 8 is out of range 0-7"#
        );
        assert_eq!(
            messages[1],
            r#"spec.crons[1].end: Invalid value: "0 9 * * *": is the same as start; the window would be empty"#
        );
        assert!(messages[2].starts_with(
            r#"spec.crons[2].timezone: Invalid value: "Nowhere/City": unknown time zone"#
        ));
    }

    #[test]
    fn equivalent_but_differently_written_schedules_are_allowed() {
        // Only identical text is rejected; the contract compares strings.
        assert_eq!(
            paths(&[cron("a", None, "0 9 * * *", "0 9 * * 0-7", 1)]),
            Vec::<String>::new()
        );
    }

    #[test]
    fn resolves_utc_local_and_iana_names() {
        let local = TimeZone::get("Asia/Tokyo").expect("tzdb has Asia/Tokyo");
        let utc = jiff::Timestamp::UNIX_EPOCH;
        let offset = |name: Option<&str>| {
            resolve_time_zone(name, &local).map(|tz| tz.to_offset(utc).seconds())
        };
        assert_eq!(offset(None), Ok(0));
        assert_eq!(offset(Some("")), Ok(0));
        assert_eq!(offset(Some("UTC")), Ok(0));
        assert_eq!(offset(Some("Local")), Ok(9 * 3600));
        assert_eq!(offset(Some("Asia/Kolkata")), Ok(5 * 3600 + 1800));
        assert!(resolve_time_zone(Some("Mars/Olympus_Mons"), &local).is_err());
        assert!(resolve_time_zone(Some("localtime"), &local).is_err());
        assert!(resolve_time_zone(Some("local"), &local).is_err());
        assert_eq!(
            resolve_time_zone(Some("europe/paris"), &local)
                .map_err(|e| e.to_string())
                .err()
                .as_deref(),
            Some(
                r#"unknown time zone "europe/paris": names are case-sensitive; did you mean "Europe/Paris"?"#
            )
        );
    }

    #[test]
    fn check_returns_parsed_crons_in_order() {
        let crons = [
            cron("b", Some("Europe/Berlin"), "0 9 * * *", "0 17 * * *", 4),
            cron("a", None, "0 1 * * *", "0 2 * * *", 2),
        ];
        let checked = match check_crons("crons", &crons, &TimeZone::UTC) {
            Ok(c) => c,
            Err(e) => panic!("{e:?}"),
        };
        let names: Vec<&str> = checked.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["b", "a"]);
        assert_eq!(checked[0].start.hour_mask(), 1 << 9);
        assert_eq!(checked[0].time_zone.iana_name(), Some("Europe/Berlin"));
        assert_eq!(checked[1].target_replicas, 2);
    }
}
