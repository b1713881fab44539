//! Cron windows: `spec.crons` as a source of replica proposals.
//!
//! Each cron holds `targetReplicas` from a `start` firing until the next `end` firing, in its
//! own time zone. [`CronSet::compile`] checks and parses the crons once; [`CronSet::evaluate`]
//! then says, for any instant, which crons are active, the largest active target, and when
//! the set of active crons next changes. [`cron_proposal`] turns that into the cron source's
//! proposal. The full rules, including DST, are in `docs/cron.md`; the pieces live in:
//!
//! - `calendar`: finding the wall-clock minutes a schedule matches;
//! - `firing`: when those minutes fire as instants, across DST gaps and repeats;
//! - `window`: whether one cron is active and when that next changes;
//! - `message`: the text for the `CronActive` condition and the explanation.

mod calendar;
mod firing;
mod message;
mod window;

use foresight_api::cron::{check_crons, CronSpec};
use foresight_api::validation::FieldError;
use jiff::tz::TimeZone;
use jiff::Timestamp;

pub use window::TRANSITION_HORIZON;

/// An object's crons, checked and parsed, ready to evaluate at any instant.
#[derive(Clone, Debug)]
pub struct CronSet {
    windows: Vec<window::Window>,
}

/// One active cron.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActiveCron {
    /// The cron's name.
    pub name: String,
    /// The replicas it asks for.
    pub target_replicas: i32,
}

/// What the crons say at one instant.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CronState {
    /// The active crons, sorted by name.
    pub active: Vec<ActiveCron>,
    /// The largest `targetReplicas` among the active crons; `None` when none is active.
    pub target: Option<i32>,
    /// The earliest instant strictly after the evaluated one at which the set of active crons
    /// changes (even if the target stays the same); `None` if there is none within
    /// [`TRANSITION_HORIZON`] (400 days).
    pub next_transition: Option<Timestamp>,
}

impl CronSet {
    /// Checks and parses `crons`. Problems are reported with the paths
    /// `crons[i].name`, `.timezone`, `.start`, `.end` and `.targetReplicas`, exactly as
    /// `foresight_api` validation reports them. `local` is the zone a cron with
    /// `timezone: Local` runs in, i.e. the controller's zone; the caller determines it, since
    /// the core does not read the environment.
    pub fn compile(crons: &[CronSpec], local: &TimeZone) -> Result<CronSet, Vec<FieldError>> {
        let checked = check_crons("crons", crons, local)?;
        Ok(CronSet {
            windows: checked.into_iter().map(window::Window::new).collect(),
        })
    }

    /// The zone each cron runs in, in spec order.
    pub fn time_zones(&self) -> impl Iterator<Item = &TimeZone> {
        self.windows.iter().map(window::Window::time_zone)
    }

    /// Whether there are no crons at all.
    pub fn is_empty(&self) -> bool {
        self.windows.is_empty()
    }

    /// The number of crons.
    pub fn len(&self) -> usize {
        self.windows.len()
    }

    /// Which crons are active at `now`, the largest active target, and when that set next
    /// changes.
    pub fn evaluate(&self, now: Timestamp) -> CronState {
        let mut active = Vec::new();
        let mut next_transition: Option<Timestamp> = None;
        for window in &self.windows {
            let state = window.state_at(now);
            if state.active {
                active.push(ActiveCron {
                    name: window.name.clone(),
                    target_replicas: window.target_replicas,
                });
            }
            next_transition = match (next_transition, state.next_change) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        active.sort_by(|a, b| a.name.cmp(&b.name));
        let target = active.iter().map(|a| a.target_replicas).max();
        CronState {
            active,
            target,
            next_transition,
        }
    }
}

/// The cron source's proposal: the largest active target, exactly; with no cron active, the
/// current replicas when cron is the autoscaler's only source (so the workload keeps its
/// size), otherwise nothing.
pub fn cron_proposal(state: &CronState, current_replicas: i32, cron_only: bool) -> Option<i32> {
    match state.target {
        Some(target) => Some(target),
        None if cron_only => Some(current_replicas),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(active: &[(&str, i32)]) -> CronState {
        let active: Vec<ActiveCron> = active
            .iter()
            .map(|(n, t)| ActiveCron {
                name: (*n).to_owned(),
                target_replicas: *t,
            })
            .collect();
        let target = active.iter().map(|a| a.target_replicas).max();
        CronState {
            active,
            target,
            next_transition: None,
        }
    }

    #[test]
    fn proposal_is_the_largest_active_target_even_below_current() {
        assert_eq!(
            cron_proposal(&state(&[("a", 10), ("b", 25)]), 3, false),
            Some(25)
        );
        assert_eq!(cron_proposal(&state(&[("low", 2)]), 9, true), Some(2));
        assert_eq!(cron_proposal(&state(&[("zero", 0)]), 9, false), Some(0));
    }

    #[test]
    fn inactive_crons_keep_the_current_size_only_when_alone() {
        assert_eq!(cron_proposal(&state(&[]), 7, true), Some(7));
        assert_eq!(cron_proposal(&state(&[]), 7, false), None);
    }
}
