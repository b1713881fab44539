//! The reactive frontier: what safety costs without prediction. The baseline's reactive
//! variant (no prediction, no crons) is replayed at a sweep of targets over the same load and
//! model; each target gives a point (under-provisioned minutes, replica-hours). Any policy is
//! then judged at equal shortfall: how many replica-hours the reactive policy needs to be
//! exactly as safe, read off the frontier between the two targets that bracket it.
//!
//! Comparing policies at the same target is unfair to prediction (it holds capacity earlier,
//! so it costs more and under-provisions less); a reactive policy can buy safety too, by
//! lowering its target. The frontier answers which of the two buys it cheaper, at every
//! level of safety rather than one.

use std::collections::BTreeMap;

use foresight_core::autoscaler::{Autoscaler, Target};
use serde::Serialize;

use crate::config::{ModelConfig, Recording};
use crate::error::SimError;
use crate::load::LoadTrace;
use crate::objective_frontier::{AgainstReactive, TunedFrontier};
use crate::parallel::{parallel_map, threads_for};
use crate::policy::Policy;
use crate::runner::{run_policy, Span};
use crate::score::Scores;
use crate::simulation::bucket_seconds;
use crate::verdict::{first_target, with_targets_scaled};

/// The sweep of utilization targets, percent (what `kubectl autoscale` users pick from).
const UTILIZATION_LEVELS: std::ops::RangeInclusive<u32> = 10..=95;
/// The sweep of other targets, percent of the baseline's own target.
const SHARE_LEVELS: std::ops::RangeInclusive<u32> = 20..=160;
/// The sweep's usual step between utilization levels; other targets step twice as far.
pub const DEFAULT_STEP: u32 = 5;

/// How the sweep's levels read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum LevelKind {
    /// The first metric's `averageUtilization`, percent.
    Utilization,
    /// Percent of the baseline's own targets (every metric scaled alike).
    ShareOfTarget,
}

/// One replay of the reactive policy.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FrontierPoint {
    /// The level (see [`LevelKind`]).
    pub level: u32,
    /// The first target in the manifest's terms (`averageUtilization: 45`).
    pub target: String,
    /// Under-provisioned minutes at this target.
    pub under_provisioned_minutes: f64,
    /// Replica-hours at this target.
    pub replica_hours: f64,
}

/// The reactive policy at every target tried.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Frontier {
    /// The policy swept (the first policy without prediction and crons).
    pub baseline: String,
    /// How the levels read.
    pub level_kind: LevelKind,
    /// The level the baseline itself runs at.
    pub baseline_level: u32,
    /// Every replay, by level.
    pub points: Vec<FrontierPoint>,
}

/// Where a policy's shortfall lies against the frontier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Reach {
    /// Between two replays (or on one): the reactive cost is interpolated between them.
    Within,
    /// Safer than the reactive policy at any target tried: the reactive cost shown is the
    /// safest replay's, which is still less safe, so the saving shown is a lower bound.
    SaferThanAll,
}

/// A policy against the reactive policy that is exactly as safe.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EqualShortfall {
    /// The policy.
    pub policy: String,
    /// Its under-provisioned minutes.
    pub under_minutes: f64,
    /// Its replica-hours.
    pub replica_hours: f64,
    /// The reactive policy's replica-hours at the same under-provisioned minutes.
    pub reactive_replica_hours: f64,
    /// The targets between which the reactive policy is as safe (the same twice when one
    /// replay is exactly as safe).
    pub reactive_targets: (String, String),
    /// Where the shortfall lies.
    pub reach: Reach,
}

impl EqualShortfall {
    /// How much cheaper the policy is than the reactive one at equal shortfall, percent of
    /// the reactive cost (negative: dearer).
    pub fn saving_percent(&self) -> f64 {
        if self.reactive_replica_hours > 0.0 {
            (self.reactive_replica_hours - self.replica_hours) / self.reactive_replica_hours * 100.0
        } else {
            0.0
        }
    }

    /// The outcome in words: `predictive is 5.5% cheaper at equal shortfall`.
    pub fn verdict(&self) -> String {
        let p = self.saving_percent();
        let at_least = if self.reach == Reach::SaferThanAll {
            "at least "
        } else {
            ""
        };
        match p {
            p if p > 0.05 => format!(
                "{} is {at_least}{p:.1}% cheaper at equal shortfall",
                self.policy
            ),
            p if p < -0.05 => format!("{} costs {:.1}% more at equal shortfall", self.policy, -p),
            _ => format!("{} costs the same at equal shortfall", self.policy),
        }
    }

    /// Where the reactive policy is as safe, in words: `averageUtilization: 52` or
    /// `between averageUtilization: 52 and 53`.
    pub fn reactive_text(&self) -> String {
        let (a, b) = &self.reactive_targets;
        match self.reach {
            Reach::SaferThanAll => format!("even at {a} the reactive policy is less safe"),
            Reach::Within if a == b => a.clone(),
            Reach::Within => {
                let tail = b.rsplit(' ').next().unwrap_or(b);
                format!("between {a} and {tail}")
            }
        }
    }
}

/// How `autoscaler`'s levels read, and the level its own targets are at.
pub(crate) fn own_level(autoscaler: &Autoscaler) -> (LevelKind, u32) {
    match autoscaler.metrics.first().map(|m| m.target) {
        Some(Target::Utilization(u)) if u > 0 => (LevelKind::Utilization, u.unsigned_abs()),
        _ => (LevelKind::ShareOfTarget, 100),
    }
}

/// The sweep's level for `policy`'s targets.
fn levels(policy: &Policy) -> Result<(LevelKind, u32), SimError> {
    Ok(own_level(&policy.compile()?))
}

/// The policy at level `level`, given the level its own targets are at.
fn at_level(policy: &Policy, level: u32, own: u32) -> Policy {
    let mut p = with_targets_scaled(policy, f64::from(level) / f64::from(own.max(1)));
    p.name = format!("{} at {}", policy.name, first_target(&p));
    p
}

/// Replays of a reactive policy at levels, memoised; `replay` runs one level.
pub(crate) struct Sweep<R> {
    replay: R,
    own: u32,
    runs: BTreeMap<u32, FrontierPoint>,
}

impl<R> Sweep<R>
where
    R: Fn(u32) -> Result<FrontierPoint, SimError> + Sync,
{
    /// A sweep around the baseline's level `own`.
    pub(crate) fn new(own: u32, replay: R) -> Self {
        Sweep {
            replay,
            own,
            runs: BTreeMap::new(),
        }
    }

    /// Replays every level not replayed yet, in parallel.
    pub(crate) fn run_all(&mut self, levels: &[u32]) -> Result<(), SimError> {
        let todo: Vec<u32> = levels
            .iter()
            .copied()
            .filter(|l| !self.runs.contains_key(l))
            .collect();
        let replay = &self.replay;
        let done = parallel_map(&todo, threads_for(todo.len()), |l| replay(*l));
        for point in done {
            let point = point?;
            self.runs.insert(point.level, point);
        }
        Ok(())
    }

    /// Walks from the baseline's level `step` at a time (no further than `range`) until two
    /// replays bracket `under`, then bisects to adjacent whole levels.
    pub(crate) fn walk(
        &mut self,
        under: f64,
        step: u32,
        range: std::ops::RangeInclusive<u32>,
    ) -> Result<(), SimError> {
        self.run_all(&[self.own])?;
        loop {
            let points: Vec<FrontierPoint> = self.runs.values().cloned().collect();
            if bracket(&points, self.own, under).is_some() {
                break;
            }
            let own_under = self
                .runs
                .get(&self.own)
                .map_or(0.0, |p| p.under_provisioned_minutes);
            let next = if under < own_under {
                let lowest = points.first().map_or(self.own, |p| p.level);
                lowest.checked_sub(step).filter(|l| range.contains(l))
            } else {
                let highest = points.last().map_or(self.own, |p| p.level);
                Some(highest + step).filter(|l| range.contains(l))
            };
            match next {
                Some(level) => self.run_all(&[level])?,
                None => break,
            }
        }
        self.refine(under)
    }

    /// Refines the bracket of `under` (see [`bracket`]) by bisection until its two levels
    /// are adjacent.
    pub(crate) fn refine(&mut self, under: f64) -> Result<(), SimError> {
        loop {
            let points: Vec<FrontierPoint> = self.runs.values().cloned().collect();
            let Some((a, b)) = bracket(&points, self.own, under) else {
                return Ok(());
            };
            let (lo, hi) = (
                points[a].level.min(points[b].level),
                points[a].level.max(points[b].level),
            );
            if hi - lo <= 1 {
                return Ok(());
            }
            self.run_all(&[lo + (hi - lo) / 2])?;
        }
    }

    /// The replays, by level.
    pub(crate) fn into_points(self) -> Vec<FrontierPoint> {
        self.runs.into_values().collect()
    }
}

/// Where `under` lies on the frontier walked from the baseline's level `own`: the indices
/// (into `points`, sorted by level) of two neighbouring replays, the safer first, with `under`
/// between their shortfalls: the nearest such pair to `own` in the direction `under` asks for
/// (safer: lower levels; riskier: higher). `(own, own)` when the baseline is exactly as short;
/// `None` when no replay reaches `under` in that direction.
pub(crate) fn bracket(points: &[FrontierPoint], own: u32, under: f64) -> Option<(usize, usize)> {
    const EPS: f64 = 1e-9;
    let o = points.iter().position(|p| p.level == own)?;
    let at = |i: usize| points[i].under_provisioned_minutes;
    if (at(o) - under).abs() <= EPS {
        return Some((o, o));
    }
    if under < at(o) {
        // Safer: walk down until a replay is at most as short.
        let i = (0..o).rev().find(|&i| at(i) <= under + EPS)?;
        Some((i, i + 1))
    } else {
        // Riskier: walk up until a replay is at least as short.
        let i = (o + 1..points.len()).find(|&i| at(i) >= under - EPS)?;
        Some((i - 1, i))
    }
}

/// The frontier and every policy judged against it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// The reactive policy at every target tried.
    pub frontier: Frontier,
    /// Each policy at equal shortfall, in the order given.
    pub policies: Vec<EqualShortfall>,
    /// Each policy with an objective, replayed at every swept shortfall (see
    /// [`Comparison::with_tuned`]; empty when no policy states one).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tuned: Vec<TunedFrontier>,
    /// Each tuned frontier against the baseline's own replay.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tuned_against_reactive: Vec<AgainstReactive>,
}

impl Comparison {
    /// The comparison with the tuned frontiers beside the reactive one, each judged against
    /// the baseline's own replay (at its target as written).
    pub fn with_tuned(mut self, tuned: Vec<TunedFrontier>) -> Comparison {
        let own = self
            .frontier
            .points
            .iter()
            .find(|p| p.level == self.frontier.baseline_level);
        self.tuned_against_reactive = own.map_or_else(Vec::new, |own| {
            tuned
                .iter()
                .map(|t| t.against(own.under_provisioned_minutes, own.replica_hours))
                .collect()
        });
        self.tuned = tuned;
        self
    }
}

/// The sweep's levels at `step` (utilization points; twice as many percent of a target).
fn sweep_levels(kind: LevelKind, step: u32) -> Vec<u32> {
    let step = step.max(1) as usize;
    match kind {
        LevelKind::Utilization => UTILIZATION_LEVELS.step_by(step).collect(),
        LevelKind::ShareOfTarget => SHARE_LEVELS.step_by(2 * step).collect(),
    }
}

/// Replays needed at most for `policies` policies at `step`: the sweep plus a bisection each
/// (for a progress bar's length).
pub fn most_runs(policies: usize, step: u32) -> u64 {
    let sweep = sweep_levels(LevelKind::Utilization, step)
        .len()
        .max(sweep_levels(LevelKind::ShareOfTarget, step).len())
        + 1;
    let bisection = u64::from(step.max(1).ilog2() + 1);
    sweep as u64 + bisection * policies as u64
}

/// Sweeps `reactive` over its levels `step` apart, refines around each of `policies`'
/// shortfalls to whole levels, and judges each at equal shortfall. `progress` receives
/// decisions made.
pub fn frontier(
    reactive: &Policy,
    policies: &[&Scores],
    load: &LoadTrace,
    model: &ModelConfig,
    step: u32,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Comparison, SimError> {
    let (level_kind, own) = levels(reactive)?;
    let model = ModelConfig {
        recording: Recording::ScoresOnly,
        ..model.clone()
    };
    let bucket = bucket_seconds(Span::of(load));
    let mut sweep = Sweep::new(own, |level| {
        let policy = at_level(reactive, level, own);
        let autoscaler = policy.compile_as(model.kubernetes)?;
        let scores = run_policy(&policy.name, &autoscaler, load, &model, bucket, progress).scores;
        Ok(FrontierPoint {
            level,
            target: first_target(&policy),
            under_provisioned_minutes: scores.under_provisioned_minutes,
            replica_hours: scores.replica_hours,
        })
    });
    let mut coarse = sweep_levels(level_kind, step);
    coarse.push(own);
    sweep.run_all(&coarse)?;
    for p in policies {
        sweep.refine(p.under_provisioned_minutes)?;
    }
    let frontier = Frontier {
        baseline: reactive.name.clone(),
        level_kind,
        baseline_level: own,
        points: sweep.into_points(),
    };
    let judged = policies.iter().map(|p| frontier.judge(p)).collect();
    Ok(Comparison {
        frontier,
        policies: judged,
        tuned: Vec::new(),
        tuned_against_reactive: Vec::new(),
    })
}

/// The replays of `points` no other beats, read as (under-provisioned minutes, replica-hours)
/// by `read`: sorted by shortfall, each cheaper than every safer one.
pub(crate) fn envelope<P>(points: &[P], read: impl Fn(&P) -> (f64, f64)) -> Vec<&P> {
    let mut sorted: Vec<(&P, (f64, f64))> = points.iter().map(|p| (p, read(p))).collect();
    sorted.sort_by(|(_, a), (_, b)| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut kept: Vec<(&P, f64)> = Vec::new();
    for (p, (_, hours)) in sorted {
        if kept.last().is_none_or(|(_, cheapest)| hours < *cheapest) {
            kept.push((p, hours));
        }
    }
    kept.into_iter().map(|(p, _)| p).collect()
}

impl Frontier {
    /// The replays no other replay beats: sorted by shortfall, each cheaper than every safer
    /// one.
    pub fn envelope(&self) -> Vec<&FrontierPoint> {
        envelope(&self.points, |p| {
            (p.under_provisioned_minutes, p.replica_hours)
        })
    }

    /// `scores` against the reactive policy exactly as short: the frontier walked from the
    /// baseline's own target, interpolated between the two neighbouring replays that bracket
    /// the shortfall. Where several targets are equally short (a shortfall no target in a
    /// range can avoid), the one nearest the baseline's own counts: the comparison is about
    /// what prediction changes, not about a target that was never tuned (see
    /// [`Frontier::dominating_own`] for that).
    pub fn judge(&self, scores: &Scores) -> EqualShortfall {
        let under = scores.under_provisioned_minutes;
        let judged = |reactive_replica_hours: f64, a: &FrontierPoint, b: &FrontierPoint, reach| {
            EqualShortfall {
                policy: scores.name.clone(),
                under_minutes: under,
                replica_hours: scores.replica_hours,
                reactive_replica_hours: (reactive_replica_hours * 1000.0).round() / 1000.0,
                reactive_targets: (a.target.clone(), b.target.clone()),
                reach,
            }
        };
        let points = &self.points;
        let Some(own) = points.iter().position(|p| p.level == self.baseline_level) else {
            return EqualShortfall {
                policy: scores.name.clone(),
                under_minutes: under,
                replica_hours: scores.replica_hours,
                reactive_replica_hours: 0.0,
                reactive_targets: (String::new(), String::new()),
                reach: Reach::SaferThanAll,
            };
        };
        let exactly = |i: usize| (points[i].under_provisioned_minutes - under).abs() <= 1e-9;
        match bracket(points, self.baseline_level, under) {
            Some((a, _)) if exactly(a) => judged(
                points[a].replica_hours,
                &points[a],
                &points[a],
                Reach::Within,
            ),
            Some((_, b)) if exactly(b) => judged(
                points[b].replica_hours,
                &points[b],
                &points[b],
                Reach::Within,
            ),
            Some((a, b)) => {
                let (pa, pb) = (&points[a], &points[b]);
                let share = (under - pa.under_provisioned_minutes)
                    / (pb.under_provisioned_minutes - pa.under_provisioned_minutes);
                let cost = pa.replica_hours + share * (pb.replica_hours - pa.replica_hours);
                judged(cost, pa, pb, Reach::Within)
            }
            None if under < points[own].under_provisioned_minutes => {
                // Safer than every replay: the safest one's cost, a lower bound.
                let safest = points
                    .iter()
                    .min_by(|x, y| {
                        x.under_provisioned_minutes
                            .total_cmp(&y.under_provisioned_minutes)
                            .then(x.replica_hours.total_cmp(&y.replica_hours))
                    })
                    .unwrap_or(&points[own]);
                judged(safest.replica_hours, safest, safest, Reach::SaferThanAll)
            }
            None => {
                // Riskier than every replay: the riskiest one is still safer, and its cost
                // is the most a reactive policy as risky would need.
                let last = points.last().unwrap_or(&points[own]);
                judged(last.replica_hours, last, last, Reach::Within)
            }
        }
    }

    /// The cheapest replay at most as short as the baseline's own target, when it is cheaper:
    /// the baseline's target itself could be raised at no cost in shortfall.
    pub fn dominating_own(&self) -> Option<&FrontierPoint> {
        let own = self
            .points
            .iter()
            .find(|p| p.level == self.baseline_level)?;
        self.points
            .iter()
            .filter(|p| p.under_provisioned_minutes <= own.under_provisioned_minutes + 1e-9)
            .min_by(|a, b| a.replica_hours.total_cmp(&b.replica_hours))
            .filter(|p| p.replica_hours < own.replica_hours * 0.99)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(level: u32, under: f64, hours: f64) -> FrontierPoint {
        FrontierPoint {
            level,
            target: format!("averageUtilization: {level}"),
            under_provisioned_minutes: under,
            replica_hours: hours,
        }
    }

    fn scores(under: f64, hours: f64) -> Scores {
        Scores {
            name: "p".to_owned(),
            under_provisioned_minutes: under,
            replica_hours: hours,
            ..crate::score::ScoreKeeper::default().finish("p", 0)
        }
    }

    fn frontier() -> Frontier {
        Frontier {
            baseline: "reactive".to_owned(),
            level_kind: LevelKind::Utilization,
            baseline_level: 60,
            points: vec![
                point(40, 0.0, 300.0),
                point(50, 10.0, 200.0),
                // Riskier and dearer than level 50: not on the envelope.
                point(55, 12.0, 210.0),
                point(60, 30.0, 150.0),
                point(65, 30.0, 140.0),
                point(70, 50.0, 120.0),
            ],
        }
    }

    #[test]
    fn the_envelope_keeps_only_replays_nothing_beats() {
        let levels: Vec<u32> = frontier().envelope().iter().map(|p| p.level).collect();
        assert_eq!(levels, [40, 50, 65, 70]);
    }

    #[test]
    fn cost_at_equal_shortfall_is_interpolated_between_the_bracketing_replays() {
        let j = frontier().judge(&scores(20.0, 160.0));
        assert_eq!(j.reach, Reach::Within);
        // Walking down from 60 (30 min): 55 is 12 min, so between (12, 210) and (30, 150).
        assert!((j.reactive_replica_hours - 183.333).abs() < 1e-3);
        assert_eq!(j.reactive_text(), "between averageUtilization: 55 and 60");
        assert!(j.verdict().contains("cheaper"), "{}", j.verdict());
        // Riskier than the baseline: walking up, between 65 (30 min) and 70 (50 min).
        let r = frontier().judge(&scores(40.0, 125.0));
        assert!((r.reactive_replica_hours - 130.0).abs() < 1e-9);
    }

    #[test]
    fn equally_short_targets_count_the_baselines_own() {
        // 65 is as short as 60 and cheaper, but the comparison is with 60: what prediction
        // changes, not what the target could.
        let f = frontier();
        let on = f.judge(&scores(30.0, 150.0));
        assert_eq!(on.reactive_replica_hours, 150.0);
        assert_eq!(on.verdict(), "p costs the same at equal shortfall");
        assert_eq!(f.dominating_own().map(|p| p.level), Some(65));
    }

    #[test]
    fn beyond_the_ends() {
        let f = frontier();
        let risky = f.judge(&scores(100.0, 160.0));
        assert_eq!(risky.reactive_replica_hours, 120.0);
        assert!(risky.verdict().contains("more"));
        let mut safer = f;
        safer.points[0].under_provisioned_minutes = 1.0;
        let s = safer.judge(&scores(0.0, 250.0));
        assert_eq!(s.reach, Reach::SaferThanAll);
        assert!(s.verdict().contains("at least"), "{}", s.verdict());
    }
}
