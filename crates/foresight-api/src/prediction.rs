//! `spec.prediction`: forecast the metrics and scale for the coming peak.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::quantity::Quantity;

/// Prediction settings (Crane's `spec.prediction`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PredictionSpec {
    /// How far ahead to look: the forecast peak inside [now, now + window] is scaled for
    /// (default 3600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prediction_window_seconds: Option<i32>,
    /// The forecasting algorithm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prediction_algorithm: Option<PredictionAlgorithm>,
    /// PromQL history queries, keyed by metric identifier (`resource.cpu`, `resource.memory`,
    /// `pods.<name>`, `external.<name>`, `prometheus.<name>`), overriding the controller's
    /// defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_queries: Option<BTreeMap<String, String>>,
}

/// Which predictor to run, and its settings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PredictionAlgorithm {
    /// `dsp` (periodic forecast by FFT) or `percentile` (a percentile of history, held flat).
    #[serde(default)]
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

/// Validates `spec.prediction` (at `path`), appending every problem to `errs`.
pub fn validate_prediction(
    errs: &mut Vec<crate::validation::FieldError>,
    path: &str,
    p: &PredictionSpec,
) {
    use crate::duration::parse_duration;
    use crate::validation::FieldError;

    if let Some(w) = p.prediction_window_seconds {
        if w < 1 {
            errs.push(FieldError::invalid(
                format!("{path}.predictionWindowSeconds"),
                w,
                "must be greater than 0",
            ));
        }
    }
    let Some(alg) = &p.prediction_algorithm else {
        errs.push(FieldError::required(
            format!("{path}.predictionAlgorithm"),
            "must choose an algorithm (dsp or percentile)",
        ));
        return;
    };
    let apath = format!("{path}.predictionAlgorithm");
    if !ALGORITHMS.contains(&alg.algorithm_type.as_str()) {
        errs.push(FieldError::not_supported(
            format!("{apath}.algorithmType"),
            &alg.algorithm_type,
            ALGORITHMS,
        ));
    }
    let duration_field = |errs: &mut Vec<FieldError>,
                          field: String,
                          value: &Option<String>|
     -> Option<std::time::Duration> {
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
    };
    let fraction = |errs: &mut Vec<FieldError>,
                    field: String,
                    value: &Option<Quantity>,
                    min: f64,
                    max: f64| {
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
    };
    if let Some(dsp) = &alg.dsp {
        let dpath = format!("{apath}.dsp");
        if let Some(d) = duration_field(
            errs,
            format!("{dpath}.sampleInterval"),
            &dsp.sample_interval,
        ) {
            if d.as_secs() > 3600 {
                errs.push(FieldError::invalid(
                    format!("{dpath}.sampleInterval"),
                    dsp.sample_interval.as_deref().unwrap_or_default(),
                    "must be at most 1h",
                ));
            } else if d.subsec_nanos() != 0 || !86_400u64.is_multiple_of(d.as_secs()) {
                errs.push(FieldError::invalid(
                    format!("{dpath}.sampleInterval"),
                    dsp.sample_interval.as_deref().unwrap_or_default(),
                    "must divide one day into whole samples (e.g. 15s, 1m, 5m), or no daily period can be found",
                ));
            }
        }
        if let Some(h) = duration_field(errs, format!("{dpath}.historyLength"), &dsp.history_length)
        {
            if h.as_secs() < 48 * 3600 {
                errs.push(FieldError::invalid(
                    format!("{dpath}.historyLength"),
                    dsp.history_length.as_deref().unwrap_or_default(),
                    "must be at least 48h (two daily periods)",
                ));
            }
        }
        if let Some(est) = &dsp.estimators {
            for (i, m) in est.max_value.iter().enumerate() {
                fraction(
                    errs,
                    format!("{dpath}.estimators.maxValue[{i}].marginFraction"),
                    &m.margin_fraction,
                    0.0,
                    10.0,
                );
            }
            for (i, f) in est.fft.iter().enumerate() {
                let fpath = format!("{dpath}.estimators.fft[{i}]");
                fraction(
                    errs,
                    format!("{fpath}.marginFraction"),
                    &f.margin_fraction,
                    0.0,
                    10.0,
                );
                fraction(
                    errs,
                    format!("{fpath}.lowAmplitudeThreshold"),
                    &f.low_amplitude_threshold,
                    0.0,
                    f64::MAX,
                );
                fraction(
                    errs,
                    format!("{fpath}.highFrequencyThreshold"),
                    &f.high_frequency_threshold,
                    0.0,
                    f64::MAX,
                );
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
                if let (Some(lo), Some(hi)) =
                    (f.min_num_of_spectrum_items, f.max_num_of_spectrum_items)
                {
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
    }
    if let Some(pc) = &alg.percentile {
        let ppath = format!("{apath}.percentile");
        duration_field(errs, format!("{ppath}.sampleInterval"), &pc.sample_interval);
        duration_field(errs, format!("{ppath}.historyLength"), &pc.history_length);
        fraction(
            errs,
            format!("{ppath}.percentile"),
            &pc.percentile,
            0.0,
            1.0,
        );
        fraction(
            errs,
            format!("{ppath}.marginFraction"),
            &pc.margin_fraction,
            0.0,
            10.0,
        );
        if let Some(q) = &pc.target_utilization {
            match q.as_f64() {
                Ok(v) if v > 0.0 && v <= 1.0 => {}
                _ => errs.push(FieldError::invalid(
                    format!("{ppath}.targetUtilization"),
                    q,
                    "must be in (0, 1]",
                )),
            }
        }
    }
}
