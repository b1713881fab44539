//! `spec.prediction`: forecast the metrics and scale for the coming peak.

use std::collections::BTreeMap;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::duration::parse_duration;
use crate::quantity::Quantity;
use crate::validation::FieldError;

/// Prediction settings (Crane's `spec.prediction`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{
    "rule": "has(self.predictionAlgorithm)",
    "message": "prediction needs predictionAlgorithm (algorithmType: dsp or percentile)",
}]))]
pub struct PredictionSpec {
    /// How far ahead to look: the forecast peak inside [now, now + window] is scaled for
    /// (default 3600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub prediction_window_seconds: Option<i32>,
    /// The forecasting algorithm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prediction_algorithm: Option<PredictionAlgorithm>,
    /// PromQL history queries, keyed by metric identifier (`resource.cpu`, `resource.memory`,
    /// `pods.<name>`, `external.<name>`, `prometheus.<name>`), overriding the controller's
    /// defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_queries: Option<BTreeMap<String, String>>,
    /// Which stretch of the forecast is scaled for. `LeadTime` (the default): the peak
    /// until capacity asked for now is ready and the next decision can act (the workload's
    /// start-up time plus two sync periods), with a margin from the forecast's recent error.
    /// `Window`: the peak of the whole `predictionWindowSeconds`, as Crane does (what
    /// `foresight import` writes for Crane manifests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = HORIZONS))]
    pub horizon: Option<String>,
    /// The workload's start-up time (pod creation to Ready), seconds, for the `LeadTime`
    /// horizon. Unset: measured from the target's own pods (60 until one is seen).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 3600))]
    pub startup_seconds: Option<i32>,
    /// How forecasts are checked against what was then observed, and when prediction is
    /// demoted for being wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<AccuracySpec>,
    /// Headroom learned from the workload's own history: capacity for how far the load rises
    /// at each hour of the day before new pods could be ready (docs/prediction.md). On by
    /// default, with a risk budget of 1%.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headroom: Option<HeadroomSpec>,
    /// Before prediction proposes, replay the recent history with and without it and keep
    /// it only where that replay was cheaper at equal shortfall (default true; what
    /// `foresight import` writes for Crane manifests is false, as Crane has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_evaluation: Option<bool>,
}

/// Learned headroom.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HeadroomSpec {
    /// Learn and propose headroom (default true; `foresight import` writes false for Crane
    /// manifests, as Crane has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// The share of the time, in percent, the load may outgrow what the pods carry (their
    /// requests for a Utilization target, the target for a value target) before new pods are
    /// ready (e.g. `"1"` or `"0.5"`; more than 0, at most 50; default 1). Smaller holds more
    /// capacity at the hours the load jumps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = crate::schema::positive_quantity)]
    pub risk_budget_percent: Option<Quantity>,
}

/// `spec.prediction.horizon` values.
pub const HORIZONS: &[&str] = &["LeadTime", "Window"];

/// Forecast accuracy tracking and automatic demotion.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccuracySpec {
    /// How far back forecasts are compared with observations, seconds (default 86400).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 600, max = 2_592_000))]
    pub window_seconds: Option<i32>,
    /// Prediction stops proposing (`PredictionReady=False`, `ForecastInaccurate`) while the
    /// forecast's error over the window (sum of |forecast - observed| over sum of observed,
    /// in percent) is above this (default 50), and resumes once it is below 80% of it.
    /// 0 turns demotion off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 1000))]
    pub max_error_percent: Option<i32>,
}

/// Which predictor to run, and its settings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PredictionAlgorithm {
    /// `dsp` (periodic forecast by FFT) or `percentile` (a percentile of history, held flat).
    #[serde(default)]
    #[schemars(extend("enum" = ALGORITHMS))]
    pub algorithm_type: String,
    /// Settings for `dsp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dsp: Option<DspSpec>,
    /// Settings for `percentile`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percentile: Option<PercentileSpec>,
}

/// Settings of the DSP predictor.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DspSpec {
    /// Sample spacing, a Go-style duration (`60s`, `1m`); at most 1h (default `1m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_interval: Option<String>,
    /// History to analyse (`3d`, `15d`); at least 48h (default `15d`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_length: Option<String>,
    /// Candidate estimators; the one with the smallest back-test error is used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimators: Option<DspEstimators>,
}

/// The DSP predictor's candidate estimators.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DspEstimators {
    /// Per-phase maximum over past periods, times (1 + margin).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub max_value: Vec<MaxValueEstimatorSpec>,
    /// Low-pass FFT reconstruction of the last period, times (1 + margin).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fft: Vec<FftEstimatorSpec>,
}

/// A MaxValue estimator.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MaxValueEstimatorSpec {
    /// Safety margin as a fraction, e.g. `"0.1"` (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin_fraction: Option<Quantity>,
}

/// An FFT estimator.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FftEstimatorSpec {
    /// Safety margin as a fraction (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin_fraction: Option<Quantity>,
    /// Spectrum components weaker than this are dropped (default 1.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low_amplitude_threshold: Option<Quantity>,
    /// Components at or below this frequency in Hz are always kept (default 1/3600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high_frequency_threshold: Option<Quantity>,
    /// Keep at least this many strongest components (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_num_of_spectrum_items: Option<i32>,
    /// Keep at most this many strongest components (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_num_of_spectrum_items: Option<i32>,
}

/// Settings of the percentile predictor.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PercentileSpec {
    /// Sample spacing (default `1m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_interval: Option<String>,
    /// History to analyse (default `7d`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_length: Option<String>,
    /// The percentile, as a fraction (default `0.99`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percentile: Option<Quantity>,
    /// Safety margin as a fraction (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin_fraction: Option<Quantity>,
    /// The estimate is divided by this (default 1.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_utilization: Option<Quantity>,
}

/// The predictor algorithms Foresight knows.
pub const ALGORITHMS: &[&str] = &["dsp", "percentile"];

/// Crane's DSP default `sampleInterval` (1 minute).
pub const DEFAULT_DSP_SAMPLE_INTERVAL: Duration = Duration::from_secs(60);
/// Crane's DSP default `historyLength` (15 days).
pub const DEFAULT_DSP_HISTORY_LENGTH: Duration = Duration::from_secs(15 * 86_400);
/// The DSP predictor reads this much history beyond `historyLength`, as Crane does, so that
/// whole periods survive the alignment to whole hours.
pub const DSP_HISTORY_MARGIN: Duration = Duration::from_secs(3600);
/// The largest DSP `sampleInterval` (Crane's rule).
pub const MAX_DSP_SAMPLE_INTERVAL: Duration = Duration::from_secs(3600);
/// The shortest DSP `historyLength`: two daily periods (Crane's rule).
pub const MIN_DSP_HISTORY_LENGTH: Duration = Duration::from_secs(2 * 86_400);
/// Crane's percentile default `sampleInterval` (1 minute).
pub const DEFAULT_PERCENTILE_SAMPLE_INTERVAL: Duration = Duration::from_secs(60);
/// Crane's percentile default `historyLength` (7 days).
pub const DEFAULT_PERCENTILE_HISTORY_LENGTH: Duration = Duration::from_secs(7 * 86_400);
/// The most samples one series may hold (`historyLength / sampleInterval`), so that a
/// prediction stays within a predictable time and memory budget (15 days at 1 minute is
/// 21,601; at 1 second, 1,296,001).
pub const MAX_SERIES_SAMPLES: u64 = 1_000_000;

/// Validates `spec.prediction` (at `path`), appending every problem to `errs`.
pub fn validate_prediction(errs: &mut Vec<FieldError>, path: &str, p: &PredictionSpec) {
    if let Some(w) = p.prediction_window_seconds {
        if w < 1 {
            errs.push(FieldError::invalid(
                format!("{path}.predictionWindowSeconds"),
                w,
                "must be greater than 0",
            ));
        }
    }
    if let Some(h) = &p.horizon {
        if !HORIZONS.contains(&h.as_str()) {
            errs.push(FieldError::not_supported(
                format!("{path}.horizon"),
                h,
                HORIZONS,
            ));
        }
    }
    if let Some(s) = p.startup_seconds {
        if !(0..=3600).contains(&s) {
            errs.push(FieldError::invalid(
                format!("{path}.startupSeconds"),
                s,
                "must be between 0 and 3600",
            ));
        }
    }
    if let Some(b) = p
        .headroom
        .as_ref()
        .and_then(|h| h.risk_budget_percent.as_ref())
    {
        let field = format!("{path}.headroom.riskBudgetPercent");
        match b.as_f64() {
            Err(e) => errs.push(FieldError::invalid(field, b, e.to_string())),
            Ok(v) if !(v > 0.0 && v <= 50.0) => errs.push(FieldError::invalid(
                field,
                b,
                "must be more than 0 and at most 50 (percent of the time)",
            )),
            Ok(_) => {}
        }
    }
    if let Some(a) = &p.accuracy {
        if let Some(w) = a.window_seconds {
            if !(600..=2_592_000).contains(&w) {
                errs.push(FieldError::invalid(
                    format!("{path}.accuracy.windowSeconds"),
                    w,
                    "must be between 600 (10 minutes) and 2592000 (30 days)",
                ));
            }
        }
        if let Some(m) = a.max_error_percent {
            if !(0..=1000).contains(&m) {
                errs.push(FieldError::invalid(
                    format!("{path}.accuracy.maxErrorPercent"),
                    m,
                    "must be between 0 and 1000",
                ));
            }
        }
    }
    let Some(alg) = &p.prediction_algorithm else {
        errs.push(FieldError::required(
            format!("{path}.predictionAlgorithm"),
            "must choose an algorithm (dsp or percentile)",
        ));
        return;
    };
    validate_algorithm(errs, &format!("{path}.predictionAlgorithm"), alg);
}

/// Validates a `predictionAlgorithm` (at `path`), appending every problem to `errs`. Settings
/// that Crane would silently replace by its defaults are rejected here instead.
pub fn validate_algorithm(errs: &mut Vec<FieldError>, path: &str, alg: &PredictionAlgorithm) {
    if !ALGORITHMS.contains(&alg.algorithm_type.as_str()) {
        errs.push(FieldError::not_supported(
            format!("{path}.algorithmType"),
            &alg.algorithm_type,
            ALGORITHMS,
        ));
    }
    if let Some(dsp) = &alg.dsp {
        validate_dsp(errs, &format!("{path}.dsp"), dsp);
    }
    if let Some(pc) = &alg.percentile {
        validate_percentile(errs, &format!("{path}.percentile"), pc);
    }
}

fn validate_dsp(errs: &mut Vec<FieldError>, path: &str, dsp: &DspSpec) {
    let interval_field = format!("{path}.sampleInterval");
    let interval = match whole_seconds(errs, &interval_field, &dsp.sample_interval) {
        Some(d) if d > MAX_DSP_SAMPLE_INTERVAL => {
            errs.push(FieldError::invalid(
                interval_field,
                show(&dsp.sample_interval),
                "must be at most 1h",
            ));
            None
        }
        Some(d) if !86_400u64.is_multiple_of(d.as_secs()) => {
            errs.push(FieldError::invalid(
                interval_field,
                show(&dsp.sample_interval),
                "must divide one day into whole samples (e.g. 15s, 1m, 5m), or no daily period can be found",
            ));
            None
        }
        Some(d) => Some(d),
        None if dsp.sample_interval.is_none() => Some(DEFAULT_DSP_SAMPLE_INTERVAL),
        None => None,
    };
    let history_field = format!("{path}.historyLength");
    let history = match positive_duration(errs, &history_field, &dsp.history_length) {
        Some(h) if h < MIN_DSP_HISTORY_LENGTH => {
            errs.push(FieldError::invalid(
                history_field.clone(),
                show(&dsp.history_length),
                "must be at least 48h (two daily periods)",
            ));
            None
        }
        Some(h) => Some(h),
        None if dsp.history_length.is_none() => Some(DEFAULT_DSP_HISTORY_LENGTH),
        None => None,
    };
    if let (Some(interval), Some(history)) = (interval, history) {
        let samples = series_samples(history.saturating_add(DSP_HISTORY_MARGIN), interval);
        if samples > MAX_SERIES_SAMPLES {
            errs.push(FieldError::invalid(
                history_field,
                show(&dsp.history_length),
                format!(
                    "needs {samples} samples at sampleInterval {} (including the extra 1h the predictor reads); at most {MAX_SERIES_SAMPLES} are allowed",
                    crate::duration::format_duration(interval)
                ),
            ));
        }
    }
    let Some(est) = &dsp.estimators else { return };
    for (i, m) in est.max_value.iter().enumerate() {
        fraction(
            errs,
            format!("{path}.estimators.maxValue[{i}].marginFraction"),
            &m.margin_fraction,
            0.0,
            10.0,
        );
    }
    for (i, f) in est.fft.iter().enumerate() {
        let fpath = format!("{path}.estimators.fft[{i}]");
        fraction(
            errs,
            format!("{fpath}.marginFraction"),
            &f.margin_fraction,
            0.0,
            10.0,
        );
        // Crane replaces an explicit 0 by the default (1.0 and 1/3600 Hz); rather than
        // guess which one was meant, a 0 is rejected.
        for (field, value, default) in [
            ("lowAmplitudeThreshold", &f.low_amplitude_threshold, "1.0"),
            (
                "highFrequencyThreshold",
                &f.high_frequency_threshold,
                "1/3600 Hz",
            ),
        ] {
            let Some(q) = value else { continue };
            match q.as_f64() {
                Ok(v) if v > 0.0 && v.is_finite() => {}
                Ok(_) => errs.push(FieldError::invalid(
                    format!("{fpath}.{field}"),
                    q,
                    format!("must be greater than 0 (Crane treats 0 as the default {default}; leave it unset for that)"),
                )),
                Err(e) => errs.push(FieldError::invalid(format!("{fpath}.{field}"), q, e.to_string())),
            }
        }
        for (field, v) in [
            ("minNumOfSpectrumItems", f.min_num_of_spectrum_items),
            ("maxNumOfSpectrumItems", f.max_num_of_spectrum_items),
        ] {
            if let Some(v) = v {
                if v < 1 {
                    errs.push(FieldError::invalid(
                        format!("{fpath}.{field}"),
                        v,
                        "must be greater than 0",
                    ));
                }
            }
        }
        if let (Some(lo), Some(hi)) = (f.min_num_of_spectrum_items, f.max_num_of_spectrum_items) {
            if lo > hi {
                errs.push(FieldError::invalid(
                    format!("{fpath}.maxNumOfSpectrumItems"),
                    hi,
                    "must be greater than or equal to minNumOfSpectrumItems",
                ));
            }
        }
    }
}

fn validate_percentile(errs: &mut Vec<FieldError>, path: &str, pc: &PercentileSpec) {
    let interval_field = format!("{path}.sampleInterval");
    let interval = match whole_seconds(errs, &interval_field, &pc.sample_interval) {
        Some(d) => Some(d),
        None if pc.sample_interval.is_none() => Some(DEFAULT_PERCENTILE_SAMPLE_INTERVAL),
        None => None,
    };
    let history_field = format!("{path}.historyLength");
    let history = match positive_duration(errs, &history_field, &pc.history_length) {
        Some(h) => Some(h),
        None if pc.history_length.is_none() => Some(DEFAULT_PERCENTILE_HISTORY_LENGTH),
        None => None,
    };
    if let (Some(interval), Some(history)) = (interval, history) {
        let samples = series_samples(history, interval);
        if history < interval {
            errs.push(FieldError::invalid(
                history_field,
                show(&pc.history_length),
                format!(
                    "must be at least the sampleInterval ({})",
                    crate::duration::format_duration(interval)
                ),
            ));
        } else if samples > MAX_SERIES_SAMPLES {
            errs.push(FieldError::invalid(
                history_field,
                show(&pc.history_length),
                format!(
                    "needs {samples} samples at sampleInterval {}; at most {MAX_SERIES_SAMPLES} are allowed",
                    crate::duration::format_duration(interval)
                ),
            ));
        }
    }
    fraction(errs, format!("{path}.percentile"), &pc.percentile, 0.0, 1.0);
    fraction(
        errs,
        format!("{path}.marginFraction"),
        &pc.margin_fraction,
        0.0,
        10.0,
    );
    if let Some(q) = &pc.target_utilization {
        match q.as_f64() {
            Ok(v) if v > 0.0 && v <= 1.0 => {}
            _ => errs.push(FieldError::invalid(
                format!("{path}.targetUtilization"),
                q,
                "must be in (0, 1]",
            )),
        }
    }
}

/// The number of samples in `history` at one per `interval`, counting both ends.
fn series_samples(history: Duration, interval: Duration) -> u64 {
    match (history.as_secs(), interval.as_secs()) {
        (_, 0) => u64::MAX,
        (h, i) => (h / i).saturating_add(1),
    }
}

fn show(value: &Option<String>) -> &str {
    value.as_deref().unwrap_or_default()
}

/// Parses an optional duration that must be greater than zero; reports and returns `None`
/// when it is set but invalid, and also returns `None` when it is unset.
fn positive_duration(
    errs: &mut Vec<FieldError>,
    field: &str,
    value: &Option<String>,
) -> Option<Duration> {
    let v = value.as_ref()?;
    match parse_duration(v) {
        Ok(d) if d.is_zero() => {
            errs.push(FieldError::invalid(field, v, "must be greater than zero"));
            None
        }
        Ok(d) => Some(d),
        Err(msg) => {
            errs.push(FieldError::invalid(field, v, msg));
            None
        }
    }
}

/// Like [`positive_duration`], and the duration must be whole seconds: samples carry
/// timestamps in whole seconds.
fn whole_seconds(
    errs: &mut Vec<FieldError>,
    field: &str,
    value: &Option<String>,
) -> Option<Duration> {
    let d = positive_duration(errs, field, value)?;
    if d.subsec_nanos() != 0 {
        errs.push(FieldError::invalid(
            field,
            show(value),
            "must be a whole number of seconds",
        ));
        return None;
    }
    Some(d)
}

fn fraction(
    errs: &mut Vec<FieldError>,
    field: String,
    value: &Option<Quantity>,
    min: f64,
    max: f64,
) {
    if let Some(q) = value {
        match q.as_f64() {
            Ok(v) if v >= min && v <= max => {}
            Ok(_) => errs.push(FieldError::invalid(
                field,
                q,
                format!("must be between {min} and {max}"),
            )),
            Err(e) => errs.push(FieldError::invalid(field, q, e.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dsp(interval: Option<&str>, history: Option<&str>) -> PredictionAlgorithm {
        PredictionAlgorithm {
            algorithm_type: "dsp".to_owned(),
            dsp: Some(DspSpec {
                sample_interval: interval.map(str::to_owned),
                history_length: history.map(str::to_owned),
                estimators: None,
            }),
            percentile: None,
        }
    }

    fn check(alg: PredictionAlgorithm, window: Option<i32>) -> Vec<String> {
        let spec = PredictionSpec {
            prediction_window_seconds: window,
            prediction_algorithm: Some(alg),
            ..Default::default()
        };
        let mut errs = Vec::new();
        validate_prediction(&mut errs, "spec.prediction", &spec);
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn crane_defaults_and_common_settings_are_valid() {
        assert_eq!(check(dsp(None, None), None), Vec::<String>::new());
        assert_eq!(
            check(dsp(Some("60s"), Some("3d")), Some(3600)),
            Vec::<String>::new()
        );
        assert_eq!(
            check(dsp(Some("15s"), Some("15d")), Some(600)),
            Vec::<String>::new()
        );
        assert_eq!(
            check(dsp(Some("1h"), Some("48h")), Some(1)),
            Vec::<String>::new()
        );
        let percentile = PredictionAlgorithm {
            algorithm_type: "percentile".to_owned(),
            ..Default::default()
        };
        assert_eq!(check(percentile, None), Vec::<String>::new());
    }

    #[test]
    fn rejects_sample_interval_over_an_hour() {
        assert_eq!(
            check(dsp(Some("2h"), None), None),
            ["spec.prediction.predictionAlgorithm.dsp.sampleInterval: Invalid value: \"2h\": must be at most 1h"]
        );
    }

    #[test]
    fn rejects_sample_intervals_that_do_not_divide_a_day_or_are_not_whole_seconds() {
        let errs = check(dsp(Some("7m"), None), None);
        assert_eq!(errs.len(), 1);
        assert!(
            errs[0].starts_with(
                "spec.prediction.predictionAlgorithm.dsp.sampleInterval: Invalid value: \"7m\""
            ),
            "{errs:?}"
        );
        let errs = check(dsp(Some("1500ms"), None), None);
        assert!(
            errs[0].ends_with("must be a whole number of seconds"),
            "{errs:?}"
        );
        let errs = check(dsp(Some("0s"), None), None);
        assert!(errs[0].ends_with("must be greater than zero"), "{errs:?}");
    }

    #[test]
    fn rejects_history_shorter_than_two_days() {
        assert_eq!(
            check(dsp(None, Some("47h")), None),
            ["spec.prediction.predictionAlgorithm.dsp.historyLength: Invalid value: \"47h\": must be at least 48h (two daily periods)"]
        );
    }

    #[test]
    fn rejects_unknown_algorithm_and_missing_algorithm() {
        let alg = PredictionAlgorithm {
            algorithm_type: "prophet".to_owned(),
            ..Default::default()
        };
        assert_eq!(
            check(alg, None),
            ["spec.prediction.predictionAlgorithm.algorithmType: Unsupported value: \"prophet\": supported values: \"dsp\", \"percentile\""]
        );
        let mut errs = Vec::new();
        validate_prediction(&mut errs, "spec.prediction", &PredictionSpec::default());
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "spec.prediction.predictionAlgorithm");
    }

    #[test]
    fn rejects_negative_or_zero_window() {
        for w in [-5, 0] {
            assert_eq!(
                check(dsp(None, None), Some(w)),
                [format!("spec.prediction.predictionWindowSeconds: Invalid value: \"{w}\": must be greater than 0")]
            );
        }
    }

    #[test]
    fn rejects_series_too_long_to_process() {
        let errs = check(dsp(Some("1s"), Some("15d")), None);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(errs[0].starts_with("spec.prediction.predictionAlgorithm.dsp.historyLength: Invalid value: \"15d\": needs 1299601 samples"), "{errs:?}");
        // The default interval (1m) applies when only the history is given.
        assert_eq!(check(dsp(None, Some("600d")), None), Vec::<String>::new());
        assert_eq!(check(dsp(None, Some("700d")), None).len(), 1);
    }

    #[test]
    fn rejects_zero_thresholds_that_crane_would_silently_replace() {
        let mut alg = dsp(None, None);
        if let Some(d) = &mut alg.dsp {
            d.estimators = Some(DspEstimators {
                max_value: vec![MaxValueEstimatorSpec {
                    margin_fraction: Some("-0.1".into()),
                }],
                fft: vec![FftEstimatorSpec {
                    margin_fraction: Some("0.1".into()),
                    low_amplitude_threshold: Some("0".into()),
                    high_frequency_threshold: Some("0".into()),
                    min_num_of_spectrum_items: Some(10),
                    max_num_of_spectrum_items: Some(5),
                }],
            });
        }
        let errs = check(alg, None);
        let fields: Vec<&str> = errs
            .iter()
            .map(|e| e.split(':').next().unwrap_or_default())
            .collect();
        assert_eq!(
            fields,
            [
                "spec.prediction.predictionAlgorithm.dsp.estimators.maxValue[0].marginFraction",
                "spec.prediction.predictionAlgorithm.dsp.estimators.fft[0].lowAmplitudeThreshold",
                "spec.prediction.predictionAlgorithm.dsp.estimators.fft[0].highFrequencyThreshold",
                "spec.prediction.predictionAlgorithm.dsp.estimators.fft[0].maxNumOfSpectrumItems",
            ]
        );
        assert!(
            errs[1].contains("Crane treats 0 as the default 1.0"),
            "{errs:?}"
        );
    }

    #[test]
    fn checks_percentile_settings() {
        let alg = PredictionAlgorithm {
            algorithm_type: "percentile".to_owned(),
            dsp: None,
            percentile: Some(PercentileSpec {
                sample_interval: Some("5m".to_owned()),
                history_length: Some("1m".to_owned()),
                percentile: Some("1.5".into()),
                margin_fraction: None,
                target_utilization: Some("0".into()),
            }),
        };
        let errs = check(alg, None);
        let fields: Vec<&str> = errs
            .iter()
            .map(|e| e.split(':').next().unwrap_or_default())
            .collect();
        assert_eq!(
            fields,
            [
                "spec.prediction.predictionAlgorithm.percentile.historyLength",
                "spec.prediction.predictionAlgorithm.percentile.percentile",
                "spec.prediction.predictionAlgorithm.percentile.targetUtilization",
            ]
        );
    }
}
