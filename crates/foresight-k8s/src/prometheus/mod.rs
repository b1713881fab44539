//! A small client for Prometheus' HTTP API (`/api/v1/query` and `/api/v1/query_range`), the
//! way Foresight reads `type: Prometheus` metrics and prediction history.
//!
//! It is our own on reqwest rather than a client crate so that it shares kube's TLS stack
//! (rustls with ring), takes jiff timestamps, and bounds what it accepts: a response larger
//! than `max_response_bytes` is refused before it is parsed, and long ranges are split so no
//! request asks for more than Prometheus' 11,000 points per series.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use jiff::Timestamp;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION};

mod answer;
pub mod promql;

use answer::QueryData;
pub use answer::{decode_answer, instant_answer, join_range};
pub use answer::{Point, PrometheusError, RangeSeries, Series};

/// Prometheus refuses range queries that would return more points than this per series.
pub const MAX_POINTS_PER_SERIES: u64 = 11_000;

/// Most requests one range query is split into (11 million points per series at 11,000 each).
pub const MAX_PIECES: u64 = 1000;

/// How to reach Prometheus (or Thanos, Mimir, a managed Prometheus).
#[derive(Clone)]
pub struct PrometheusOptions {
    /// Sent as `Authorization: Bearer <token>`.
    pub bearer_token: Option<String>,
    /// A file holding the bearer token, read again for every request so that rotated
    /// (projected service-account) tokens are picked up; takes precedence over
    /// `bearer_token`.
    pub bearer_token_file: Option<std::path::PathBuf>,
    /// Extra headers, e.g. `X-Scope-OrgID` for Mimir tenants.
    pub headers: Vec<(String, String)>,
    /// A PEM bundle of extra CA certificates to trust besides the system ones.
    pub ca_certificates_pem: Option<Vec<u8>>,
    /// Timeout of one HTTP request, connection included.
    pub timeout: Duration,
    /// Largest response body accepted, in bytes.
    pub max_response_bytes: usize,
    /// Largest number of points one range request may ask for per series; longer ranges are
    /// split. Prometheus' own limit is 11,000.
    pub max_points_per_request: u64,
}

impl Default for PrometheusOptions {
    fn default() -> Self {
        PrometheusOptions {
            bearer_token: None,
            bearer_token_file: None,
            headers: Vec::new(),
            ca_certificates_pem: None,
            timeout: Duration::from_secs(30),
            max_response_bytes: 64 * 1024 * 1024,
            max_points_per_request: MAX_POINTS_PER_SERIES,
        }
    }
}

impl fmt::Debug for PrometheusOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The token and header values may be credentials: show only that they are set.
        let header_names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("PrometheusOptions")
            .field(
                "bearer_token",
                &self.bearer_token.as_ref().map(|_| "<redacted>"),
            )
            .field("bearer_token_file", &self.bearer_token_file)
            .field("headers", &header_names)
            .field(
                "ca_certificates_pem",
                &self.ca_certificates_pem.as_ref().map(Vec::len),
            )
            .field("timeout", &self.timeout)
            .field("max_response_bytes", &self.max_response_bytes)
            .field("max_points_per_request", &self.max_points_per_request)
            .finish()
    }
}

/// The API endpoints the client calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Endpoint {
    /// `/api/v1/query`: `type: Prometheus` metrics.
    Query,
    /// `/api/v1/query_range`: prediction history.
    QueryRange,
}

impl Endpoint {
    /// The endpoint's name in the API path (`query`, `query_range`).
    pub fn as_str(self) -> &'static str {
        match self {
            Endpoint::Query => "query",
            Endpoint::QueryRange => "query_range",
        }
    }

    fn path(self) -> &'static str {
        match self {
            Endpoint::Query => "/api/v1/query",
            Endpoint::QueryRange => "/api/v1/query_range",
        }
    }
}

/// What a client (and its clones) has asked Prometheus, for `/metrics`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestStats {
    /// HTTP requests sent per endpoint (a long range query is several).
    pub requests: BTreeMap<Endpoint, u64>,
    /// Queries that failed, per endpoint and [`PrometheusError::kind`].
    pub errors: BTreeMap<(Endpoint, &'static str), u64>,
}

/// The counters behind [`RequestStats`], shared by a client's clones.
#[derive(Debug, Default)]
struct RequestCounters {
    query: AtomicU64,
    query_range: AtomicU64,
    errors: Mutex<BTreeMap<(Endpoint, &'static str), u64>>,
}

impl RequestCounters {
    fn request(&self, endpoint: Endpoint) {
        let counter = match endpoint {
            Endpoint::Query => &self.query,
            Endpoint::QueryRange => &self.query_range,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    fn error(&self, endpoint: Endpoint, e: &PrometheusError) {
        let mut errors = self.errors.lock();
        *errors.entry((endpoint, e.kind())).or_default() += 1;
    }

    fn snapshot(&self) -> RequestStats {
        let errors = self.errors.lock();
        RequestStats {
            requests: BTreeMap::from([
                (Endpoint::Query, self.query.load(Ordering::Relaxed)),
                (
                    Endpoint::QueryRange,
                    self.query_range.load(Ordering::Relaxed),
                ),
            ]),
            errors: errors.clone(),
        }
    }
}

/// A Prometheus HTTP API client. Cheap to clone: clones share the connection pool and the
/// request counters.
#[derive(Clone)]
pub struct PrometheusClient {
    http: reqwest::Client,
    base: String,
    bearer_token_file: Option<std::path::PathBuf>,
    timeout: Duration,
    max_response_bytes: usize,
    max_points_per_request: u64,
    counters: Arc<RequestCounters>,
}

impl fmt::Debug for PrometheusClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The headers may hold credentials: only say where the client points.
        f.debug_struct("PrometheusClient")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl PrometheusClient {
    /// A client for the Prometheus at `base_url` (e.g. `http://prometheus:9090`, or a URL with
    /// a path prefix such as `https://thanos.example/prometheus`).
    pub fn new(base_url: &str, options: PrometheusOptions) -> Result<Self, PrometheusError> {
        let url = reqwest::Url::parse(base_url)
            .map_err(|e| PrometheusError::Config(format!("URL {base_url:?}: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(PrometheusError::Config(format!(
                "URL {base_url:?}: the scheme must be http or https"
            )));
        }
        if options.max_points_per_request < 2 {
            return Err(PrometheusError::Config(
                "max_points_per_request must be at least 2".to_owned(),
            ));
        }
        let mut headers = HeaderMap::new();
        for (name, value) in &options.headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| PrometheusError::Config(format!("header name {name:?}: {e}")))?;
            let mut value = HeaderValue::from_str(value)
                .map_err(|e| PrometheusError::Config(format!("header {name}: {e}")))?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        if let Some(token) = &options.bearer_token {
            let mut value = HeaderValue::from_str(&format!("Bearer {}", token.trim()))
                .map_err(|e| PrometheusError::Config(format!("bearer token: {e}")))?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        // reqwest is built without a crypto provider (dependencies.md: one provider, ring,
        // shared with kube). Installing it here keeps the client usable on its own; when the
        // binary already installed it, this is a no-op.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut builder = reqwest::Client::builder()
            .default_headers(headers)
            .timeout(options.timeout)
            .connect_timeout(options.timeout);
        if let Some(pem) = &options.ca_certificates_pem {
            let certs = reqwest::Certificate::from_pem_bundle(pem)
                .map_err(|e| PrometheusError::Config(format!("CA certificates: {e}")))?;
            for cert in certs {
                builder = builder.add_root_certificate(cert);
            }
        }
        let http = builder
            .build()
            .map_err(|e| PrometheusError::Config(e.to_string()))?;
        Ok(PrometheusClient {
            http,
            base: url.as_str().trim_end_matches('/').to_owned(),
            bearer_token_file: options.bearer_token_file,
            timeout: options.timeout,
            max_response_bytes: options.max_response_bytes,
            max_points_per_request: options.max_points_per_request,
            counters: Arc::default(),
        })
    }

    /// Requests sent and queries failed so far, by this client and its clones.
    pub fn request_stats(&self) -> RequestStats {
        self.counters.snapshot()
    }

    /// The base URL, without a trailing slash.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    /// Evaluates `promql` at `at`. A scalar result comes back as one series without labels.
    pub async fn query(&self, promql: &str, at: Timestamp) -> Result<Vec<Series>, PrometheusError> {
        let result = self.evaluate(promql, at).await;
        if let Err(e) = &result {
            self.counters.error(Endpoint::Query, e);
        }
        result
    }

    async fn evaluate(&self, promql: &str, at: Timestamp) -> Result<Vec<Series>, PrometheusError> {
        if promql.trim().is_empty() {
            return Err(PrometheusError::InvalidArguments(
                "the query is empty".to_owned(),
            ));
        }
        let params = [("query", promql.to_owned()), ("time", unix_seconds(at))];
        let data = self.get(Endpoint::Query, &params).await?;
        instant_answer(data)
    }

    /// Evaluates `promql` at every `step` from `start` to `end` (both whole seconds, `end`
    /// included when it falls on a step). Ranges longer than `max_points_per_request` points
    /// are fetched in consecutive pieces and joined per series.
    pub async fn query_range(
        &self,
        promql: &str,
        start: Timestamp,
        end: Timestamp,
        step: Duration,
    ) -> Result<Vec<RangeSeries>, PrometheusError> {
        let result = self.evaluate_range(promql, start, end, step).await;
        if let Err(e) = &result {
            self.counters.error(Endpoint::QueryRange, e);
        }
        result
    }

    async fn evaluate_range(
        &self,
        promql: &str,
        start: Timestamp,
        end: Timestamp,
        step: Duration,
    ) -> Result<Vec<RangeSeries>, PrometheusError> {
        let pieces = split_range(
            start.as_second(),
            end.as_second(),
            step,
            self.max_points_per_request,
        )?;
        if promql.trim().is_empty() {
            return Err(PrometheusError::InvalidArguments(
                "the query is empty".to_owned(),
            ));
        }
        let step_seconds = step.as_secs();
        let mut joined: BTreeMap<BTreeMap<String, String>, RangeSeries> = BTreeMap::new();
        for (from, to) in pieces {
            let params = [
                ("query", promql.to_owned()),
                ("start", from.to_string()),
                ("end", to.to_string()),
                ("step", step_seconds.to_string()),
            ];
            let data = self.get(Endpoint::QueryRange, &params).await?;
            join_range(&mut joined, data)?;
        }
        Ok(joined.into_values().collect())
    }

    /// GETs `endpoint` with `params`, enforcing the size limit, and returns the `data` of a
    /// successful answer or the error Prometheus reported.
    async fn get(
        &self,
        endpoint: Endpoint,
        params: &[(&str, String)],
    ) -> Result<QueryData, PrometheusError> {
        self.counters.request(endpoint);
        let url = format!("{}{}", self.base, endpoint.path());
        let mut request = self.http.get(&url).query(params);
        if let Some(file) = &self.bearer_token_file {
            let token = std::fs::read_to_string(file).map_err(|e| {
                PrometheusError::Config(format!("bearer token file {}: {e}", file.display()))
            })?;
            let mut value = HeaderValue::from_str(&format!("Bearer {}", token.trim()))
                .map_err(|e| PrometheusError::Config(format!("bearer token file: {e}")))?;
            value.set_sensitive(true);
            request = request.header(AUTHORIZATION, value);
        }
        let response = request
            .send()
            .await
            .map_err(|e| self.transport_error(&url, &e))?;
        let status = response.status();
        let body = self.read_limited(&url, response).await?;
        decode_answer(status.as_u16(), &url, &body)
    }

    /// Reads the body, refusing it once it exceeds the limit.
    async fn read_limited(
        &self,
        url: &str,
        mut response: reqwest::Response,
    ) -> Result<Vec<u8>, PrometheusError> {
        let limit = self.max_response_bytes;
        if response
            .content_length()
            .is_some_and(|len| len > limit as u64)
        {
            return Err(PrometheusError::TooLarge { limit });
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| self.transport_error(url, &e))?
        {
            if body.len().saturating_add(chunk.len()) > limit {
                return Err(PrometheusError::TooLarge { limit });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    fn transport_error(&self, url: &str, e: &reqwest::Error) -> PrometheusError {
        if e.is_timeout() {
            return PrometheusError::Timeout {
                url: url.to_owned(),
                timeout: self.timeout,
            };
        }
        // reqwest's top-level message is generic ("error sending request"); the cause chain
        // says what happened ("Connection refused").
        let mut message = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            message = format!("{message}: {s}");
            source = s.source();
        }
        PrometheusError::Unreachable {
            url: url.to_owned(),
            message,
        }
    }
}

/// The pieces `[from, to]` (Unix seconds) a range is fetched in, each at most `max_points`
/// points, each starting one step after the previous one ends.
pub fn split_range(
    start: i64,
    end: i64,
    step: Duration,
    max_points: u64,
) -> Result<Vec<(i64, i64)>, PrometheusError> {
    if step.subsec_nanos() != 0 || step.as_secs() == 0 {
        return Err(PrometheusError::InvalidArguments(format!(
            "the step must be a whole number of seconds, at least 1s (got {step:?})"
        )));
    }
    if start > end {
        return Err(PrometheusError::InvalidArguments(format!(
            "the range starts ({start}) after it ends ({end})"
        )));
    }
    let step = i64::try_from(step.as_secs())
        .map_err(|_| PrometheusError::InvalidArguments("the step is too large".to_owned()))?;
    let per_piece = max_points.saturating_sub(1).max(1);
    let steps = (i128::from(end) - i128::from(start)) / i128::from(step);
    if steps / i128::from(per_piece) >= i128::from(MAX_PIECES) {
        return Err(PrometheusError::InvalidArguments(format!(
            "the range holds {} points per series, more than {MAX_PIECES} requests of {max_points}; use a longer step or a shorter range",
            steps.saturating_add(1)
        )));
    }
    let span = i64::try_from(per_piece)
        .unwrap_or(i64::MAX)
        .saturating_mul(step);
    let mut pieces = Vec::new();
    let mut from = start;
    loop {
        let to = from.saturating_add(span).min(end);
        pieces.push((from, to));
        // The next piece starts at the first step after `to` on the grid of `start`.
        let next = to.saturating_add(step);
        if to >= end || next > end || next <= from {
            break;
        }
        from = next;
    }
    Ok(pieces)
}

fn unix_seconds(at: Timestamp) -> String {
    let ms = at.as_millisecond();
    let (secs, frac) = (ms.div_euclid(1000), ms.rem_euclid(1000));
    format!("{secs}.{frac:03}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use wiremock::matchers::{method, path, query_param};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    fn at(s: i64) -> Timestamp {
        Timestamp::from_second(s).unwrap()
    }

    async fn client(server: &MockServer, options: PrometheusOptions) -> PrometheusClient {
        PrometheusClient::new(&server.uri(), options).unwrap()
    }

    fn success(data: serde_json::Value) -> ResponseTemplate {
        ResponseTemplate::new(200)
            .set_body_json(serde_json::json!({"status": "success", "data": data}))
    }

    #[tokio::test]
    async fn reads_a_vector_with_labels_and_the_sample_time() {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/api/v1/query"))
            .and(query_param("query", "sum(up)"))
            .and(query_param("time", "1700000000.500"))
            .respond_with(success(serde_json::json!({
                "resultType": "vector",
                "result": [{"metric": {"job": "web"}, "value": [1700000000.5, "2.25"]}]
            })))
            .expect(1)
            .mount(&server)
            .await;
        let c = client(&server, PrometheusOptions::default()).await;
        let t = Timestamp::from_millisecond(1_700_000_000_500).unwrap();
        let series = c.query("sum(up)", t).await.unwrap();
        assert_eq!(series.len(), 1);
        assert_eq!(series[0].labels.get("job").map(String::as_str), Some("web"));
        assert_eq!(series[0].value, 2.25);
        assert_eq!(series[0].timestamp, t);
    }

    #[tokio::test]
    async fn reads_a_scalar_as_one_unlabelled_series() {
        let server = MockServer::start().await;
        Mock::given(path("/api/v1/query"))
            .respond_with(success(serde_json::json!({
                "resultType": "scalar", "result": [1700000000, "42"]
            })))
            .mount(&server)
            .await;
        let c = client(&server, PrometheusOptions::default()).await;
        let series = c.query("42", at(1_700_000_000)).await.unwrap();
        assert_eq!(series.len(), 1);
        assert!(series[0].labels.is_empty());
        assert_eq!(series[0].value, 42.0);
    }

    #[tokio::test]
    async fn nan_and_infinity_are_errors_naming_the_series() {
        let server = MockServer::start().await;
        Mock::given(path("/api/v1/query"))
            .respond_with(success(serde_json::json!({
                "resultType": "vector",
                "result": [{"metric": {"pod": "a"}, "value": [1, "NaN"]}]
            })))
            .mount(&server)
            .await;
        let c = client(&server, PrometheusOptions::default()).await;
        let err = c.query("x", at(1)).await.unwrap_err();
        assert_eq!(
            err,
            PrometheusError::NonFinite {
                series: "{pod=\"a\"}".to_owned(),
                value: "NaN".to_owned()
            }
        );
        let server = MockServer::start().await;
        Mock::given(path("/api/v1/query"))
            .respond_with(success(serde_json::json!({
                "resultType": "scalar", "result": [1, "+Inf"]
            })))
            .mount(&server)
            .await;
        let c = client(&server, PrometheusOptions::default()).await;
        assert!(matches!(
            c.query("x", at(1)).await,
            Err(PrometheusError::NonFinite { .. })
        ));
    }

    #[tokio::test]
    async fn prometheus_errors_keep_their_type_and_message() {
        let server = MockServer::start().await;
        Mock::given(path("/api/v1/query"))
            .respond_with(ResponseTemplate::new(400).set_body_json(serde_json::json!({
                "status": "error", "errorType": "bad_data",
                "error": "1:5: parse error: unexpected end of input"
            })))
            .mount(&server)
            .await;
        let c = client(&server, PrometheusOptions::default()).await;
        let err = c.query("sum(", at(1)).await.unwrap_err();
        assert_eq!(
            err,
            PrometheusError::Query {
                error_type: "bad_data".to_owned(),
                error: "1:5: parse error: unexpected end of input".to_owned()
            }
        );
        assert!(err.to_string().contains("bad_data"), "{err}");
    }

    #[tokio::test]
    async fn http_errors_without_a_prometheus_body_report_the_status() {
        let server = MockServer::start().await;
        Mock::given(path("/api/v1/query"))
            .respond_with(ResponseTemplate::new(502).set_body_string("bad gateway"))
            .mount(&server)
            .await;
        let c = client(&server, PrometheusOptions::default()).await;
        match c.query("up", at(1)).await.unwrap_err() {
            PrometheusError::Http { status, body, .. } => {
                assert_eq!(status, 502);
                assert_eq!(body, "bad gateway");
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[tokio::test]
    async fn malformed_answers_are_bad_payloads() {
        for body in [
            serde_json::json!({"status": "success"}),
            serde_json::json!({"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}, "value": [1, "abc"]}]}}),
            serde_json::json!({"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}, "value": ["x", "1"]}]}}),
            serde_json::json!({"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}}]}}),
            serde_json::json!({"status": "success", "data": {"resultType": "string", "result": [1, "a"]}}),
            serde_json::json!({"status": "success", "data": {"resultType": "matrix", "result": []}}),
            serde_json::json!({"status": "success", "data": {"resultType": "histogram", "result": []}}),
            serde_json::json!([1, 2]),
        ] {
            let server = MockServer::start().await;
            Mock::given(path("/api/v1/query"))
                .respond_with(ResponseTemplate::new(200).set_body_json(body.clone()))
                .mount(&server)
                .await;
            let c = client(&server, PrometheusOptions::default()).await;
            let err = c.query("up", at(1)).await.unwrap_err();
            assert!(
                matches!(err, PrometheusError::BadPayload(_)),
                "{body}: {err:?}"
            );
        }
        let server = MockServer::start().await;
        Mock::given(path("/api/v1/query"))
            .respond_with(ResponseTemplate::new(200).set_body_string("<html>"))
            .mount(&server)
            .await;
        let c = client(&server, PrometheusOptions::default()).await;
        let err = c.query("up", at(1)).await.unwrap_err();
        assert!(err.to_string().contains("<html>"), "{err}");
    }

    #[tokio::test]
    async fn refuses_answers_over_the_size_limit() {
        let server = MockServer::start().await;
        let big = "x".repeat(5000);
        Mock::given(path("/api/v1/query"))
            .respond_with(success(serde_json::json!({
                "resultType": "vector",
                "result": [{"metric": {"a": big}, "value": [1, "1"]}]
            })))
            .mount(&server)
            .await;
        let options = PrometheusOptions {
            max_response_bytes: 1024,
            ..Default::default()
        };
        let c = client(&server, options).await;
        assert_eq!(
            c.query("up", at(1)).await.unwrap_err(),
            PrometheusError::TooLarge { limit: 1024 }
        );
    }

    #[tokio::test]
    async fn sends_the_bearer_token_and_extra_headers() {
        let server = MockServer::start().await;
        Mock::given(path("/api/v1/query"))
            .and(wiremock::matchers::header("authorization", "Bearer s3cret"))
            .and(wiremock::matchers::header("x-scope-orgid", "tenant-a"))
            .respond_with(success(
                serde_json::json!({"resultType": "vector", "result": []}),
            ))
            .expect(1)
            .mount(&server)
            .await;
        let options = PrometheusOptions {
            bearer_token: Some("s3cret\n".to_owned()),
            headers: vec![("X-Scope-OrgID".to_owned(), "tenant-a".to_owned())],
            ..Default::default()
        };
        let c = client(&server, options).await;
        assert_eq!(c.query("up", at(1)).await.unwrap(), vec![]);
        assert!(!format!("{c:?}").contains("s3cret"));
    }

    #[tokio::test]
    async fn reads_the_token_file_for_every_request() {
        let server = MockServer::start().await;
        for token in ["first", "second"] {
            Mock::given(path("/api/v1/query"))
                .and(wiremock::matchers::header(
                    "authorization",
                    format!("Bearer {token}").as_str(),
                ))
                .respond_with(success(
                    serde_json::json!({"resultType": "vector", "result": []}),
                ))
                .expect(1)
                .mount(&server)
                .await;
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        let options = PrometheusOptions {
            bearer_token: Some("ignored".to_owned()),
            bearer_token_file: Some(file.clone()),
            ..Default::default()
        };
        let c = client(&server, options).await;
        assert!(matches!(
            c.query("up", at(1)).await,
            Err(PrometheusError::Config(_))
        ));
        std::fs::write(&file, "first\n").unwrap();
        c.query("up", at(1)).await.unwrap();
        std::fs::write(&file, "second").unwrap();
        c.query("up", at(1)).await.unwrap();
    }

    #[tokio::test]
    async fn honours_a_path_prefix_in_the_base_url() {
        let server = MockServer::start().await;
        Mock::given(path("/prom/api/v1/query"))
            .respond_with(success(
                serde_json::json!({"resultType": "vector", "result": []}),
            ))
            .expect(1)
            .mount(&server)
            .await;
        let c = PrometheusClient::new(
            &format!("{}/prom/", server.uri()),
            PrometheusOptions::default(),
        )
        .unwrap();
        c.query("up", at(1)).await.unwrap();
    }

    #[tokio::test]
    async fn a_slow_server_times_out() {
        let server = MockServer::start().await;
        Mock::given(path("/api/v1/query"))
            .respond_with(
                success(serde_json::json!({"resultType": "vector", "result": []}))
                    .set_delay(Duration::from_secs(5)),
            )
            .mount(&server)
            .await;
        let options = PrometheusOptions {
            timeout: Duration::from_millis(200),
            ..Default::default()
        };
        let c = client(&server, options).await;
        assert!(matches!(
            c.query("up", at(1)).await.unwrap_err(),
            PrometheusError::Timeout { .. }
        ));
    }

    #[tokio::test]
    async fn a_closed_port_is_unreachable() {
        // Bind a port, then free it: nothing listens there any more.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let c = PrometheusClient::new(
            &format!("http://127.0.0.1:{port}"),
            PrometheusOptions::default(),
        )
        .unwrap();
        let err = c.query("up", at(1)).await.unwrap_err();
        assert!(
            matches!(err, PrometheusError::Unreachable { .. }),
            "{err:?}"
        );
    }

    #[test]
    fn rejects_bad_settings() {
        for url in ["not a url", "ftp://x", ""] {
            assert!(matches!(
                PrometheusClient::new(url, PrometheusOptions::default()),
                Err(PrometheusError::Config(_))
            ));
        }
        let bad_header = PrometheusOptions {
            headers: vec![("bad header".to_owned(), "v".to_owned())],
            ..Default::default()
        };
        assert!(PrometheusClient::new("http://x", bad_header).is_err());
        let bad_ca = PrometheusOptions {
            ca_certificates_pem: Some(b"-----BEGIN CERTIFICATE-----\nnope\n".to_vec()),
            ..Default::default()
        };
        assert!(PrometheusClient::new("http://x", bad_ca).is_err());
    }

    #[tokio::test]
    async fn range_queries_are_split_and_joined_per_series() {
        let server = MockServer::start().await;
        // 0..=500 at step 100 is 6 points; with 3 points per request: [0,200], [300,500].
        for (start, end, values) in [
            ("0", "200", vec![(0, "1"), (100, "2"), (200, "NaN")]),
            ("300", "500", vec![(300, "4"), (400, "5"), (500, "6")]),
        ] {
            let values: Vec<serde_json::Value> = values
                .into_iter()
                .map(|(t, v)| serde_json::json!([t, v]))
                .collect();
            Mock::given(path("/api/v1/query_range"))
                .and(query_param("start", start))
                .and(query_param("end", end))
                .and(query_param("step", "100"))
                .respond_with(success(serde_json::json!({
                    "resultType": "matrix",
                    "result": [
                        {"metric": {"pod": "a"}, "values": values},
                        {"metric": {"pod": "b"}, "values": [[start.parse::<i64>().unwrap(), "9"]]}
                    ]
                })))
                .expect(1)
                .mount(&server)
                .await;
        }
        let options = PrometheusOptions {
            max_points_per_request: 3,
            ..Default::default()
        };
        let c = client(&server, options).await;
        let series = c
            .query_range("x", at(0), at(500), Duration::from_secs(100))
            .await
            .unwrap();
        assert_eq!(series.len(), 2);
        let a = &series[0];
        assert_eq!(a.labels.get("pod").map(String::as_str), Some("a"));
        let ts: Vec<i64> = a.points.iter().map(|p| p.ts).collect();
        assert_eq!(ts, vec![0, 100, 300, 400, 500]);
        assert_eq!(a.non_finite_dropped, 1);
        assert_eq!(series[1].points.len(), 2);
        // Two HTTP requests for one range query, none failed.
        let stats = c.request_stats();
        assert_eq!(stats.requests[&Endpoint::QueryRange], 2);
        assert_eq!(stats.requests[&Endpoint::Query], 0);
        assert!(stats.errors.is_empty(), "{stats:?}");
    }

    #[tokio::test]
    async fn failed_queries_are_counted_by_endpoint_and_kind_across_clones() {
        let server = MockServer::start().await;
        Mock::given(path("/api/v1/query"))
            .respond_with(ResponseTemplate::new(503).set_body_string("unavailable"))
            .mount(&server)
            .await;
        Mock::given(path("/api/v1/query_range"))
            .respond_with(success(
                serde_json::json!({"resultType": "vector", "result": []}),
            ))
            .mount(&server)
            .await;
        let c = client(&server, PrometheusOptions::default()).await;
        let clone = c.clone();
        assert!(c.query("up", at(1)).await.is_err());
        assert!(clone.query("up", at(2)).await.is_err());
        assert!(clone
            .query_range("up", at(0), at(60), Duration::from_secs(60))
            .await
            .is_err());
        // An empty query is refused before any request is sent, and still counted as failed.
        assert!(c.query(" ", at(3)).await.is_err());
        let stats = c.request_stats();
        assert_eq!(stats.requests[&Endpoint::Query], 2);
        assert_eq!(stats.requests[&Endpoint::QueryRange], 1);
        assert_eq!(
            stats.errors,
            BTreeMap::from([
                ((Endpoint::Query, "http"), 2),
                ((Endpoint::Query, "invalid_arguments"), 1),
                ((Endpoint::QueryRange, "bad_payload"), 1),
            ])
        );
    }

    #[test]
    fn options_do_not_print_credentials() {
        let options = PrometheusOptions {
            bearer_token: Some("s3cret-token".to_owned()),
            headers: vec![("X-Scope-OrgID".to_owned(), "tenant-secret".to_owned())],
            ..Default::default()
        };
        let text = format!("{options:?}");
        assert!(
            !text.contains("s3cret") && !text.contains("tenant-secret"),
            "{text}"
        );
        assert!(
            text.contains("X-Scope-OrgID") && text.contains("<redacted>"),
            "{text}"
        );
    }

    #[tokio::test]
    async fn a_range_query_answering_a_vector_is_a_bad_payload() {
        let server = MockServer::start().await;
        Mock::given(path("/api/v1/query_range"))
            .respond_with(success(
                serde_json::json!({"resultType": "vector", "result": []}),
            ))
            .mount(&server)
            .await;
        let c = client(&server, PrometheusOptions::default()).await;
        assert!(matches!(
            c.query_range("x", at(0), at(60), Duration::from_secs(60))
                .await
                .unwrap_err(),
            PrometheusError::BadPayload(_)
        ));
    }

    #[tokio::test]
    async fn rejects_meaningless_arguments_without_asking() {
        let c = PrometheusClient::new("http://127.0.0.1:9", PrometheusOptions::default()).unwrap();
        for (q, s, e, step) in [
            ("x", 10, 0, 60),
            ("x", 0, 10, 0),
            ("", 0, 10, 60),
            ("  ", 0, 10, 60),
        ] {
            assert!(matches!(
                c.query_range(q, at(s), at(e), Duration::from_secs(step))
                    .await
                    .unwrap_err(),
                PrometheusError::InvalidArguments(_)
            ));
        }
        assert!(matches!(
            c.query_range("x", at(0), at(10), Duration::from_millis(1500))
                .await
                .unwrap_err(),
            PrometheusError::InvalidArguments(_)
        ));
        assert!(matches!(
            c.query("", at(0)).await.unwrap_err(),
            PrometheusError::InvalidArguments(_)
        ));
    }

    #[test]
    fn split_range_covers_every_step_exactly_once() {
        let step = Duration::from_secs(60);
        assert_eq!(split_range(0, 0, step, 11_000).unwrap(), vec![(0, 0)]);
        assert_eq!(split_range(0, 59, step, 11_000).unwrap(), vec![(0, 59)]);
        // 15 days at 1m = 21,601 points: 11,000 then 10,601.
        let end = 15 * 86_400;
        let pieces = split_range(0, end, step, 11_000).unwrap();
        assert_eq!(pieces, vec![(0, 659_940), (660_000, end)]);
        // 30 days: 43,201 points in four requests.
        assert_eq!(split_range(0, 2 * end, step, 11_000).unwrap().len(), 4);
        for (from, to) in &pieces {
            assert!((to - from) / 60 < 11_000);
        }
        // A range that would need more than MAX_PIECES requests is refused up front.
        assert!(matches!(
            split_range(i64::MIN / 2, i64::MAX / 2, Duration::from_secs(1), 2),
            Err(PrometheusError::InvalidArguments(_))
        ));
        assert!(split_range(0, 999 * 10, Duration::from_secs(1), 11).is_ok());
        assert!(split_range(0, 1000 * 10, Duration::from_secs(1), 11).is_err());
    }

    #[test]
    fn split_range_property_no_gaps_no_overlaps() {
        for (start, end, step, max) in [
            (0i64, 1000i64, 7u64, 5u64),
            (13, 1313, 10, 11),
            (5, 6, 1, 2),
            (-100, 100, 3, 4),
        ] {
            let pieces = split_range(start, end, Duration::from_secs(step), max).unwrap();
            let mut expected = start;
            for (from, to) in &pieces {
                assert_eq!(*from, expected);
                assert!(to >= from && *to <= end);
                assert!(((to - from) / step as i64) < max as i64);
                expected = to + step as i64;
            }
            assert!(expected > end);
        }
    }
}
