//! The model's settings: how pods start, how the metrics pipeline reports them, and how often
//! the predictor is refitted. `docs/simulator.md` explains each one.

use foresight_core::version::KubernetesVersion;
use serde::Serialize;

use crate::error::SimError;

/// What a run keeps besides the scores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recording {
    /// Chart series, under-provisioned periods, forecast peaks and scale decisions: what the
    /// report draws.
    Full,
    /// Scores only (benchmarks, large fleets).
    ScoresOnly,
}

/// Settings of the modelled cluster and metrics pipeline. Serialized as the `model` part of
/// `foresight simulate --json`: the settings that shaped the result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelConfig {
    /// Seconds from a pod's creation until it is ready and serves load.
    pub startup_delay_seconds: i64,
    /// Up to this many seconds are added to each pod's start-up delay, drawn uniformly from
    /// a generator seeded with `seed`.
    pub startup_jitter_seconds: i64,
    /// Mean of a long tail added to each pod's start-up delay (exponentially distributed,
    /// seeded with `seed`, at most ten times the mean): image pulls, slow nodes, cold caches.
    pub startup_tail_seconds: i64,
    /// Seed of the start-up jitter.
    pub seed: u64,
    /// metrics-server's scrape interval (`--metric-resolution`).
    pub scrape_interval_seconds: i64,
    /// The window each CPU sample is averaged over.
    pub metric_window_seconds: i64,
    /// Extra delay before a scrape is visible to the autoscaler.
    pub metric_lag_seconds: i64,
    /// Each pod's CPU request, in millicores (what utilization is measured against).
    pub pod_cpu_request_millicores: i64,
    /// The load one ready pod can serve, in load units (cores for CPU); more is not served.
    pub pod_capacity: f64,
    /// Seconds of simulated time between two refits of the predictor.
    pub refit_interval_seconds: i64,
    /// Seconds a DSP refit reuses the period found by an earlier one (0: every refit
    /// searches, as the controller's do; see `Workspace::reusing_period`).
    pub period_reuse_seconds: i64,
    /// Seconds after the first decision before anything is scored (`--warm-up`): the first
    /// days, when no predictor can be ready yet, compare nothing but the reactive parts.
    pub warm_up_seconds: i64,
    /// Count the pods as short from this share of their capacity on (1 counts only load above
    /// capacity). A replay of recorded usage needs less than 1: usage cannot show more than
    /// the pods served, so a load held at capacity is the only trace a shortfall left in it.
    pub short_from_share: f64,
    /// Stretches during which every metric source fails (`--outage`): what `spec.fallback`
    /// is for.
    pub outages: Vec<Outage>,
    /// The Kubernetes release whose HPA the autoscalers decide as.
    pub kubernetes: KubernetesVersion,
    /// What to keep besides the scores (it changes no score, so the summary leaves it out).
    #[serde(skip)]
    pub recording: Recording,
}

impl Default for ModelConfig {
    fn default() -> Self {
        ModelConfig {
            startup_delay_seconds: 60,
            startup_jitter_seconds: 0,
            startup_tail_seconds: 0,
            seed: 1,
            scrape_interval_seconds: 15,
            metric_window_seconds: 15,
            metric_lag_seconds: 0,
            pod_cpu_request_millicores: 1000,
            pod_capacity: 1.0,
            refit_interval_seconds: 3600,
            period_reuse_seconds: 0,
            warm_up_seconds: 0,
            short_from_share: 1.0,
            outages: Vec::new(),
            kubernetes: KubernetesVersion::default(),
            recording: Recording::Full,
        }
    }
}

/// A metric outage: from `start_seconds` after the first decision, for `length_seconds`,
/// every metric read fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Outage {
    /// Seconds from the first decision.
    pub start_seconds: i64,
    /// How long it lasts.
    pub length_seconds: i64,
}

impl ModelConfig {
    /// The outages as `[start, end)` Unix seconds for a run whose first decision is at
    /// `start`.
    pub fn outage_periods(&self, start: i64) -> Vec<(i64, i64)> {
        self.outages
            .iter()
            .map(|o| {
                let a = start.saturating_add(o.start_seconds);
                (a, a.saturating_add(o.length_seconds))
            })
            .collect()
    }

    /// Checks every setting; the error names the first one out of range.
    pub fn validate(&self) -> Result<(), SimError> {
        let at_least = |name: &str, value: i64, min: i64| {
            if value < min {
                Err(SimError::Model(format!(
                    "{name} is {value}; it must be at least {min}"
                )))
            } else {
                Ok(())
            }
        };
        // A week is far beyond any real start-up; the bound keeps time arithmetic trivially safe.
        let at_most = |name: &str, value: i64, max: i64| {
            if value > max {
                Err(SimError::Model(format!(
                    "{name} is {value}; it must be at most {max}"
                )))
            } else {
                Ok(())
            }
        };
        const WEEK: i64 = 7 * 86_400;
        at_least("startup delay (seconds)", self.startup_delay_seconds, 0)?;
        at_most("startup delay (seconds)", self.startup_delay_seconds, WEEK)?;
        at_least("startup jitter (seconds)", self.startup_jitter_seconds, 0)?;
        at_most(
            "startup jitter (seconds)",
            self.startup_jitter_seconds,
            WEEK,
        )?;
        at_least("startup tail (seconds)", self.startup_tail_seconds, 0)?;
        at_most(
            "startup tail (seconds)",
            self.startup_tail_seconds,
            WEEK / 10,
        )?;
        at_least("scrape interval (seconds)", self.scrape_interval_seconds, 1)?;
        at_most(
            "scrape interval (seconds)",
            self.scrape_interval_seconds,
            3600,
        )?;
        at_least("metric window (seconds)", self.metric_window_seconds, 1)?;
        at_most("metric window (seconds)", self.metric_window_seconds, 3600)?;
        at_least("metric lag (seconds)", self.metric_lag_seconds, 0)?;
        at_most("metric lag (seconds)", self.metric_lag_seconds, 3600)?;
        at_least(
            "pod CPU request (millicores)",
            self.pod_cpu_request_millicores,
            1,
        )?;
        at_most(
            "pod CPU request (millicores)",
            self.pod_cpu_request_millicores,
            1_000_000_000,
        )?;
        at_least("refit interval (seconds)", self.refit_interval_seconds, 1)?;
        at_least("warm-up (seconds)", self.warm_up_seconds, 0)?;
        if !(self.short_from_share > 0.0 && self.short_from_share <= 1.0) {
            return Err(SimError::Model(format!(
                "short-from share is {}; it must be more than 0 and at most 1",
                self.short_from_share
            )));
        }
        for o in &self.outages {
            at_least("outage start (seconds into the trace)", o.start_seconds, 0)?;
            at_least("outage length (seconds)", o.length_seconds, 1)?;
        }
        if !(self.pod_capacity.is_finite() && self.pod_capacity > 0.0) {
            return Err(SimError::Model(format!(
                "pod capacity is {}; it must be a positive number",
                self.pod_capacity
            )));
        }
        Ok(())
    }

    /// Each pod's CPU request in cores.
    pub fn pod_cpu_request(&self) -> f64 {
        self.pod_cpu_request_millicores as f64 / 1000.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_bad_settings_are_named() {
        assert_eq!(ModelConfig::default().validate(), Ok(()));
        let bad = ModelConfig {
            scrape_interval_seconds: 0,
            ..Default::default()
        };
        let err = bad.validate().unwrap_err().to_string();
        assert!(err.contains("scrape interval"), "{err}");
        let bad = ModelConfig {
            pod_capacity: f64::NAN,
            ..Default::default()
        };
        assert!(bad.validate().unwrap_err().to_string().contains("capacity"));
    }
}
