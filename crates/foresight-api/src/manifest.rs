//! Reading manifests: YAML or JSON files holding one or several documents.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::hpa::{
    CrossVersionObjectReference, HorizontalPodAutoscaler, HorizontalPodAutoscalerSpec, MetricSpec,
    MetricTarget, ObjectMeta, ResourceMetricSource,
};
use crate::spec::{EffectiveHorizontalPodAutoscalerSpec, API_VERSION, KIND};
use crate::status::EffectiveHorizontalPodAutoscalerStatus;
use crate::validation::FieldError;

/// An autoscaler as written in a manifest file, of either kind this crate reads
/// ([`ForesightObject`], [`HorizontalPodAutoscaler`]): the envelope every object has, with
/// its spec and status typed. This is what the offline tools (validate, import, the simulator,
/// snapshots) read, and it needs no Kubernetes crate; the resource the API server serves and
/// the controller watches is the one derived from the spec (`EffectiveHorizontalPodAutoscaler`,
/// with the `kube` feature).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Object<S, St> {
    /// `apiVersion`, as written.
    #[serde(default)]
    pub api_version: String,
    /// `kind`, as written.
    #[serde(default)]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(default)]
    pub spec: S,
    /// Status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<St>,
}

/// A Foresight EffectiveHorizontalPodAutoscaler read from (or written to) a manifest.
pub type ForesightObject =
    Object<EffectiveHorizontalPodAutoscalerSpec, EffectiveHorizontalPodAutoscalerStatus>;

impl ForesightObject {
    /// A new object of Foresight's kind, at its served version.
    pub fn foresight(metadata: ObjectMeta, spec: EffectiveHorizontalPodAutoscalerSpec) -> Self {
        Object {
            api_version: API_VERSION.to_owned(),
            kind: KIND.to_owned(),
            metadata,
            spec,
            status: None,
        }
    }
}

/// A file that is not well-formed YAML or JSON.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", location.map(|(l, c)| format!("line {l}, column {c}: ")).unwrap_or_default())]
pub struct SyntaxError {
    /// 1-based line and column, when the parser knows them.
    pub location: Option<(u64, u64)>,
    /// What is wrong.
    pub message: String,
}

/// Splits a YAML or JSON text into its documents. Empty documents (a stray `---`) are dropped,
/// and the items of a `kind: List` (what `kubectl get -o yaml` prints for several objects)
/// become documents of their own.
pub fn parse_documents(text: &str) -> Result<Vec<serde_json::Value>, SyntaxError> {
    let trimmed = text.trim_start();
    let documents = if trimmed.starts_with('{') || trimmed.starts_with('[') {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| SyntaxError {
            location: Some((e.line() as u64, e.column() as u64)),
            message: match plain_message(&e.to_string()) {
                m if m == "recursion limit exceeded" => too_deep(JSON_DEPTH),
                m => m,
            },
        })?;
        match value {
            serde_json::Value::Array(items) => items,
            other => vec![other],
        }
    } else {
        serde_saphyr::from_multiple(text).map_err(|e| SyntaxError {
            location: e.location().map(|l| (l.line(), l.column())),
            message: yaml_message(&e),
        })?
    };
    Ok(documents
        .into_iter()
        .flat_map(list_items)
        .filter(|d| !d.is_null())
        .collect())
}

/// How deep serde_json lets a document nest.
const JSON_DEPTH: usize = 128;

/// A YAML reader's error in the project's words: its limits on size and nesting (which
/// keep alias bombs and runaway nesting from exhausting memory) and its refusal of NaN are
/// said as what they mean for the file, not as the library's internal names.
fn yaml_message(error: &serde_saphyr::Error) -> String {
    use serde_saphyr::budget::BudgetBreach;
    // The reader wraps what went wrong in where (a snippet, the alias it came through).
    let mut cause = error;
    while let serde_saphyr::Error::WithSnippet { error, .. }
    | serde_saphyr::Error::AliasError { error, .. } = cause
    {
        cause = error;
    }
    match cause {
        serde_saphyr::Error::Budget { breach, .. } => match breach {
            BudgetBreach::Depth { depth } => too_deep(depth.saturating_sub(1)),
            BudgetBreach::Aliases { .. }
            | BudgetBreach::Anchors { .. }
            | BudgetBreach::AliasAnchorRatio { .. }
            | BudgetBreach::RecordedAnchorEvents { .. }
            | BudgetBreach::RecordedAnchorBytes { .. }
            | BudgetBreach::MergeKeys { .. } => "the document repeats itself through too many \
                 YAML aliases (`*name`) to be read; no manifest needs that many (is it an alias \
                 bomb?)"
                .to_owned(),
            BudgetBreach::Documents { documents } => {
                format!(
                    "too many documents (more than {}) in one file",
                    documents.saturating_sub(1)
                )
            }
            _ => "the document is too large to be read, its aliases (`*name`) expanded; no \
                  manifest is that large (is it an alias bomb?)"
                .to_owned(),
        },
        serde_saphyr::Error::NonFiniteFloat { value, .. } => format!(
            "{value} is not a number any field accepts: NaN and infinity cannot be stored in a \
             Kubernetes object; write a finite number"
        ),
        _ => plain_message(&error.to_string()),
    }
}

/// A document nested deeper than `limit` lists and mappings, in words.
fn too_deep(limit: usize) -> String {
    format!(
        "the document is nested too deeply (more than {limit} levels of lists and mappings); \
         no manifest is nested that deep"
    )
}

/// The items of a `v1 List` (or `*List`) document, or the document itself.
fn list_items(document: serde_json::Value) -> Vec<serde_json::Value> {
    let is_list = document
        .get("kind")
        .and_then(|k| k.as_str())
        .is_some_and(|k| k == "List" || k.ends_with("List"))
        && document.get("items").is_some_and(|i| i.is_array());
    match document {
        serde_json::Value::Object(mut fields) if is_list => match fields.remove("items") {
            Some(serde_json::Value::Array(items)) => items,
            _ => Vec::new(),
        },
        other => vec![other],
    }
}

/// A parser's message in the project's words: its first line, without the location it
/// repeats (the caller prints it once), advice addressed to the parser's programmer, or Rust
/// type names.
fn plain_message(message: &str) -> String {
    let mut m = first_line(message);
    if let Some(rest) = m.strip_prefix("error: ") {
        m = rest.to_owned();
    }
    // "line 2 column 4: ..." (serde-saphyr) and "... at line 2 column 4" (serde_json).
    if let Some(rest) = m.strip_prefix("line ") {
        if let Some((_, after)) = rest.split_once(": ") {
            m = after.to_owned();
        }
    }
    if let Some(at) = m.find(" at line ") {
        m.truncate(at);
    }
    if let Some(at) = m.find(", set DuplicateKeyPolicy") {
        m.truncate(at);
    }
    if let Some(words) = integer_out_of_range(&m) {
        return words;
    }
    // jiff's words for a time it cannot read ("failed to parse two digit integer as month:
    // parameter 'month' is not in the required range of 1..=12").
    if [
        "failed to parse ",
        "failed to find ",
        "failed to convert civil datetime",
    ]
    .iter()
    .any(|p| m.starts_with(p))
    {
        return "not a time: write RFC 3339 with its offset, e.g. 2026-03-02T14:00:00Z (years \
                from -9999 to 9999)"
            .to_owned();
    }
    if let Some(key) = m.strip_prefix("duplicate mapping key: ") {
        m = format!("the key {key:?} appears twice in one mapping");
    }
    for (rust, words) in [
        ("i8", "an integer"),
        ("i16", "an integer"),
        ("i32", "an integer"),
        ("i64", "an integer"),
        ("u8", "a non-negative integer"),
        ("u16", "a non-negative integer"),
        ("u32", "a non-negative integer"),
        ("u64", "a non-negative integer"),
        ("f32", "a number"),
        ("f64", "a number"),
        ("a sequence", "a list"),
        ("a borrowed string", "a string"),
    ] {
        if let Some(head) = m.strip_suffix(&format!("expected {rust}")) {
            m = format!("{head}expected {words}");
        }
    }
    m.replace("invalid type: ", "wrong type: ")
}

/// serde's "invalid value: integer `N`, expected i32" (a number too large for the field) or
/// "invalid type: floating point `1e20`, expected i32" (a number too large for any integer,
/// or a fraction) as the range the field takes.
fn integer_out_of_range(message: &str) -> Option<String> {
    let (number, rust) = message
        .strip_prefix("invalid value: integer `")
        .or_else(|| message.strip_prefix("invalid type: floating point `"))?
        .split_once("`, expected ")?;
    let (min, max): (i128, i128) = match rust {
        "i8" => (i8::MIN.into(), i8::MAX.into()),
        "i16" => (i16::MIN.into(), i16::MAX.into()),
        "i32" => (i32::MIN.into(), i32::MAX.into()),
        "i64" => (i64::MIN.into(), i64::MAX.into()),
        "u8" => (0, u8::MAX.into()),
        "u16" => (0, u16::MAX.into()),
        "u32" => (0, u32::MAX.into()),
        "u64" => (0, u64::MAX.into()),
        _ => return None,
    };
    let value: f64 = number.parse().ok()?;
    if value.fract() != 0.0 {
        return Some(format!("{number} is not a whole number"));
    }
    Some(if value > 0.0 {
        format!("{number} is out of range: at most {max}")
    } else if min == 0 {
        format!("{number} is out of range: must be 0 or more")
    } else {
        format!("{number} is out of range: at least {min}")
    })
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or(s).to_owned()
}

/// Deserializes a document into `T`; a type mismatch is reported at its field path.
pub fn from_value<T: DeserializeOwned>(
    value: &serde_json::Value,
    root: &str,
) -> Result<T, FieldError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let mut field = match path.as_str() {
            "." | "" => root.to_owned(),
            p if root.is_empty() => p.to_owned(),
            p => format!("{root}.{p}"),
        };
        let message = plain_message(&e.into_inner().to_string());
        // serde reports a missing field at its parent; name the field itself.
        if let Some(name) = message
            .strip_prefix("missing field `")
            .and_then(|m| m.strip_suffix('`'))
        {
            if !field.is_empty() {
                field.push('.');
            }
            field.push_str(name);
            return FieldError::required(field, "");
        }
        FieldError {
            field,
            type_: crate::validation::ErrorType::FieldValueInvalid,
            value: None,
            detail: message,
        }
    })
}

/// The fields an autoscaler's schema requires that `document` lacks, as the API server
/// reports them (`spec.maxReplicas: Required value`). The typed reading gives a missing
/// count its default (0), which validation would otherwise report as an invalid 0, and
/// more than once.
pub fn missing_required(document: &serde_json::Value) -> Vec<FieldError> {
    let spec = document.get("spec");
    ["maxReplicas"]
        .into_iter()
        .filter(|field| spec.and_then(|s| s.get(field)).is_none())
        .map(|field| FieldError::required(format!("spec.{field}"), ""))
        .collect()
}

/// What a document is.
#[derive(Clone, Debug, PartialEq)]
pub enum Document {
    /// Foresight's own EffectiveHorizontalPodAutoscaler.
    Foresight(Box<ForesightObject>),
    /// A native autoscaling/v2 HorizontalPodAutoscaler.
    Hpa(Box<HorizontalPodAutoscaler>),
    /// Crane's `autoscaling.crane.io/v1alpha1` EffectiveHorizontalPodAutoscaler, raw.
    Crane(serde_json::Value),
    /// KEDA's `keda.sh/v1alpha1` ScaledObject, raw.
    Keda(serde_json::Value),
    /// Anything else.
    Other {
        /// Its `apiVersion`.
        api_version: String,
        /// Its `kind`.
        kind: String,
    },
}

/// Recognises a document by `apiVersion` and `kind`, and reads it into the matching type.
/// autoscaling/v1 HPAs are converted to v2 as the API server converts them; v2beta2 (same
/// shape, no longer served) is read as v2; see [`served`] for what a cluster accepts.
pub fn classify(value: &serde_json::Value) -> Result<Document, FieldError> {
    let api_version = value
        .get("apiVersion")
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_owned();
    let kind = value
        .get("kind")
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_owned();
    let (group, version) = api_version.split_once('/').unwrap_or(("", &api_version));
    match (group, version, kind.as_str()) {
        ("autoscaling.foresight.dev", _, KIND) => {
            served(&api_version, &kind)?;
            Ok(Document::Foresight(Box::new(from_value(value, "")?)))
        }
        ("autoscaling", "v1", "HorizontalPodAutoscaler") => {
            Ok(Document::Hpa(Box::new(hpa_from_v1(value)?)))
        }
        ("autoscaling", "v2beta1", "HorizontalPodAutoscaler") => Err(FieldError::invalid(
            "apiVersion",
            &api_version,
            "autoscaling/v2beta1 metrics have another shape; read the object back as \
             autoscaling/v2 (kubectl get hpa NAME -o yaml) and use that",
        )),
        ("autoscaling", _, "HorizontalPodAutoscaler") => {
            Ok(Document::Hpa(Box::new(from_value(value, "")?)))
        }
        ("autoscaling.crane.io", _, "EffectiveHorizontalPodAutoscaler") => {
            Ok(Document::Crane(value.clone()))
        }
        ("keda.sh", _, "ScaledObject") => Ok(Document::Keda(value.clone())),
        _ => Ok(Document::Other { api_version, kind }),
    }
}

/// Whether a Kubernetes 1.28 cluster with Foresight's CRD serves this `apiVersion` for an
/// autoscaler `kind`: Foresight serves only `v1alpha1`; Kubernetes serves HPAs as
/// `autoscaling/v1` and `v2` (v2beta2 was removed in 1.26, v2beta1 in 1.25).
pub fn served(api_version: &str, kind: &str) -> Result<(), FieldError> {
    let supported: &[&str] = match kind {
        KIND if api_version.starts_with("autoscaling.foresight.dev/") => &[API_VERSION],
        "HorizontalPodAutoscaler" if api_version.starts_with("autoscaling/") => {
            &["autoscaling/v2", "autoscaling/v1"]
        }
        _ => return Ok(()),
    };
    if supported.contains(&api_version) {
        Ok(())
    } else {
        Err(FieldError::not_supported(
            "apiVersion",
            api_version,
            supported,
        ))
    }
}

/// An autoscaling/v1 HPA as v2: `targetCPUUtilizationPercentage` becomes a CPU Utilization
/// metric, exactly as the API server converts it.
fn hpa_from_v1(value: &serde_json::Value) -> Result<HorizontalPodAutoscaler, FieldError> {
    #[derive(Deserialize, Default)]
    #[serde(rename_all = "camelCase")]
    struct V1Spec {
        #[serde(default)]
        scale_target_ref: CrossVersionObjectReference,
        #[serde(default)]
        min_replicas: Option<i32>,
        #[serde(default)]
        max_replicas: i32,
        #[serde(default, rename = "targetCPUUtilizationPercentage")]
        target_cpu_utilization_percentage: Option<i32>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct V1 {
        #[serde(default)]
        api_version: String,
        #[serde(default)]
        kind: String,
        #[serde(default)]
        metadata: ObjectMeta,
        #[serde(default)]
        spec: V1Spec,
    }
    let v1: V1 = from_value(value, "")?;
    let metrics = v1.spec.target_cpu_utilization_percentage.map(|pct| {
        vec![MetricSpec {
            type_: "Resource".to_owned(),
            resource: Some(ResourceMetricSource {
                name: "cpu".to_owned(),
                target: MetricTarget {
                    type_: "Utilization".to_owned(),
                    average_utilization: Some(pct),
                    ..Default::default()
                },
            }),
            ..Default::default()
        }]
    });
    Ok(HorizontalPodAutoscaler {
        api_version: v1.api_version,
        kind: v1.kind,
        metadata: v1.metadata,
        spec: HorizontalPodAutoscalerSpec {
            scale_target_ref: v1.spec.scale_target_ref,
            min_replicas: v1.spec.min_replicas,
            max_replicas: v1.spec.max_replicas,
            metrics,
            behavior: None,
        },
        status: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_yaml_documents() {
        let docs = parse_documents("a: 1\n---\nb: 2\n---\n").unwrap();
        assert_eq!(docs.len(), 2);
    }

    #[test]
    fn reports_line_and_column() {
        let err = parse_documents("spec:\n  maxReplicas: [1,\n  other: }\n").unwrap_err();
        assert!(err.location.is_some(), "{err}");
    }

    #[test]
    fn a_missing_max_replicas_is_required() {
        let missing = missing_required(&serde_json::json!({"spec": {"minReplicas": 2}}));
        assert_eq!(missing.len(), 1);
        assert_eq!(missing[0].to_string(), "spec.maxReplicas: Required value");
        assert!(missing_required(&serde_json::json!({"spec": {"maxReplicas": 0}})).is_empty());
    }

    #[test]
    fn numbers_past_a_field_s_range_say_the_range() {
        for (yaml, want) in [
            (
                "4294967296",
                "4294967296 is out of range: at most 2147483647",
            ),
            (
                "-4294967296",
                "-4294967296 is out of range: at least -2147483648",
            ),
            ("1.5", "1.5 is not a whole number"),
        ] {
            let docs = parse_documents(&format!("spec:\n  maxReplicas: {yaml}\n")).unwrap();
            let err = from_value::<ForesightObject>(&docs[0], "").unwrap_err();
            assert_eq!(err.field, "spec.maxReplicas");
            assert_eq!(err.detail, want, "{yaml}");
        }
    }

    #[test]
    fn alias_bombs_deep_nesting_and_nan_are_said_in_words() {
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for (i, name) in ["b", "c", "d", "e", "f", "g", "h", "i"].iter().enumerate() {
            let prev = ["a", "b", "c", "d", "e", "f", "g", "h"][i];
            let list = vec![format!("*{prev}"); 10].join(", ");
            bomb.push_str(&format!("{name}: &{name} [{list}]\n"));
        }
        let err = parse_documents(&bomb).unwrap_err();
        assert!(err.message.contains("alias bomb"), "{err}");
        assert!(!err.message.contains("budget"), "{err}");
        let deep = format!("a: {}{}\n", "[".repeat(200), "]".repeat(200));
        let err = parse_documents(&deep).unwrap_err();
        assert!(err.message.contains("nested too deeply"), "{err}");
        assert!(!err.message.contains("Depth"), "{err}");
        let err = parse_documents(&format!("{}{}", "[".repeat(200), "]".repeat(200))).unwrap_err();
        assert!(err.message.contains("nested too deeply"), "{err}");
        let err = parse_documents("spec:\n  minReplicas: .nan\n").unwrap_err();
        assert_eq!(err.location, Some((2, 16)), "{err}");
        assert!(
            err.message
                .starts_with(".nan is not a number any field accepts"),
            "{err}"
        );
        assert!(!err.message.contains("policy"), "{err}");
    }

    #[test]
    fn times_that_cannot_be_read_say_how_to_write_one() {
        #[derive(Debug, serde::Deserialize)]
        struct At {
            #[allow(dead_code)]
            now: jiff::Timestamp,
        }
        for text in [
            "yesterday",
            "2026-13-01T00:00:00Z",
            "2026-03-02",
            "99999-01-01T00:00:00Z",
        ] {
            let err = from_value::<At>(&serde_json::json!({"now": text}), "").unwrap_err();
            assert_eq!(err.field, "now");
            assert!(
                err.detail.starts_with("not a time: write RFC 3339"),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn type_errors_name_the_field() {
        let v: serde_json::Value = serde_json::json!({"spec": {"maxReplicas": "ten"}});
        let err = from_value::<ForesightObject>(&v, "").unwrap_err();
        assert_eq!(err.field, "spec.maxReplicas");
    }
}
