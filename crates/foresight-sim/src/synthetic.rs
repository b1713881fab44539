//! A synthetic load trace for when no recorded one is given: a daily rhythm with a morning and
//! an afternoon peak, quieter weekends, slowly wandering noise and occasional spikes. The same
//! seed always gives the same trace.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::load::LoadPoint;

/// Settings of the generator.
#[derive(Clone, Debug, PartialEq)]
pub struct SyntheticConfig {
    /// Unix seconds of the first sample (default Monday 2024-01-01 00:00 UTC).
    pub start: i64,
    /// Length of the trace in days.
    pub days: u32,
    /// Seconds between samples.
    pub step_seconds: i64,
    /// Load at the quietest hour of a weekday, relative to the daily peak (0..1).
    pub trough: f64,
    /// Weekend load relative to weekday load.
    pub weekend_factor: f64,
    /// Standard deviation of the multiplicative noise.
    pub noise: f64,
    /// Expected spikes per day.
    pub spikes_per_day: f64,
    /// Seed of the noise and spikes.
    pub seed: u64,
}

impl Default for SyntheticConfig {
    fn default() -> Self {
        SyntheticConfig {
            start: 1_704_067_200,
            days: 7,
            step_seconds: 60,
            trough: 0.15,
            weekend_factor: 0.6,
            noise: 0.05,
            spikes_per_day: 3.0,
            seed: 1,
        }
    }
}

/// The shape of a weekday, 0..=1 at hour `h` (0..24): a morning ramp to 10:00, a dip at
/// lunch, the day's peak at 15:00, and a decline to the night.
fn daily_shape(h: f64) -> f64 {
    let bump = |centre: f64, width: f64| (-((h - centre) / width).powi(2)).exp();
    (0.75 * bump(10.0, 2.2) + bump(15.0, 2.6) + 0.25 * bump(20.5, 1.8)).min(1.0)
}

/// A spike in progress: extra load relative to the rhythm, fading out linearly.
struct Spike {
    until: i64,
    length: i64,
    height: f64,
}

/// Generates the trace. Values are relative (the weekday peak is about 1.0); scale them to
/// the wanted peak with [`crate::load::LoadTrace::scaled_to_peak`].
pub fn generate(config: &SyntheticConfig) -> Vec<LoadPoint> {
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let step = config.step_seconds.max(1);
    let count = i64::from(config.days) * 86_400 / step;
    let spike_chance = config.spikes_per_day * step as f64 / 86_400.0;
    let mut wander = 0.0_f64;
    let mut spike: Option<Spike> = None;
    let mut points = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
    for i in 0..count {
        let ts = config.start.saturating_add(i * step);
        let seconds_of_week = (ts - config.start).rem_euclid(7 * 86_400);
        let day = seconds_of_week / 86_400;
        let hour = (seconds_of_week % 86_400) as f64 / 3600.0;
        let weekly = if day >= 5 { config.weekend_factor } else { 1.0 };
        let rhythm = (config.trough + (1.0 - config.trough) * daily_shape(hour)) * weekly;
        // AR(1) noise: correlated from minute to minute, as real load is.
        let innovation: f64 = (0..4).map(|_| rng.random::<f64>() - 0.5).sum::<f64>();
        wander = 0.9 * wander + config.noise * innovation * 0.8;
        if spike.as_ref().is_none_or(|s| ts >= s.until) {
            spike = None;
            if rng.random::<f64>() < spike_chance {
                let length = rng.random_range(5..=20) * 60;
                spike = Some(Spike {
                    until: ts + length,
                    length,
                    height: rng.random_range(0.3..0.9),
                });
            }
        }
        let boost = spike.as_ref().map_or(0.0, |s| {
            s.height * ((s.until - ts) as f64 / s.length as f64)
        });
        let value = (rhythm * (1.0 + wander) + boost * rhythm.max(0.3)).max(0.0);
        points.push(LoadPoint { ts, value });
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_trace_and_another_seed_another() {
        let a = generate(&SyntheticConfig::default());
        let b = generate(&SyntheticConfig::default());
        assert_eq!(a, b);
        let c = generate(&SyntheticConfig {
            seed: 2,
            ..Default::default()
        });
        assert_ne!(a, c);
    }

    #[test]
    fn has_a_daily_rhythm_and_quieter_weekends() {
        let points = generate(&SyntheticConfig {
            spikes_per_day: 0.0,
            ..Default::default()
        });
        assert_eq!(points.len(), 7 * 1440);
        let at = |day: usize, hour: usize| points[day * 1440 + hour * 60].value;
        // Monday: afternoon well above night.
        assert!(at(0, 15) > 3.0 * at(0, 3), "{} vs {}", at(0, 15), at(0, 3));
        // Saturday afternoon below Monday afternoon.
        assert!(at(5, 15) < 0.8 * at(0, 15));
        assert!(points.iter().all(|p| p.value >= 0.0 && p.value.is_finite()));
    }
}
