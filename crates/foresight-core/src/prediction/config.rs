//! Predictor settings, built from the API with Crane's defaults for what is unset.
//!
//! Deliberate difference from Crane: an invalid setting is an error here (and in
//! `foresight validate`), where Crane logs it and silently falls back to all defaults.

use std::time::Duration;

use foresight_api::prediction::{
    self as api, DspSpec, FftEstimatorSpec, PercentileSpec, PredictionAlgorithm,
    DEFAULT_DSP_HISTORY_LENGTH, DEFAULT_DSP_SAMPLE_INTERVAL, DEFAULT_PERCENTILE_HISTORY_LENGTH,
    DEFAULT_PERCENTILE_SAMPLE_INTERVAL, DSP_HISTORY_MARGIN, MAX_DSP_SAMPLE_INTERVAL,
    MAX_SERIES_SAMPLES, MIN_DSP_HISTORY_LENGTH,
};
use foresight_api::quantity::Quantity;
use foresight_api::validation::ValidationErrors;

use super::estimator::{
    default_estimators, Estimator, FftEstimator, MaxValueEstimator, MirrorBins,
};
use super::forecast::Algorithm;

/// The seed of the period detector's shuffles unless one is chosen: any fixed value makes
/// the detector deterministic; this one has no meaning beyond that.
pub const DEFAULT_SEED: u64 = 0x5EED_F0E5_1647;

/// Crane's default percentile (the percentile predictor in docs/prediction.md).
pub const DEFAULT_PERCENTILE: f64 = 0.99;
/// VPA's `minSampleWeight`: the weight of a sample is `max(this, value)` (the percentile predictor in docs/prediction.md).
pub const MIN_SAMPLE_WEIGHT: f64 = 1e-5;

/// Why predictor settings were rejected.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// The sample interval is out of range.
    #[error("sampleInterval {interval:?} {problem}")]
    SampleInterval {
        /// The interval given.
        interval: Duration,
        /// The rule it breaks.
        problem: &'static str,
    },
    /// The history is too short.
    #[error("historyLength {0:?} must be at least {1:?}")]
    HistoryTooShort(Duration, Duration),
    /// The series would hold too many samples.
    #[error("historyLength {history:?} at sampleInterval {interval:?} needs {samples} samples; at most {MAX_SERIES_SAMPLES} are allowed")]
    TooManySamples {
        /// The history length.
        history: Duration,
        /// The sample interval.
        interval: Duration,
        /// Samples needed.
        samples: u64,
    },
    /// An estimator parameter is out of range.
    #[error("estimator {index}: {problem}")]
    Estimator {
        /// Position in the estimator list.
        index: usize,
        /// What is wrong.
        problem: String,
    },
    /// A percentile parameter is out of range.
    #[error("{0}")]
    Percentile(String),
    /// A duration or quantity could not be read.
    #[error("{0}")]
    Unreadable(String),
}

/// Settings of the DSP predictor.
#[derive(Clone, Debug, PartialEq)]
pub struct DspConfig {
    interval_secs: i64,
    history_secs: i64,
    estimators: Vec<Estimator>,
    seed: u64,
}

impl Default for DspConfig {
    /// Crane's defaults: 1-minute samples, 15 days of history, the eight default estimators.
    fn default() -> Self {
        DspConfig {
            interval_secs: secs(DEFAULT_DSP_SAMPLE_INTERVAL),
            history_secs: secs(DEFAULT_DSP_HISTORY_LENGTH),
            estimators: default_estimators(),
            seed: DEFAULT_SEED,
        }
    }
}

impl DspConfig {
    /// Checks and builds DSP settings. An empty estimator list means Crane's eight defaults.
    pub fn new(
        sample_interval: Duration,
        history_length: Duration,
        estimators: Vec<Estimator>,
    ) -> Result<Self, ConfigError> {
        check_interval(sample_interval)?;
        if sample_interval > MAX_DSP_SAMPLE_INTERVAL {
            return Err(ConfigError::SampleInterval {
                interval: sample_interval,
                problem: "must be at most 1h",
            });
        }
        if !86_400u64.is_multiple_of(sample_interval.as_secs()) {
            return Err(ConfigError::SampleInterval {
                interval: sample_interval,
                problem: "must divide one day into whole samples",
            });
        }
        if history_length < MIN_DSP_HISTORY_LENGTH {
            return Err(ConfigError::HistoryTooShort(
                history_length,
                MIN_DSP_HISTORY_LENGTH,
            ));
        }
        check_samples(
            history_length.saturating_add(DSP_HISTORY_MARGIN),
            sample_interval,
        )?;
        for (index, e) in estimators.iter().enumerate() {
            check_estimator(e).map_err(|problem| ConfigError::Estimator { index, problem })?;
        }
        Ok(DspConfig {
            interval_secs: secs(sample_interval),
            history_secs: secs(history_length),
            estimators: if estimators.is_empty() {
                default_estimators()
            } else {
                estimators
            },
            seed: DEFAULT_SEED,
        })
    }

    /// Seconds between samples.
    pub fn interval_secs(&self) -> i64 {
        self.interval_secs
    }

    /// Seconds of history analysed (Crane reads one hour more; see `DSP_HISTORY_MARGIN`).
    pub fn history_secs(&self) -> i64 {
        self.history_secs
    }

    /// The candidate estimators, in back-test order.
    pub fn estimators(&self) -> &[Estimator] {
        &self.estimators
    }

    /// The seed of the period detector's shuffles.
    pub fn seed(&self) -> u64 {
        self.seed
    }
}

fn check_estimator(e: &Estimator) -> Result<(), String> {
    let margin = match e {
        Estimator::MaxValue(m) => m.margin,
        Estimator::Fft(f) => {
            if !(f.low_amplitude_threshold.is_finite() && f.low_amplitude_threshold >= 0.0) {
                return Err(format!(
                    "lowAmplitudeThreshold {} must be a non-negative number",
                    f.low_amplitude_threshold
                ));
            }
            if !(f.high_frequency_threshold_hz.is_finite() && f.high_frequency_threshold_hz >= 0.0)
            {
                return Err(format!(
                    "highFrequencyThreshold {} must be a non-negative number",
                    f.high_frequency_threshold_hz
                ));
            }
            if f.min_items < 1 || f.min_items > f.max_items {
                return Err(format!(
                    "spectrum items {}..{} must satisfy 1 <= min <= max",
                    f.min_items, f.max_items
                ));
            }
            f.margin
        }
    };
    if !(margin.is_finite() && (0.0..=10.0).contains(&margin)) {
        return Err(format!("marginFraction {margin} must be between 0 and 10"));
    }
    Ok(())
}

/// Settings of the percentile predictor (docs/prediction.md).
#[derive(Clone, Debug, PartialEq)]
pub struct PercentileConfig {
    interval_secs: i64,
    history_secs: i64,
    percentile: f64,
    margin: f64,
    target_utilization: f64,
}

impl Default for PercentileConfig {
    /// Crane's defaults: 1-minute samples, 7 days, the 99th percentile, no margin, target 1.
    fn default() -> Self {
        PercentileConfig {
            interval_secs: secs(DEFAULT_PERCENTILE_SAMPLE_INTERVAL),
            history_secs: secs(DEFAULT_PERCENTILE_HISTORY_LENGTH),
            percentile: DEFAULT_PERCENTILE,
            margin: 0.0,
            target_utilization: 1.0,
        }
    }
}

impl PercentileConfig {
    /// Checks and builds percentile settings; `percentile` is a fraction in [0, 1].
    pub fn new(
        sample_interval: Duration,
        history_length: Duration,
        percentile: f64,
        margin: f64,
        target_utilization: f64,
    ) -> Result<Self, ConfigError> {
        check_interval(sample_interval)?;
        if history_length < sample_interval {
            return Err(ConfigError::HistoryTooShort(
                history_length,
                sample_interval,
            ));
        }
        check_samples(history_length, sample_interval)?;
        if !(0.0..=1.0).contains(&percentile) {
            return Err(ConfigError::Percentile(format!(
                "percentile {percentile} must be between 0 and 1"
            )));
        }
        if !(0.0..=10.0).contains(&margin) {
            return Err(ConfigError::Percentile(format!(
                "marginFraction {margin} must be between 0 and 10"
            )));
        }
        if !(target_utilization > 0.0 && target_utilization <= 1.0) {
            return Err(ConfigError::Percentile(format!(
                "targetUtilization {target_utilization} must be in (0, 1]"
            )));
        }
        Ok(PercentileConfig {
            interval_secs: secs(sample_interval),
            history_secs: secs(history_length),
            percentile,
            margin,
            target_utilization,
        })
    }

    /// Seconds between samples.
    pub fn interval_secs(&self) -> i64 {
        self.interval_secs
    }

    /// Seconds of history summarised.
    pub fn history_secs(&self) -> i64 {
        self.history_secs
    }

    /// The percentile as a fraction.
    pub fn percentile(&self) -> f64 {
        self.percentile
    }

    /// The safety margin as a fraction.
    pub fn margin(&self) -> f64 {
        self.margin
    }

    /// The target utilization the estimate is divided by.
    pub fn target_utilization(&self) -> f64 {
        self.target_utilization
    }
}

fn check_interval(interval: Duration) -> Result<(), ConfigError> {
    if interval.subsec_nanos() != 0 || interval < Duration::from_secs(1) {
        return Err(ConfigError::SampleInterval {
            interval,
            problem: "must be a whole number of seconds, at least 1s",
        });
    }
    Ok(())
}

fn check_samples(history: Duration, interval: Duration) -> Result<(), ConfigError> {
    let samples = (history.as_secs() / interval.as_secs().max(1)).saturating_add(1);
    if samples > MAX_SERIES_SAMPLES {
        return Err(ConfigError::TooManySamples {
            history,
            interval,
            samples,
        });
    }
    Ok(())
}

/// Whole seconds of a duration that was checked to be at most a few years long.
fn secs(d: Duration) -> i64 {
    i64::try_from(d.as_secs()).unwrap_or(i64::MAX)
}

/// Which predictor to run, and its settings.
#[derive(Clone, Debug, PartialEq)]
pub enum PredictorConfig {
    /// Crane's DSP predictor.
    Dsp(DspConfig),
    /// The percentile predictor.
    Percentile(PercentileConfig),
}

impl PredictorConfig {
    /// Builds the settings from the API's `predictionAlgorithm`, filling in Crane's defaults
    /// for unset fields. Anything `foresight validate` would reject is an error listing every
    /// problem with its field path.
    pub fn from_spec(spec: &PredictionAlgorithm) -> Result<PredictorConfig, String> {
        let mut errs = Vec::new();
        api::validate_algorithm(&mut errs, "predictionAlgorithm", spec);
        if !errs.is_empty() {
            return Err(ValidationErrors(errs).to_string());
        }
        let built = match spec.algorithm_type.as_str() {
            "dsp" => dsp_from_spec(spec.dsp.as_ref()).map(PredictorConfig::Dsp),
            "percentile" => {
                percentile_from_spec(spec.percentile.as_ref()).map(PredictorConfig::Percentile)
            }
            other => {
                return Err(format!(
                    "predictionAlgorithm.algorithmType: unknown algorithm {other:?}"
                ))
            }
        };
        built.map_err(|e| format!("predictionAlgorithm: {e}"))
    }

    /// The algorithm these settings are for.
    pub fn algorithm(&self) -> Algorithm {
        match self {
            PredictorConfig::Dsp(_) => Algorithm::Dsp,
            PredictorConfig::Percentile(_) => Algorithm::Percentile,
        }
    }

    /// Seconds between samples.
    pub fn interval_secs(&self) -> i64 {
        match self {
            PredictorConfig::Dsp(c) => c.interval_secs(),
            PredictorConfig::Percentile(c) => c.interval_secs(),
        }
    }

    /// Seconds of history the predictor looks at.
    pub fn history_secs(&self) -> i64 {
        match self {
            PredictorConfig::Dsp(c) => c.history_secs(),
            PredictorConfig::Percentile(c) => c.history_secs(),
        }
    }

    /// Seconds of history to read for it: the DSP predictor reads one hour more than its
    /// history length, as Crane does, to align the series to whole hours.
    pub fn history_to_read_secs(&self) -> i64 {
        let margin = match self {
            PredictorConfig::Dsp(_) => {
                i64::try_from(foresight_api::prediction::DSP_HISTORY_MARGIN.as_secs()).unwrap_or(0)
            }
            PredictorConfig::Percentile(_) => 0,
        };
        self.history_secs().saturating_add(margin)
    }
}

fn duration_or(value: Option<&String>, default: Duration) -> Result<Duration, ConfigError> {
    match value {
        None => Ok(default),
        Some(v) => foresight_api::duration::parse_duration(v).map_err(ConfigError::Unreadable),
    }
}

fn quantity_or(value: Option<&Quantity>, default: f64) -> Result<f64, ConfigError> {
    match value {
        None => Ok(default),
        Some(q) => q
            .as_f64()
            .map_err(|e| ConfigError::Unreadable(format!("{q}: {e}"))),
    }
}

fn count_or(value: Option<i32>, default: usize) -> usize {
    value
        .and_then(|v| usize::try_from(v).ok())
        .unwrap_or(default)
}

fn dsp_from_spec(spec: Option<&DspSpec>) -> Result<DspConfig, ConfigError> {
    let Some(spec) = spec else {
        return Ok(DspConfig::default());
    };
    let interval = duration_or(spec.sample_interval.as_ref(), DEFAULT_DSP_SAMPLE_INTERVAL)?;
    let history = duration_or(spec.history_length.as_ref(), DEFAULT_DSP_HISTORY_LENGTH)?;
    let mut estimators = Vec::new();
    if let Some(list) = &spec.estimators {
        // Crane builds the MaxValue estimators first, then the FFT ones; the order decides ties.
        for m in &list.max_value {
            estimators.push(Estimator::MaxValue(MaxValueEstimator {
                margin: quantity_or(m.margin_fraction.as_ref(), 0.0)?,
            }));
        }
        for f in &list.fft {
            estimators.push(Estimator::Fft(fft_from_spec(f)?));
        }
    }
    DspConfig::new(interval, history, estimators)
}

fn fft_from_spec(f: &FftEstimatorSpec) -> Result<FftEstimator, ConfigError> {
    let defaults = FftEstimator::with_margin(0.0);
    Ok(FftEstimator {
        margin: quantity_or(f.margin_fraction.as_ref(), 0.0)?,
        low_amplitude_threshold: quantity_or(
            f.low_amplitude_threshold.as_ref(),
            defaults.low_amplitude_threshold,
        )?,
        high_frequency_threshold_hz: quantity_or(
            f.high_frequency_threshold.as_ref(),
            defaults.high_frequency_threshold_hz,
        )?,
        min_items: count_or(f.min_num_of_spectrum_items, defaults.min_items),
        max_items: count_or(f.max_num_of_spectrum_items, defaults.max_items),
        mirror: MirrorBins::Symmetric,
    })
}

fn percentile_from_spec(spec: Option<&PercentileSpec>) -> Result<PercentileConfig, ConfigError> {
    let Some(spec) = spec else {
        return Ok(PercentileConfig::default());
    };
    PercentileConfig::new(
        duration_or(
            spec.sample_interval.as_ref(),
            DEFAULT_PERCENTILE_SAMPLE_INTERVAL,
        )?,
        duration_or(
            spec.history_length.as_ref(),
            DEFAULT_PERCENTILE_HISTORY_LENGTH,
        )?,
        quantity_or(spec.percentile.as_ref(), DEFAULT_PERCENTILE)?,
        quantity_or(spec.margin_fraction.as_ref(), 0.0)?,
        quantity_or(spec.target_utilization.as_ref(), 1.0)?,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use foresight_api::prediction::{DspEstimators, MaxValueEstimatorSpec};

    fn alg(algorithm_type: &str) -> PredictionAlgorithm {
        PredictionAlgorithm {
            algorithm_type: algorithm_type.to_owned(),
            ..Default::default()
        }
    }

    #[test]
    fn unset_fields_take_cranes_defaults() {
        let PredictorConfig::Dsp(dsp) = PredictorConfig::from_spec(&alg("dsp")).unwrap() else {
            panic!("dsp")
        };
        assert_eq!((dsp.interval_secs(), dsp.history_secs()), (60, 15 * 86_400));
        assert_eq!(dsp.estimators(), default_estimators().as_slice());
        assert_eq!(dsp.seed(), DEFAULT_SEED);
        let PredictorConfig::Percentile(p) =
            PredictorConfig::from_spec(&alg("percentile")).unwrap()
        else {
            panic!("percentile")
        };
        assert_eq!(
            (
                p.interval_secs(),
                p.history_secs(),
                p.percentile(),
                p.margin()
            ),
            (60, 7 * 86_400, 0.99, 0.0)
        );
        assert_eq!(p.target_utilization(), 1.0);
    }

    #[test]
    fn listed_estimators_replace_the_defaults_max_value_first() {
        let mut a = alg("dsp");
        a.dsp = Some(DspSpec {
            sample_interval: Some("30s".to_owned()),
            history_length: Some("3d".to_owned()),
            estimators: Some(DspEstimators {
                max_value: vec![MaxValueEstimatorSpec {
                    margin_fraction: Some("0.2".into()),
                }],
                fft: vec![FftEstimatorSpec {
                    min_num_of_spectrum_items: Some(5),
                    ..Default::default()
                }],
            }),
        });
        let PredictorConfig::Dsp(dsp) = PredictorConfig::from_spec(&a).unwrap() else {
            panic!("dsp")
        };
        assert_eq!((dsp.interval_secs(), dsp.history_secs()), (30, 3 * 86_400));
        assert_eq!(
            dsp.estimators(),
            [
                Estimator::MaxValue(MaxValueEstimator { margin: 0.2 }),
                Estimator::Fft(FftEstimator {
                    min_items: 5,
                    ..FftEstimator::with_margin(0.0)
                })
            ]
        );
    }

    #[test]
    fn invalid_settings_are_errors_with_field_paths() {
        let mut a = alg("dsp");
        a.dsp = Some(DspSpec {
            sample_interval: Some("2h".to_owned()),
            ..Default::default()
        });
        let err = PredictorConfig::from_spec(&a).unwrap_err();
        assert!(
            err.starts_with("predictionAlgorithm.dsp.sampleInterval: Invalid value: \"2h\""),
            "{err}"
        );
        let err = PredictorConfig::from_spec(&alg("arima")).unwrap_err();
        assert!(
            err.starts_with("predictionAlgorithm.algorithmType: Unsupported value"),
            "{err}"
        );
    }

    #[test]
    fn constructors_reject_what_validation_rejects() {
        let m = Duration::from_secs(60);
        let d = Duration::from_secs(86_400);
        assert!(DspConfig::new(Duration::from_millis(500), 2 * d, vec![]).is_err());
        assert!(DspConfig::new(Duration::from_secs(7200), 2 * d, vec![]).is_err());
        assert!(DspConfig::new(Duration::from_secs(420), 2 * d, vec![]).is_err());
        assert!(DspConfig::new(m, d, vec![]).is_err());
        assert!(DspConfig::new(Duration::from_secs(1), 15 * d, vec![]).is_err());
        let bad = Estimator::Fft(FftEstimator {
            min_items: 0,
            ..FftEstimator::with_margin(0.0)
        });
        assert!(matches!(
            DspConfig::new(m, 2 * d, vec![bad]),
            Err(ConfigError::Estimator { index: 0, .. })
        ));
        let nan = Estimator::MaxValue(MaxValueEstimator { margin: f64::NAN });
        assert!(DspConfig::new(m, 2 * d, vec![nan]).is_err());
        assert_eq!(
            DspConfig::new(m, 15 * d, vec![]).unwrap(),
            DspConfig::default()
        );
        assert!(PercentileConfig::new(m, d, f64::NAN, 0.0, 1.0).is_err());
        assert!(PercentileConfig::new(m, d, 0.5, 0.0, 0.0).is_err());
        assert!(PercentileConfig::new(d, m, 0.5, 0.0, 1.0).is_err());
        assert!(PercentileConfig::new(m, d, 0.5, 0.1, 0.5).is_ok());
    }
}
