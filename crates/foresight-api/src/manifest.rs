//! Reading manifests: YAML or JSON files holding one or several documents.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::hpa::{HorizontalPodAutoscaler, ObjectMeta};
use crate::spec::{EffectiveHorizontalPodAutoscalerSpec, API_VERSION, KIND};
use crate::status::EffectiveHorizontalPodAutoscalerStatus;
use crate::validation::FieldError;

/// An EffectiveHorizontalPodAutoscaler as written in a manifest.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EffectiveHorizontalPodAutoscaler {
    /// `autoscaling.foresight.dev/v1alpha1`.
    #[serde(default = "default_api_version")]
    pub api_version: String,
    /// `EffectiveHorizontalPodAutoscaler`.
    #[serde(default = "default_kind")]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(default)]
    pub spec: EffectiveHorizontalPodAutoscalerSpec,
    /// Status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<EffectiveHorizontalPodAutoscalerStatus>,
}

fn default_api_version() -> String {
    API_VERSION.to_owned()
}

fn default_kind() -> String {
    KIND.to_owned()
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

/// Splits a YAML or JSON text into its documents. Empty documents (a stray `---`) are dropped.
pub fn parse_documents(text: &str) -> Result<Vec<serde_json::Value>, SyntaxError> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| SyntaxError {
            location: Some((e.line() as u64, e.column() as u64)),
            message: e.to_string(),
        })?;
        return Ok(match value {
            serde_json::Value::Array(items) => items,
            other => vec![other],
        });
    }
    let docs: Vec<serde_json::Value> =
        serde_saphyr::from_multiple(text).map_err(|e| SyntaxError {
            location: e.location().map(|l| (l.line(), l.column())),
            message: first_line(&e.to_string()),
        })?;
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
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
        let field = match path.as_str() {
            "." | "" => root.to_owned(),
            p if root.is_empty() => p.to_owned(),
            p => format!("{root}.{p}"),
        };
        FieldError {
            field,
            type_: crate::validation::ErrorType::FieldValueInvalid,
            value: None,
            detail: first_line(&e.into_inner().to_string()),
        }
    })
}

/// What a document is.
#[derive(Clone, Debug, PartialEq)]
pub enum Document {
    /// Foresight's own EffectiveHorizontalPodAutoscaler.
    Foresight(Box<EffectiveHorizontalPodAutoscaler>),
    /// A native autoscaling/v2 HorizontalPodAutoscaler.
    Hpa(Box<HorizontalPodAutoscaler>),
    /// Crane's `autoscaling.crane.io/v1alpha1` EffectiveHorizontalPodAutoscaler, raw.
    Crane(serde_json::Value),
    /// Anything else.
    Other {
        /// Its `apiVersion`.
        api_version: String,
        /// Its `kind`.
        kind: String,
    },
}

/// Recognises a document by `apiVersion` and `kind`, and reads it into the matching type.
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
    let group = api_version.split('/').next().unwrap_or_default();
    match (group, kind.as_str()) {
        ("autoscaling.foresight.dev", _) if kind == KIND => {
            Ok(Document::Foresight(Box::new(from_value(value, "")?)))
        }
        ("autoscaling", "HorizontalPodAutoscaler") => {
            Ok(Document::Hpa(Box::new(from_value(value, "")?)))
        }
        ("autoscaling.crane.io", "EffectiveHorizontalPodAutoscaler") => {
            Ok(Document::Crane(value.clone()))
        }
        _ => Ok(Document::Other { api_version, kind }),
    }
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
    fn type_errors_name_the_field() {
        let v: serde_json::Value = serde_json::json!({"spec": {"maxReplicas": "ten"}});
        let err = from_value::<EffectiveHorizontalPodAutoscaler>(&v, "").unwrap_err();
        assert_eq!(err.field, "spec.maxReplicas");
    }
}
