//! The CustomResourceDefinition, derived from the Rust types of `foresight-api`.
//!
//! Everything in it is said on the types: the resource's names, status subresource and printer
//! columns by the `kube(...)` attributes on the spec, the OpenAPI schema by the types'
//! `JsonSchema` derives (so field docs become `kubectl explain` text), and the constraints the
//! API server checks by `schemars` attributes on the fields: ranges, lengths, patterns and enums
//! as schema keywords, cross-field rules as CEL `x-kubernetes-validations` with a message each,
//! so that a bad object is rejected at `kubectl apply` without a webhook. `foresight validate`
//! checks the same rules (and those CEL cannot express, such as cron syntax) offline.

use foresight_api::EffectiveHorizontalPodAutoscaler;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

/// The `effectivehorizontalpodautoscalers.autoscaling.foresight.dev` CRD.
pub fn custom_resource_definition() -> CustomResourceDefinition {
    EffectiveHorizontalPodAutoscaler::crd()
}

/// The object schema the CRD carries, as JSON.
pub fn openapi_schema() -> serde_json::Value {
    let schema = custom_resource_definition()
        .spec
        .versions
        .into_iter()
        .next()
        .and_then(|v| v.schema)
        .and_then(|s| s.open_api_v3_schema);
    serde_json::to_value(schema).unwrap_or_default()
}

/// The CRD as YAML, as `foresight crd` prints it.
pub fn custom_resource_definition_yaml() -> Result<String, serde_saphyr::ser::Error> {
    serde_saphyr::to_string(&custom_resource_definition())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Map, Value};

    /// The node at `path` (property names; `*` steps into array items).
    fn node<'a>(root: &'a mut Value, path: &str) -> Option<&'a mut Map<String, Value>> {
        let mut cur = root;
        for step in path.split('.').filter(|s| !s.is_empty()) {
            cur = if step == "*" {
                cur.get_mut("items")?
            } else {
                cur.get_mut("properties")?.get_mut(step)?
            };
        }
        cur.as_object_mut()
    }

    /// Every node of a structural schema has a type (or is an int-or-string or
    /// preserve-unknown-fields node), and nothing is referenced or combined.
    fn assert_structural(v: &Value, path: &str) {
        let Value::Object(map) = v else { return };
        for forbidden in [
            "$ref",
            "oneOf",
            "anyOf",
            "allOf",
            "not",
            "definitions",
            "$defs",
        ] {
            assert!(!map.contains_key(forbidden), "{path}: has {forbidden}");
        }
        let int_or_string = map.get("x-kubernetes-int-or-string") == Some(&json!(true));
        let preserve = map.get("x-kubernetes-preserve-unknown-fields") == Some(&json!(true));
        assert!(
            map.contains_key("type") || int_or_string || preserve,
            "{path}: no type"
        );
        assert!(!map.contains_key("default"), "{path}: carries a default");
        if let Some(Value::Object(props)) = map.get("properties") {
            for (name, child) in props {
                assert_structural(child, &format!("{path}.{name}"));
            }
        }
        if let Some(items) = map.get("items") {
            assert_structural(items, &format!("{path}[*]"));
        }
        if let Some(add @ Value::Object(_)) = map.get("additionalProperties") {
            assert_structural(add, &format!("{path}{{*}}"));
        }
    }

    #[test]
    fn the_schema_is_structural() {
        let schema = openapi_schema();
        assert_structural(&schema, "");
    }

    #[test]
    fn quantities_are_int_or_string() {
        let mut schema = openapi_schema();
        let tol = node(&mut schema, "spec.tolerance").unwrap();
        assert_eq!(tol.get("x-kubernetes-int-or-string"), Some(&json!(true)));
        let value = node(&mut schema, "spec.metrics.*.external.target.averageValue").unwrap();
        assert_eq!(value.get("x-kubernetes-int-or-string"), Some(&json!(true)));
    }

    #[test]
    fn descriptions_come_from_the_doc_comments() {
        let mut schema = openapi_schema();
        let b = node(&mut schema, "spec.behavior").unwrap();
        let text = b.get("description").and_then(Value::as_str).unwrap();
        assert!(text.contains("Scaling behavior per direction"), "{text}");
        let w = node(
            &mut schema,
            "spec.behavior.scaleDown.stabilizationWindowSeconds",
        )
        .unwrap();
        assert!(w.get("description").is_some());
    }

    #[test]
    fn the_crd_names_subresources_and_columns() {
        let crd = custom_resource_definition();
        assert_eq!(
            crd.metadata.name.as_deref(),
            Some("effectivehorizontalpodautoscalers.autoscaling.foresight.dev")
        );
        assert_eq!(crd.spec.names.short_names, Some(vec!["fhpa".to_owned()]));
        assert_eq!(crd.spec.scope, "Namespaced");
        let v = &crd.spec.versions[0];
        let subresources = serde_json::to_value(v.subresources.as_ref().unwrap()).unwrap();
        assert_eq!(subresources, serde_json::json!({"status": {}}));
        let names: Vec<&str> = v
            .additional_printer_columns
            .as_ref()
            .unwrap()
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(
            names,
            [
                "Reference",
                "Targets",
                "Min",
                "Max",
                "Current",
                "Desired",
                "Limited",
                "Strategy",
                "Ready",
                "Paused",
                "Age"
            ]
        );
    }

    #[test]
    fn yaml_output_round_trips_to_the_same_crd() {
        let yaml = custom_resource_definition_yaml().unwrap();
        assert!(yaml.contains("x-kubernetes-validations"));
        let back: Value = serde_saphyr::from_str(&yaml).unwrap();
        let direct = serde_json::to_value(custom_resource_definition()).unwrap();
        // Compare as JSON text: numbers may come back as integers where they went out as
        // floats, which is the same document.
        assert!(
            json_eq(&back, &direct),
            "YAML does not round-trip:\n{}",
            &yaml[..yaml.len().min(2000)]
        );
    }

    fn json_eq(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
            }
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(v, w)| json_eq(v, w))
            }
            _ => a == b,
        }
    }
}
