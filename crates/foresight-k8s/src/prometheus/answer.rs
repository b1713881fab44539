//! What Prometheus answers: the series and points the client returns, its errors, and the
//! parsing of the JSON envelope.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::Timestamp;

use serde::Deserialize;

/// One series of an instant query: its labels and its sample.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The series' labels (`__name__` included when the query keeps it).
    pub labels: BTreeMap<String, String>,
    /// When the sample was evaluated.
    pub timestamp: Timestamp,
    /// The sample, always finite.
    pub value: f64,
}

/// One point of a range series.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// When, in Unix seconds (range queries evaluate at whole steps from `start`).
    pub ts: i64,
    /// The value, always finite.
    pub value: f64,
}

/// One series of a range query.
#[derive(Clone, Debug, PartialEq)]
pub struct RangeSeries {
    /// The series' labels.
    pub labels: BTreeMap<String, String>,
    /// Its finite points, in time order, without duplicates.
    pub points: Vec<Point>,
    /// How many NaN or infinite points were left out (e.g. a ratio whose divisor was 0).
    pub non_finite_dropped: usize,
}

/// Why a query gave no answer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PrometheusError {
    /// The client could not be built from the options.
    #[error("invalid Prometheus client settings: {0}")]
    Config(String),
    /// The request arguments make no sense (an empty query, start after end, a zero step).
    #[error("invalid query arguments: {0}")]
    InvalidArguments(String),
    /// No connection could be made, or it broke.
    #[error("Prometheus at {url} is unreachable: {message}")]
    Unreachable {
        /// The URL asked.
        url: String,
        /// What the connection attempt reported.
        message: String,
    },
    /// Prometheus did not answer in time.
    #[error("Prometheus at {url} did not answer within {timeout:?}")]
    Timeout {
        /// The URL asked.
        url: String,
        /// The configured timeout.
        timeout: Duration,
    },
    /// An HTTP error status without a Prometheus error body (a proxy, a wrong path).
    #[error("Prometheus at {url} answered HTTP {status}: {body}")]
    Http {
        /// The URL asked.
        url: String,
        /// The HTTP status code.
        status: u16,
        /// The start of the body, for the message.
        body: String,
    },
    /// Prometheus answered `status: error` (a bad query, a timeout inside Prometheus, ...).
    #[error("Prometheus rejected the query ({error_type}): {error}")]
    Query {
        /// `errorType`: `bad_data`, `execution`, `timeout`, `canceled`, `internal`, ...
        error_type: String,
        /// `error`: the message.
        error: String,
    },
    /// The body is larger than `max_response_bytes`.
    #[error("Prometheus' answer is larger than the {limit} bytes allowed")]
    TooLarge {
        /// The limit.
        limit: usize,
    },
    /// The body is not the JSON the API documents, or holds an unexpected result type.
    #[error("Prometheus' answer could not be read: {0}")]
    BadPayload(String),
    /// An instant query returned NaN or an infinity.
    #[error("the query returned {value} for {series}, not a finite number")]
    NonFinite {
        /// The series, as `{label="value",...}`.
        series: String,
        /// The value as Prometheus wrote it.
        value: String,
    },
}

impl PrometheusError {
    /// A short, stable name of the kind of failure, for the `kind` label of the controller's
    /// `foresight_prometheus_query_errors_total`.
    pub fn kind(&self) -> &'static str {
        match self {
            PrometheusError::Config(_) => "config",
            PrometheusError::InvalidArguments(_) => "invalid_arguments",
            PrometheusError::Unreachable { .. } => "unreachable",
            PrometheusError::Timeout { .. } => "timeout",
            PrometheusError::Http { .. } => "http",
            PrometheusError::Query { .. } => "query",
            PrometheusError::TooLarge { .. } => "too_large",
            PrometheusError::BadPayload(_) => "bad_payload",
            PrometheusError::NonFinite { .. } => "non_finite",
        }
    }
}

pub(super) fn series_name(labels: &BTreeMap<String, String>) -> String {
    let inner: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
    format!("{{{}}}", inner.join(","))
}

/// A `[<unix seconds>, "<value>"]` pair.
pub(super) fn parse_sample(
    raw: &(serde_json::Value, String),
) -> Result<(f64, f64), PrometheusError> {
    let ts = raw.0.as_f64().ok_or_else(|| {
        PrometheusError::BadPayload(format!("timestamp {} is not a number", raw.0))
    })?;
    let value = parse_value(&raw.1)?;
    Ok((ts, value))
}

/// Prometheus writes values as strings, with `NaN`, `+Inf` and `-Inf` for the specials.
pub(super) fn parse_value(s: &str) -> Result<f64, PrometheusError> {
    match s {
        "NaN" => Ok(f64::NAN),
        "+Inf" | "Inf" => Ok(f64::INFINITY),
        "-Inf" => Ok(f64::NEG_INFINITY),
        _ => s
            .parse::<f64>()
            .map_err(|_| PrometheusError::BadPayload(format!("value {s:?} is not a number"))),
    }
}

pub(super) fn instant_series(
    labels: BTreeMap<String, String>,
    raw: (serde_json::Value, String),
) -> Result<Series, PrometheusError> {
    let (ts, value) = parse_sample(&raw)?;
    if !value.is_finite() {
        return Err(PrometheusError::NonFinite {
            series: series_name(&labels),
            value: raw.1,
        });
    }
    let timestamp = if ts.is_finite() {
        Timestamp::from_millisecond((ts * 1000.0).round() as i64).map_err(|e| {
            PrometheusError::BadPayload(format!("timestamp {ts} is out of range: {e}"))
        })?
    } else {
        return Err(PrometheusError::BadPayload(format!(
            "timestamp {ts} is not finite"
        )));
    };
    Ok(Series {
        labels,
        timestamp,
        value,
    })
}

/// The API's envelope: `{"status": "success"|"error", "data": ..., "errorType", "error"}`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Envelope {
    pub(super) status: String,
    #[serde(default)]
    pub(super) data: Option<QueryData>,
    #[serde(default)]
    pub(super) error_type: Option<String>,
    #[serde(default)]
    pub(super) error: Option<String>,
}

/// `data` of a query answer, by `resultType` (read it with [`instant_answer`] or
/// [`join_range`]).
#[derive(Deserialize)]
#[serde(tag = "resultType", content = "result", rename_all = "lowercase")]
pub enum QueryData {
    Vector(Vec<ResultItem>),
    Matrix(Vec<ResultItem>),
    Scalar((serde_json::Value, String)),
    String(serde::de::IgnoredAny),
}

impl QueryData {
    pub(super) fn type_name(&self) -> &'static str {
        match self {
            QueryData::Vector(_) => "vector",
            QueryData::Matrix(_) => "matrix",
            QueryData::Scalar(_) => "scalar",
            QueryData::String(_) => "string",
        }
    }
}

/// One series of a vector (`value`) or matrix (`values`).
#[derive(Deserialize)]
pub struct ResultItem {
    #[serde(default)]
    pub(super) metric: BTreeMap<String, String>,
    #[serde(default)]
    pub(super) value: Option<(serde_json::Value, String)>,
    #[serde(default)]
    pub(super) values: Option<Vec<(serde_json::Value, String)>>,
}

/// The `data` of an answer with HTTP `status` and `body` from `url`, or the error it carries:
/// Prometheus's own error (it answers query errors with 400/422/503 and an error body), the
/// bare HTTP status, or why the body is not an answer.
pub fn decode_answer(status: u16, url: &str, body: &[u8]) -> Result<QueryData, PrometheusError> {
    let envelope: Result<Envelope, _> = serde_json::from_slice(body);
    let success = (200..300).contains(&status);
    match envelope {
        Ok(Envelope {
            status: ref s,
            error_type,
            error,
            ..
        }) if s == "error" => Err(PrometheusError::Query {
            error_type: error_type.unwrap_or_else(|| "unknown".to_owned()),
            error: error.unwrap_or_default(),
        }),
        _ if !success => Err(PrometheusError::Http {
            url: url.to_owned(),
            status,
            body: excerpt(body),
        }),
        Ok(Envelope {
            status: s,
            data: Some(data),
            ..
        }) if s == "success" => Ok(data),
        Ok(e) => Err(PrometheusError::BadPayload(format!(
            "status {:?} without data",
            e.status
        ))),
        Err(e) => Err(PrometheusError::BadPayload(format!(
            "{e} (body starts {})",
            excerpt(body)
        ))),
    }
}

/// The series of an instant query's answer. A scalar is one series without labels.
pub fn instant_answer(data: QueryData) -> Result<Vec<Series>, PrometheusError> {
    match data {
        QueryData::Vector(items) => items
            .into_iter()
            .map(|item| {
                let sample = item.value.ok_or_else(|| {
                    PrometheusError::BadPayload(
                        "a vector item has no `value` (native histograms are not supported)"
                            .to_owned(),
                    )
                })?;
                instant_series(item.metric, sample)
            })
            .collect(),
        QueryData::Scalar(sample) => Ok(vec![instant_series(BTreeMap::new(), sample)?]),
        QueryData::Matrix(_) => Err(PrometheusError::BadPayload(
            "an instant query returned a range vector; drop the `[range]` selector".to_owned(),
        )),
        QueryData::String(_) => Err(PrometheusError::BadPayload(
            "the query returned a string, not a number".to_owned(),
        )),
    }
}

/// Adds one piece of a range query's answer to the series joined so far (by labels): points
/// in time order, later duplicates and non-finite values dropped (and counted).
pub fn join_range(
    joined: &mut BTreeMap<BTreeMap<String, String>, RangeSeries>,
    data: QueryData,
) -> Result<(), PrometheusError> {
    let QueryData::Matrix(items) = data else {
        return Err(PrometheusError::BadPayload(format!(
            "a range query returned a {}, not a matrix",
            data.type_name()
        )));
    };
    for item in items {
        let series = joined
            .entry(item.metric.clone())
            .or_insert_with(|| RangeSeries {
                labels: item.metric.clone(),
                points: Vec::new(),
                non_finite_dropped: 0,
            });
        for raw in item.values.unwrap_or_default() {
            let (ts, value) = parse_sample(&raw)?;
            if !value.is_finite() {
                series.non_finite_dropped += 1;
                continue;
            }
            // Whole-second steps from a whole-second start: the fraction is 0. A timestamp
            // beyond i64 saturates, and keeps the order check meaningful.
            let ts = ts.round() as i64;
            if series.points.last().is_some_and(|p| p.ts >= ts) {
                continue;
            }
            series.points.push(Point { ts, value });
        }
    }
    Ok(())
}

fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let mut s: String = text.chars().take(200).collect();
    if text.chars().count() > 200 {
        s.push_str("...");
    }
    s.trim().to_owned()
}
