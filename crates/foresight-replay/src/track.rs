//! One workload's forecast track: the predictor's fits of the recorded load, shared by the
//! replays of that load that predict with the same settings (`foresight recommend` replays
//! each workload at several targets with prediction).
//!
//! A replay's predictor learns from the load its pods served: the recorded load capped at the
//! replayed capacity, measured through the meter's running integrals. Both depend on the
//! replay (a hotter target leaves some load unserved; the integrals round differently as pods
//! become ready at other instants), so no two replays fit the same history, although they
//! differ by a few minutes of a week. A replay on a track learns from the recorded load
//! instead, the trace's mean over each sample interval ([`LoadTrace::mean_over`]), served or
//! not: the same history, bit for bit, in every replay of the trace, fitted once. This is a
//! deliberate approximation of the model, not an equivalent: the predictor sees the demand in
//! the minutes its pods were short (at most what the recorded pods served, for recorded
//! usage). Sharing only the fits of histories that equalled the recorded load was measured
//! first and found useless: on the benchmark fleet every replay with prediction leaves some
//! load unserved within its first hours, and the week of history carries it for a week (7% of
//! the fits shared, 4% less CPU, on its first eight workloads).
//!
//! Each replay still compares its history with the track's, sample for sample, before it
//! reads a fit (a predictor with other settings fits its own). The fits and the headroom
//! learned from the recorded load are shared; the forecast's accuracy stays each replay's own.

use std::collections::BTreeMap;

use foresight_core::autoscaler::Autoscaler;
use foresight_core::prediction::headroom::{self, Headroom};
use foresight_core::prediction::{predict_with, Prediction, PredictorConfig, Workspace};
use foresight_core::trace::Sample;

use crate::load::LoadTrace;
use crate::runner::Span;

/// A refit instant, the lead of the decisions headroom is learned for, and the quantile's bits.
type HeadroomKey = (i64, (i64, i64), u64);

/// The fits of one recorded load, by refit instant.
#[derive(Debug)]
pub struct ForecastTrack {
    config: PredictorConfig,
    /// The recorded load's mean over each predictor interval of the span, as a replay that
    /// served all of it records its history.
    recorded: Vec<Sample>,
    fits: BTreeMap<i64, Prediction>,
    /// Headroom learned from the recorded load, by refit instant, lead and quantile.
    headroom: BTreeMap<HeadroomKey, Result<Headroom, String>>,
    plans: Workspace,
    /// Fits read from the track, and fits a replay had to make itself.
    shared: u64,
    own: u64,
}

impl ForecastTrack {
    /// The track of `trace` for `autoscaler`'s predictor, or `None` when it does not predict.
    pub fn for_autoscaler(autoscaler: &Autoscaler, trace: &LoadTrace) -> Option<ForecastTrack> {
        let config = autoscaler.prediction.as_ref()?.predictor.clone();
        let interval = config.interval_secs().max(1);
        let span = Span::of(trace);
        // The first interval boundary after the first decision: where a replay's history
        // starts (see `Forecaster::observe`).
        let mut from = (span.start.div_euclid(interval) + 1).saturating_mul(interval);
        let mut recorded = Vec::new();
        while from.saturating_add(interval) <= span.end {
            let to = from + interval;
            recorded.push(Sample {
                ts: from,
                value: trace.mean_over(from, to),
            });
            from = to;
        }
        Some(ForecastTrack {
            config,
            recorded,
            fits: BTreeMap::new(),
            headroom: BTreeMap::new(),
            plans: Workspace::default(),
            shared: 0,
            own: 0,
        })
    }

    /// Whether a predictor with `config` can read this track.
    pub fn fits_predictor(&self, config: &PredictorConfig) -> bool {
        self.config == *config
    }

    /// The fit at `now` of `history`, from the track when `history` is the recorded load's
    /// (fitted once, the first time it is asked for); `None` when it is not, and the caller
    /// fits its own.
    pub fn prediction(&mut self, history: &[Sample], now: i64) -> Option<Prediction> {
        if !self.is_recorded(history) {
            self.own += 1;
            return None;
        }
        self.shared += 1;
        let (config, plans) = (&self.config, &mut self.plans);
        let fit = self
            .fits
            .entry(now)
            .or_insert_with(|| predict_with(plans, config, history, now));
        Some(fit.clone())
    }

    /// The headroom learned at `now` from `history` (samples `interval` seconds apart) for
    /// decisions `lead` seconds ahead at `quantile`, from the track when `history` is the
    /// recorded load's (learned once per lead and quantile); `None` when it is not.
    pub fn headroom(
        &mut self,
        history: &[Sample],
        now: i64,
        interval: i64,
        lead: (i64, i64),
        quantile: f64,
    ) -> Option<Result<Headroom, String>> {
        if !self.is_recorded(history) {
            return None;
        }
        let learned = self
            .headroom
            .entry((now, lead, quantile.to_bits()))
            .or_insert_with(|| headroom::learn(history, interval, lead, quantile));
        Some(learned.clone())
    }

    /// Whether `history` is, sample for sample and bit for bit, a stretch of the recorded
    /// load's.
    fn is_recorded(&self, history: &[Sample]) -> bool {
        let Some(first) = history.first() else {
            return false;
        };
        let at = self.recorded.partition_point(|s| s.ts < first.ts);
        let Some(stretch) = self.recorded.get(at..at.saturating_add(history.len())) else {
            return false;
        };
        stretch
            .iter()
            .zip(history)
            .all(|(a, b)| a.ts == b.ts && a.value.to_bits() == b.value.to_bits())
    }

    /// How many fits replays read from the track, and how many they made themselves.
    pub fn reads(&self) -> (u64, u64) {
        (self.shared, self.own)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ModelConfig, Recording};
    use crate::runner::{run_policy_on_track, PolicyOutcome};
    use crate::test_support::{synthetic, web};

    fn autoscaler(target: i32) -> Autoscaler {
        web(&format!(
            "  minReplicas: 2
  maxReplicas: 40
  metrics:
  - type: Resource
    resource: {{name: cpu, target: {{type: Utilization, averageUtilization: {target}}}}}
  prediction:
    predictionAlgorithm: {{algorithmType: dsp, dsp: {{sampleInterval: 1m, historyLength: 2d}}}}
"
        ))
    }

    fn load() -> LoadTrace {
        synthetic(4, 5)
    }

    fn replay(target: i32, trace: &LoadTrace, track: &mut ForecastTrack) -> PolicyOutcome {
        let model = ModelConfig {
            recording: Recording::ScoresOnly,
            refit_interval_seconds: 4 * 3600,
            ..Default::default()
        };
        run_policy_on_track(
            "web",
            &autoscaler(target),
            trace,
            &model,
            3600,
            track,
            &|_| {},
        )
    }

    /// A replay reading fits another replay left on the track scores exactly as one that
    /// fitted them all itself: which candidate fits first changes nothing.
    #[test]
    fn a_replay_on_a_shared_track_scores_as_on_a_track_of_its_own() {
        let trace = load();
        let fresh = || ForecastTrack::for_autoscaler(&autoscaler(60), &trace).unwrap();
        let mut own = fresh();
        let alone = replay(80, &trace, &mut own);
        let (shared_alone, fitted_alone) = own.reads();
        // Every refit but the first (no history yet) reads the track.
        assert_eq!(fitted_alone, 1);
        assert!(shared_alone > 10, "{:?}", own.reads());
        assert_eq!(own.fits.len() as u64, shared_alone);

        let mut shared = fresh();
        let first = replay(60, &trace, &mut shared);
        let (fits_after_first, learned_after_first) = (shared.fits.len(), shared.headroom.len());
        let second = replay(80, &trace, &mut shared);
        assert_eq!(second.scores, alone.scores);
        assert_eq!(second.prediction, alone.prediction);
        // The second replay fitted and learned nothing new, and the two targets did scale
        // differently.
        assert!(learned_after_first > 10);
        assert_eq!(shared.fits.len(), fits_after_first);
        assert_eq!(shared.headroom.len(), learned_after_first);
        assert_ne!(first.scores.replica_hours, second.scores.replica_hours);
        assert!(alone.prediction.is_some_and(|p| p.ready_refits > 0));
    }

    #[test]
    fn a_history_that_is_not_the_recorded_load_is_not_read_from_the_track() {
        let trace = load();
        let mut track = ForecastTrack::for_autoscaler(&autoscaler(60), &trace).unwrap();
        let stretch: Vec<Sample> = track.recorded[100..400].to_vec();
        let now = stretch.last().unwrap().ts + 60;
        assert!(track.prediction(&stretch, now).is_some());
        let mut other = stretch.clone();
        other[150].value += 1e-9;
        assert!(track.prediction(&other, now).is_none());
        assert!(track.prediction(&[], now).is_none());
        assert_eq!(track.reads(), (1, 2));
        // Another predictor's settings are not this track's.
        let mut percentile = autoscaler(60);
        percentile.prediction.as_mut().unwrap().predictor =
            PredictorConfig::Percentile(Default::default());
        assert!(!track.fits_predictor(&percentile.prediction.unwrap().predictor));
    }
}
