//! Fields a manifest sets that its type does not have, found by walking the document against
//! the JSON schema the types derive (the schema the CRD is generated from). Kubernetes drops
//! such fields silently unless the client asks for strict field validation (kubectl does by
//! default); a dropped `minReplica` means the default is used, so Foresight reports them, with
//! the closest known name when there is one.

use std::sync::OnceLock;

use schemars::JsonSchema;
use serde_json::{Map, Value};

use crate::hpa::HorizontalPodAutoscalerSpec;
use crate::spec::{EffectiveHorizontalPodAutoscalerSpec, API_VERSION, KIND};
use crate::validation::FieldError;

/// Unknown fields under `spec` of a manifest, by its kind: a Foresight object or an
/// autoscaling/v2 HorizontalPodAutoscaler (a v1 HPA has another shape and is not checked,
/// nor is any other kind).
pub fn in_spec_of(document: &Value) -> Vec<FieldError> {
    let text = |key: &str| {
        document
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    match (text("apiVersion"), text("kind")) {
        (API_VERSION, KIND) => in_foresight_spec(document),
        ("autoscaling/v1", _) => Vec::new(),
        (v, "HorizontalPodAutoscaler") if v.starts_with("autoscaling/") => in_hpa_spec(document),
        _ => Vec::new(),
    }
}

/// Unknown fields under `spec` of a Foresight EffectiveHorizontalPodAutoscaler. Metadata and
/// status are left to the API server (a `kubectl get -o yaml` copy carries server fields).
pub fn in_foresight_spec(document: &Value) -> Vec<FieldError> {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    in_spec(
        document,
        schema_of::<EffectiveHorizontalPodAutoscalerSpec>(&SCHEMA),
    )
}

/// Unknown fields under `spec` of an autoscaling/v2 HorizontalPodAutoscaler.
pub fn in_hpa_spec(document: &Value) -> Vec<FieldError> {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    in_spec(document, schema_of::<HorizontalPodAutoscalerSpec>(&SCHEMA))
}

fn schema_of<T: JsonSchema>(cell: &'static OnceLock<Value>) -> &'static Value {
    cell.get_or_init(|| schemars::schema_for!(T).to_value())
}

fn in_spec(document: &Value, schema: &Value) -> Vec<FieldError> {
    let mut found = Vec::new();
    if let Some(spec) = document.get("spec") {
        let walker = Walker {
            definitions: schema.get("$defs").and_then(Value::as_object),
        };
        walker.check(spec, schema, "spec", &mut found);
    }
    found
}

/// Walks a document beside its schema.
struct Walker<'s> {
    definitions: Option<&'s Map<String, Value>>,
}

impl<'s> Walker<'s> {
    fn check(&self, value: &Value, schema: &'s Value, path: &str, found: &mut Vec<FieldError>) {
        let mut shapes = Vec::new();
        self.alternatives(schema, &mut shapes, 0);
        match value {
            Value::Object(fields) => self.check_object(fields, &shapes, path, found),
            Value::Array(items) => {
                let Some(item_schema) = shapes.iter().find_map(|s| s.get("items")) else {
                    return;
                };
                for (i, item) in items.iter().enumerate() {
                    self.check(item, item_schema, &format!("{path}[{i}]"), found);
                }
            }
            _ => {}
        }
    }

    fn check_object(
        &self,
        fields: &Map<String, Value>,
        shapes: &[&'s Value],
        path: &str,
        found: &mut Vec<FieldError>,
    ) {
        let properties: Vec<&Map<String, Value>> = shapes
            .iter()
            .filter_map(|s| s.get("properties").and_then(Value::as_object))
            .collect();
        // A map (labels, selectors): every value has the same schema.
        let entries = shapes
            .iter()
            .find_map(|s| s.get("additionalProperties").filter(|a| a.is_object()));
        if properties.is_empty() && entries.is_none() {
            return; // free-form (a raw JSON value)
        }
        for (key, value) in fields {
            let at = format!("{path}.{key}");
            match properties.iter().find_map(|p| p.get(key)).or(entries) {
                Some(schema) => self.check(value, schema, &at, found),
                None => {
                    let known = properties.iter().flat_map(|p| p.keys().map(String::as_str));
                    found.push(FieldError::unknown(at, suggestion(key, known)));
                }
            }
        }
    }

    /// The schema itself and every schema it may stand for (`$ref`, `anyOf`, `oneOf`,
    /// `allOf`), resolved.
    fn alternatives(&self, schema: &'s Value, out: &mut Vec<&'s Value>, depth: usize) {
        // Definitions may refer to themselves through a field; a path through schemas alone
        // is never this deep.
        if depth > 16 {
            return;
        }
        if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
            if let Some(resolved) = target
                .strip_prefix("#/$defs/")
                .and_then(|name| self.definitions?.get(name))
            {
                self.alternatives(resolved, out, depth + 1);
            }
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            for variant in schema
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                self.alternatives(variant, out, depth + 1);
            }
        }
        out.push(schema);
    }
}

/// "did you mean" text: the known name closest to `key`, when it is close enough to be a
/// misspelling (or differs only in case).
fn suggestion<'a>(key: &str, known: impl Iterator<Item = &'a str>) -> String {
    let best = known
        .map(|name| {
            (
                strsim::damerau_levenshtein(&key.to_lowercase(), &name.to_lowercase()),
                name,
            )
        })
        .min();
    match best {
        Some((distance, name)) if distance <= 2.max(key.len() / 4) => {
            format!("did you mean {name:?}?")
        }
        _ => "not a field of this object".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ehpa(spec: Value) -> Value {
        json!({"apiVersion": "autoscaling.foresight.dev/v1alpha1",
               "kind": "EffectiveHorizontalPodAutoscaler", "spec": spec})
    }

    #[test]
    fn a_misspelt_field_is_named_with_the_field_meant() {
        let doc = ehpa(json!({"minReplica": 2, "maxReplicas": 10}));
        let found = in_foresight_spec(&doc);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].field, "spec.minReplica");
        assert!(found[0].detail.contains("\"minReplicas\""), "{}", found[0]);
    }

    #[test]
    fn nested_fields_in_lists_and_options_are_checked() {
        let doc = ehpa(json!({
            "maxReplicas": 10,
            "metrics": [{"type": "Resource",
                         "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilisation": 60}}}],
            "behavior": {"scaleUp": {"stabilizationWindowSeconds": 0, "polices": []}},
        }));
        let fields: Vec<String> = in_foresight_spec(&doc)
            .into_iter()
            .map(|e| e.field)
            .collect();
        assert_eq!(
            fields,
            [
                "spec.behavior.scaleUp.polices",
                "spec.metrics[0].resource.target.averageUtilisation"
            ]
        );
    }

    #[test]
    fn maps_and_free_form_values_accept_any_key() {
        let doc = ehpa(json!({
            "maxReplicas": 3,
            "metrics": [{"type": "External", "external": {
                "metric": {"name": "q", "selector": {"matchLabels": {"anything": "goes"}}},
                "target": {"type": "Value", "value": "10"}}}],
        }));
        assert_eq!(in_foresight_spec(&doc), vec![]);
    }

    #[test]
    fn the_schema_follows_the_kind() {
        let spec = json!({"maxReplicas": 3, "minReplica": 1});
        let hpa =
            |v: &str| json!({"apiVersion": v, "kind": "HorizontalPodAutoscaler", "spec": spec});
        assert_eq!(in_spec_of(&ehpa(spec.clone())).len(), 1);
        assert_eq!(in_spec_of(&hpa("autoscaling/v2")).len(), 1);
        // v1 has another shape, and other kinds are not ours to check.
        assert!(in_spec_of(&hpa("autoscaling/v1")).is_empty());
        assert!(
            in_spec_of(&json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": spec}))
                .is_empty()
        );
    }

    #[test]
    fn a_name_far_from_every_field_gets_no_suggestion() {
        let doc = json!({"spec": {"maxReplicas": 3, "zzzzzzzz": 1}});
        let found = in_hpa_spec(&doc);
        assert_eq!(found[0].detail, "not a field of this object");
    }
}
