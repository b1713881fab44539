//! `spec.idle`: whether any metric is above its activation value (or a cron window holds
//! more than the idle size), the cooldown measured from `status.lastActiveTime`, and the two
//! moves only inactivity and activity make, bypassing behavior as KEDA does: to the idle size
//! after the cooldown, and from it to the active minimum. Between them the metrics decide,
//! with `minReplicas` at least 1.

use std::borrow::Cow;

use foresight_api::status::ProposalRecord;
use jiff::Timestamp;

use super::{Decision, Event, EventType, Observation};
use crate::autoscaler::{Autoscaler, Idle, MetricSource};
use crate::conditions::{ACTIVE, SCALING_ACTIVE};
use crate::metrics::MetricData;

/// Whether the target has work to do.
enum Activity<'a> {
    /// This metric (or cron) is above its activation value.
    Active(Cow<'a, str>),
    /// Every metric could be read and none is above its activation value; no cron window
    /// holds more than the idle size.
    Inactive,
    /// No metric is above its activation value, but this one could not be read.
    Unknown(Cow<'a, str>),
}

/// The activity `obs` shows for `a`, whose idle size is `idle`.
fn activity<'a>(a: &'a Autoscaler, obs: &'a Observation, idle: i32, d: &Decision) -> Activity<'a> {
    let mut unknown = None;
    for (i, metric) in a.metrics.iter().enumerate() {
        let Some(threshold) = metric.activation else {
            continue;
        };
        let reading = obs.metrics.get(i).map(|m| &m.reading);
        let value = match (&metric.source, reading) {
            // A formula is active when its value is above its activation target (KEDA's
            // `activationTarget`).
            (MetricSource::Formula { formula, .. }, Some(r)) => {
                formula.evaluate(r).ok().map(|s| s.value)
            }
            (_, Some(MetricData::Object(v))) => Some(v.value),
            (_, Some(MetricData::Values(vs))) => {
                Some(vs.iter().fold(0i64, |s, v| s.saturating_add(v.value)))
            }
            _ => None,
        };
        match value {
            Some(v) if v > threshold => {
                return Activity::Active(Cow::Borrowed(metric.friendly_name()))
            }
            Some(_) => {}
            None => unknown = unknown.or(Some(Cow::Borrowed(metric.friendly_name()))),
        }
    }
    if let Some(crons) = &a.crons {
        let state = crons.evaluate(d.time);
        if state.target.is_some_and(|t| t > idle) {
            let names: Vec<&str> = state.active.iter().map(|c| c.name.as_str()).collect();
            return Activity::Active(Cow::Owned(format!("cron {}", names.join(", "))));
        }
    }
    match unknown {
        Some(name) => Activity::Unknown(name),
        None => Activity::Inactive,
    }
}

impl Decision {
    /// With `spec.idle`, the count idleness decides alone: waking an idle target, keeping it
    /// idle, or taking it idle after the cooldown. `None` when the metrics decide.
    pub(super) fn idle(&mut self, a: &Autoscaler, obs: &Observation, current: i32) -> Option<i32> {
        let idle = a.idle?;
        let now = self.time;
        let activity = activity(a, obs, idle.replicas, self);
        let since = match &activity {
            Activity::Active(_) => *self.status.last_active_time.insert(now),
            _ => *self.status.last_active_time.get_or_insert(now),
        };
        if current <= idle.replicas {
            return Some(self.while_idle(a, &idle, &activity, since, current));
        }
        match &activity {
            Activity::Active(name) => {
                let message = format!("{name} is above its activation value");
                self.set(ACTIVE, true, "MetricAboveActivation", &message);
                None
            }
            Activity::Unknown(name) => {
                let message = format!(
                    "{name} could not be read: the target does not go idle while it cannot tell"
                );
                self.set(ACTIVE, true, "ActivityUnknown", &message);
                None
            }
            Activity::Inactive => self.cooling_down(&idle, obs, since, current),
        }
    }

    /// The target is idle (at or below the idle count): it wakes on activity, else stays.
    fn while_idle(
        &mut self,
        a: &Autoscaler,
        idle: &Idle,
        activity: &Activity,
        since: Timestamp,
        current: i32,
    ) -> i32 {
        let (to, reason, message) = match activity {
            Activity::Active(name) => {
                let to = a.active_min_replicas();
                let above = format!("{name} is above its activation value");
                self.set(ACTIVE, true, "MetricAboveActivation", &above);
                let woke = format!("{name} woke the target");
                self.set(SCALING_ACTIVE, true, "Activated", &woke);
                self.events.push(Event {
                    type_: EventType::Normal,
                    reason: "TargetActivated".to_owned(),
                    message: format!("{above}: scaling {current} -> {to}"),
                });
                let message = format!("{name} above its activation value");
                (to, "activated", message)
            }
            Activity::Inactive => {
                let message = format!(
                    "no metric above its activation value since {since}: the target is held at {} replicas",
                    idle.replicas
                );
                self.set(ACTIVE, false, "ScaledToIdle", &message);
                self.set(SCALING_ACTIVE, false, "ScaledToIdle", &message);
                (idle.replicas, "idle", message)
            }
            Activity::Unknown(name) => {
                let message = format!(
                    "{name} could not be read: whether the target has work is unknown, so it stays at {current} replicas"
                );
                self.set(ACTIVE, false, "ActivityUnknown", &message);
                self.set(SCALING_ACTIVE, false, "ScaledToIdle", &message);
                (current, "idle", message)
            }
        };
        self.idle_move(reason, to, current, message);
        to
    }

    /// An active-sized target with no activity: idle once the cooldown has passed (and the
    /// autoscaler is older than its initial cooldown), else cooling down.
    fn cooling_down(
        &mut self,
        idle: &Idle,
        obs: &Observation,
        since: Timestamp,
        current: i32,
    ) -> Option<i32> {
        let now = self.time;
        let quiet = now.duration_since(since).as_secs();
        let young = obs
            .created
            .is_some_and(|c| now.duration_since(c).as_secs() < idle.initial_cooldown_seconds);
        if quiet >= idle.cooldown_seconds && !young {
            let message = format!(
                "no metric above its activation value for {quiet}s (cooldown {}s)",
                idle.cooldown_seconds
            );
            self.set(ACTIVE, false, "CooldownElapsed", &message);
            self.events.push(Event {
                type_: EventType::Normal,
                reason: "TargetIdle".to_owned(),
                message: format!("{message}: scaling {current} -> {}", idle.replicas),
            });
            self.idle_move("idle", idle.replicas, current, message);
            return Some(idle.replicas);
        }
        let message = if young {
            format!(
                "no metric above its activation value since {since}; the autoscaler is younger than its initial cooldown ({}s)",
                idle.initial_cooldown_seconds
            )
        } else {
            format!(
                "no metric above its activation value since {since}; idle after the {}s cooldown",
                idle.cooldown_seconds
            )
        };
        self.set(ACTIVE, false, "CoolingDown", &message);
        None
    }

    /// Records a move (or a hold) that idleness decided.
    fn idle_move(&mut self, name: &str, to: i32, current: i32, message: String) {
        self.record.proposals.push(ProposalRecord {
            source: "idle".to_owned(),
            name: name.to_owned(),
            replicas: Some(to),
            detail: Some(message.clone()),
            ..Default::default()
        });
        if to != current {
            self.rescale_reason = message;
        }
        self.record.recommendation = Some(to);
    }
}
