//! The truth the metrics pipeline samples from: running integrals of the served load, kept
//! at every grid instant for as long as a scrape can look back.
//!
//! Two integrals are enough for every metric the model reports. `per_pod` integrates the load
//! each ready pod serves (all ready pods share the load equally), so a pod's average usage over
//! a window is a difference of two values; `served` integrates the total served load, which
//! feeds total-valued metrics and the predictor's history.

use std::collections::VecDeque;

/// The integrals at one instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Checkpoint {
    /// Unix seconds (a multiple of the grid).
    pub time: i64,
    /// Integral of the load served by one ready pod, load units × seconds.
    pub per_pod: f64,
    /// Integral of the total served load, load units × seconds.
    pub served: f64,
}

/// Running integrals and the recent checkpoints.
#[derive(Clone, Debug)]
pub struct Meter {
    /// The integrals now.
    pub now: Checkpoint,
    grid: i64,
    keep: usize,
    checkpoints: VecDeque<Checkpoint>,
}

impl Meter {
    /// A meter at `start` that keeps `lookback` seconds of checkpoints.
    /// Before `start`, the load is taken to have been steady: each ready pod served
    /// `per_pod_rate` and all of them together `served_rate`, so that the first scrapes look
    /// back on a steady state rather than on nothing.
    pub fn new(start: i64, grid: i64, lookback: i64, per_pod_rate: f64, served_rate: f64) -> Self {
        let grid = grid.max(1);
        let keep = usize::try_from(lookback / grid + 2).unwrap_or(2);
        let mut checkpoints = VecDeque::with_capacity(keep + 1);
        // The grid instants at or before the start.
        let base = start.div_euclid(grid) * grid;
        for k in (0..keep as i64).rev() {
            let time = base - k * grid;
            let back = (start - time) as f64;
            checkpoints.push_back(Checkpoint {
                time,
                per_pod: -back * per_pod_rate,
                served: -back * served_rate,
            });
        }
        let now = Checkpoint {
            time: start,
            per_pod: 0.0,
            served: 0.0,
        };
        Meter {
            now,
            grid,
            keep,
            checkpoints,
        }
    }

    /// Adds `dt` seconds during which each of `ready` pods served an equal share of `served`.
    pub fn add(&mut self, dt: i64, ready: usize, served: f64) {
        let dt = dt as f64;
        if ready > 0 {
            self.now.per_pod += served / ready as f64 * dt;
        }
        self.now.served += served * dt;
    }

    /// Moves the clock to `time`, storing a checkpoint when it is on the grid.
    pub fn reach(&mut self, time: i64) {
        self.now.time = time;
        if time.rem_euclid(self.grid) == 0 {
            if self.checkpoints.back().is_some_and(|c| c.time == time) {
                return;
            }
            if self.checkpoints.len() >= self.keep {
                self.checkpoints.pop_front();
            }
            self.checkpoints.push_back(self.now);
        }
    }

    /// The checkpoint at `time` (a grid instant no later than now). Instants older than the
    /// look-back give the oldest checkpoint kept.
    pub fn at(&self, time: i64) -> Checkpoint {
        let Some(first) = self.checkpoints.front() else {
            return self.now;
        };
        let index = usize::try_from((time - first.time).div_euclid(self.grid)).unwrap_or(0);
        self.checkpoints
            .get(index)
            .or(self.checkpoints.back())
            .copied()
            .unwrap_or(self.now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_of_checkpoints_are_averages() {
        let mut m = Meter::new(0, 15, 60, 2.0, 4.0);
        // Before the start: steady 2.0 per pod.
        let before = m.at(-30);
        assert_eq!(before.time, -30);
        assert_eq!((m.at(0).per_pod - before.per_pod) / 30.0, 2.0);
        for step in 0..4 {
            m.add(15, 2, 6.0);
            m.reach(15 * (step + 1));
        }
        let a = m.at(30);
        let b = m.at(60);
        assert_eq!((b.per_pod - a.per_pod) / 30.0, 3.0);
        assert_eq!((b.served - a.served) / 30.0, 6.0);
        // No ready pod: nothing per pod, nothing served.
        m.add(15, 0, 0.0);
        m.reach(75);
        assert_eq!(m.at(75).per_pod, b.per_pod);
    }
}
