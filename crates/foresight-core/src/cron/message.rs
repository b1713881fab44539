//! The one-line summary of a [`CronState`], used as the `CronActive` condition's message and
//! in the decision's explanation, e.g.
//! `active: morning (80); next change at 2026-03-09T09:00:00Z`.

use std::fmt;

use super::CronState;

impl fmt::Display for CronState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.active.is_empty() {
            f.write_str("no cron active")?;
        } else {
            f.write_str("active: ")?;
            for (i, cron) in self.active.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{} ({})", cron.name, cron.target_replicas)?;
            }
        }
        match self.next_transition {
            Some(at) => write!(f, "; next change at {at}"),
            None => f.write_str("; no change within 400 days"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ActiveCron, CronState};

    fn at(text: &str) -> jiff::Timestamp {
        match text.parse() {
            Ok(t) => t,
            Err(e) => panic!("{text}: {e}"),
        }
    }

    #[test]
    fn names_active_crons_with_targets_and_the_next_change() {
        let state = CronState {
            active: vec![
                ActiveCron {
                    name: "morning".into(),
                    target_replicas: 80,
                },
                ActiveCron {
                    name: "sale".into(),
                    target_replicas: 120,
                },
            ],
            target: Some(120),
            next_transition: Some(at("2026-03-09T09:00:00Z")),
        };
        assert_eq!(
            state.to_string(),
            "active: morning (80), sale (120); next change at 2026-03-09T09:00:00Z"
        );
    }

    #[test]
    fn says_when_nothing_is_active_or_nothing_will_change() {
        let idle = CronState {
            active: vec![],
            target: None,
            next_transition: Some(at("2026-03-09T06:00:00Z")),
        };
        assert_eq!(
            idle.to_string(),
            "no cron active; next change at 2026-03-09T06:00:00Z"
        );
        let stuck = CronState {
            active: vec![ActiveCron {
                name: "always".into(),
                target_replicas: 3,
            }],
            target: Some(3),
            next_transition: None,
        };
        assert_eq!(
            stuck.to_string(),
            "active: always (3); no change within 400 days"
        );
    }
}
