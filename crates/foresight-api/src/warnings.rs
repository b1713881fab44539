//! Values Kubernetes accepts that will not work: the API server stores them (so `foresight
//! validate` accepts them too, as `kubectl apply` would), but the autoscaler cannot act on
//! them as written. Each warning names the field, the rule, and what will happen.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::cron::CronSpec;
use crate::hpa::{LabelSelector, MetricSpec, SelectorOperator};
use crate::schedule::Schedule;
use crate::validation::names::{label_value_problems, qualified_name_problems};

/// One accepted value that will not work as written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// The field path, e.g. `spec.crons[0].start`.
    pub field: String,
    /// The value as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The rule it breaks and what will happen.
    pub detail: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.field)?;
        if let Some(v) = &self.value {
            write!(f, "{v:?}: ")?;
        }
        f.write_str(&self.detail)
    }
}

fn warning(field: String, value: impl fmt::Display, detail: impl Into<String>) -> Warning {
    Warning {
        field,
        value: Some(value.to_string()),
        detail: detail.into(),
    }
}

/// What happens to a metric whose selector Kubernetes cannot parse.
const SELECTOR_FAILS: &str = "Kubernetes stores it, but every read of this metric will fail \
     and the autoscaler will not scale on it";

/// The metric selectors in `metrics` (at `path`, e.g. `spec.metrics`) that break Kubernetes'
/// label selector rules (`ValidateLabelSelector`): the HPA API does not check them, so the
/// object is accepted and the metric fails at every read.
pub fn metric_selector_warnings(path: &str, metrics: &[MetricSpec]) -> Vec<Warning> {
    let mut out = Vec::new();
    for (i, m) in metrics.iter().enumerate() {
        let sources = [
            ("object", m.object.as_ref().map(|s| &s.metric)),
            ("pods", m.pods.as_ref().map(|s| &s.metric)),
            ("external", m.external.as_ref().map(|s| &s.metric)),
        ];
        for (source, metric) in sources {
            if let Some(selector) = metric.and_then(|id| id.selector.as_ref()) {
                let at = format!("{path}[{i}].{source}.metric.selector");
                out.extend(label_selector_warnings(&at, selector));
            }
        }
    }
    out
}

/// `selector`'s breaches of Kubernetes' label selector rules, at `path`.
pub fn label_selector_warnings(path: &str, selector: &LabelSelector) -> Vec<Warning> {
    let mut out = Vec::new();
    for (key, value) in selector.match_labels.iter().flatten() {
        let at = format!("{path}.matchLabels");
        // The first problem says it; the rest repeat it as a regular expression.
        for problem in qualified_name_problems(key).into_iter().take(1) {
            out.push(warning(
                at.clone(),
                key,
                format!("not a label key: {problem}; {SELECTOR_FAILS}"),
            ));
        }
        for problem in label_value_problems(value) {
            out.push(warning(
                format!("{at}.{key}"),
                value,
                format!("not a label value: {problem}; {SELECTOR_FAILS}"),
            ));
        }
    }
    for (j, req) in selector.match_expressions.iter().flatten().enumerate() {
        let at = format!("{path}.matchExpressions[{j}]");
        for problem in qualified_name_problems(&req.key).into_iter().take(1) {
            out.push(warning(
                format!("{at}.key"),
                &req.key,
                format!("not a label key: {problem}; {SELECTOR_FAILS}"),
            ));
        }
        let values = req.values.as_deref().unwrap_or_default();
        match SelectorOperator::parse(&req.operator) {
            None => out.push(warning(
                format!("{at}.operator"),
                &req.operator,
                format!(
                    "not a selector operator (use In, NotIn, Exists or DoesNotExist); \
                     {SELECTOR_FAILS}"
                ),
            )),
            Some(SelectorOperator::In | SelectorOperator::NotIn) if values.is_empty() => {
                out.push(Warning {
                    field: format!("{at}.values"),
                    value: None,
                    detail: format!(
                        "must be given when the operator is In or NotIn; {SELECTOR_FAILS}"
                    ),
                })
            }
            Some(SelectorOperator::Exists | SelectorOperator::DoesNotExist)
                if !values.is_empty() =>
            {
                out.push(Warning {
                    field: format!("{at}.values"),
                    value: None,
                    detail: format!(
                        "may not be given when the operator is Exists or DoesNotExist; \
                         {SELECTOR_FAILS}"
                    ),
                })
            }
            Some(_) => {}
        }
    }
    out
}

/// The crons in `crons` (at `path`) whose start or end names a date no calendar has
/// (`0 7 30 2 *`: February 30): a cron schedule of that kind is accepted (a CronJob's is too)
/// and never fires.
pub fn cron_warnings(path: &str, crons: &[CronSpec]) -> Vec<Warning> {
    let mut out = Vec::new();
    for (i, c) in crons.iter().enumerate() {
        for (field, text, consequence) in [
            ("start", &c.start, "the window will never open"),
            (
                "end",
                &c.end,
                "once the window opens it will never close, and holds its replicas for good",
            ),
        ] {
            if Schedule::parse(text).is_ok_and(|s| !s.matches_some_date()) {
                out.push(warning(
                    format!("{path}[{i}].{field}"),
                    text,
                    format!(
                        "never fires: no month has that day (February has at most 29 days; \
                         April, June, September and November 30); {consequence}"
                    ),
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hpa::LabelSelectorRequirement;

    fn requirement(key: &str, operator: &str, values: &[&str]) -> LabelSelectorRequirement {
        LabelSelectorRequirement {
            key: key.to_owned(),
            operator: operator.to_owned(),
            values: (!values.is_empty()).then(|| values.iter().map(|v| (*v).to_owned()).collect()),
        }
    }

    #[test]
    fn a_selector_kubernetes_cannot_parse_is_named_by_field() {
        let selector = LabelSelector {
            match_labels: Some([(String::new(), "a".to_owned())].into()),
            match_expressions: Some(vec![
                requirement("q", "Like", &["a"]),
                requirement("r", "In", &[]),
                requirement("s", "Exists", &["x"]),
                requirement("ok", "NotIn", &["b"]),
            ]),
        };
        let found = label_selector_warnings("sel", &selector);
        let fields: Vec<&str> = found.iter().map(|w| w.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "sel.matchLabels",
                "sel.matchExpressions[0].operator",
                "sel.matchExpressions[1].values",
                "sel.matchExpressions[2].values",
            ],
            "{found:#?}"
        );
        assert!(
            found[0].detail.contains("name part must be non-empty"),
            "{}",
            found[0]
        );
        assert_eq!(
            found[1].to_string(),
            format!(
                "sel.matchExpressions[0].operator: \"Like\": not a selector operator (use In, \
                 NotIn, Exists or DoesNotExist); {SELECTOR_FAILS}"
            )
        );
    }

    #[test]
    fn a_cron_on_a_date_no_calendar_has_never_fires() {
        let crons = [
            CronSpec {
                name: "feb".into(),
                start: "0 7 30 2 *".into(),
                end: "0 9 31 4 *".into(),
                ..CronSpec::default()
            },
            CronSpec {
                name: "leap".into(),
                start: "0 7 29 2 *".into(),
                end: "0 9 * * *".into(),
                ..CronSpec::default()
            },
        ];
        let found = cron_warnings("spec.crons", &crons);
        assert_eq!(found.len(), 2, "{found:#?}");
        assert_eq!(found[0].field, "spec.crons[0].start");
        assert!(found[0].detail.contains("never open"));
        assert_eq!(found[1].field, "spec.crons[0].end");
        assert!(found[1].detail.contains("never close"));
    }
}
