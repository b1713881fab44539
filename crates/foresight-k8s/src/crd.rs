//! The CustomResourceDefinition, generated from the Rust types of `foresight-api`.
//!
//! The OpenAPI schema comes from the types' `schemars::JsonSchema` derives (so field docs
//! become `kubectl explain` text), rewritten with kube's transforms into a *structural*
//! schema (everything inlined, no `$ref`, `anyOf` only for int-or-string quantities). Then
//! the constraints the API server can check are added where the types cannot say them:
//! ranges and enums as schema keywords, cross-field rules as CEL `x-kubernetes-validations`
//! with a message each, so that a bad object is rejected at `kubectl apply` without a webhook.
//! `foresight validate` checks the same rules (and those CEL cannot express, such as cron
//! syntax) offline.

use foresight_api::spec::{GROUP, KIND, VERSION};
use foresight_api::{EffectiveHorizontalPodAutoscalerSpec, EffectiveHorizontalPodAutoscalerStatus};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceDefinition, CustomResourceDefinitionNames,
    CustomResourceDefinitionSpec, CustomResourceDefinitionVersion, CustomResourceSubresourceStatus,
    CustomResourceSubresources, CustomResourceValidation, JSONSchemaProps,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{json, Map, Value};

use crate::resource::{PLURAL, SHORT_NAME};

/// Upper bound on `spec.crons`: CEL rules over a list need a bound for the API server to
/// accept their cost (uniqueness is quadratic in the list length).
pub const MAX_CRONS: u64 = 64;
/// Upper bound on `spec.metrics`, for the same reason.
pub const MAX_METRICS: u64 = 32;

/// Why the CRD could not be built.
#[derive(Debug, thiserror::Error)]
pub enum CrdError {
    /// The schema did not have the shape the rules are attached to (a type changed).
    #[error("the generated schema has no node at {0}")]
    MissingNode(String),
    /// The schema could not be converted to the API's schema type.
    #[error("the generated schema is not a valid JSONSchemaProps: {0}")]
    Schema(#[from] serde_json::Error),
}

/// The `effectivehorizontalpodautoscalers.autoscaling.foresight.dev` CRD.
pub fn custom_resource_definition() -> Result<CustomResourceDefinition, CrdError> {
    let schema: JSONSchemaProps = serde_json::from_value(openapi_schema()?)?;
    Ok(CustomResourceDefinition {
        metadata: ObjectMeta {
            name: Some(format!("{PLURAL}.{GROUP}")),
            ..Default::default()
        },
        spec: CustomResourceDefinitionSpec {
            group: GROUP.to_owned(),
            names: CustomResourceDefinitionNames {
                kind: KIND.to_owned(),
                list_kind: Some(format!("{KIND}List")),
                plural: PLURAL.to_owned(),
                singular: Some(KIND.to_lowercase()),
                short_names: Some(vec![SHORT_NAME.to_owned()]),
                categories: Some(vec![
                    "all".to_owned(),
                    "autoscaling".to_owned(),
                    "foresight".to_owned(),
                ]),
            },
            scope: "Namespaced".to_owned(),
            versions: vec![CustomResourceDefinitionVersion {
                name: VERSION.to_owned(),
                served: true,
                storage: true,
                schema: Some(CustomResourceValidation {
                    open_api_v3_schema: Some(schema),
                }),
                subresources: Some(CustomResourceSubresources {
                    // An empty object, not `Default` (JSON null): the API server drops a null
                    // status subresource, and every status write then answers 404.
                    status: Some(CustomResourceSubresourceStatus(serde_json::json!({}))),
                    scale: None,
                }),
                additional_printer_columns: Some(printer_columns()),
                ..Default::default()
            }],
            ..Default::default()
        },
        status: None,
    })
}

/// The CRD as YAML, as `foresight crd` prints it.
pub fn custom_resource_definition_yaml() -> Result<String, CrdError> {
    let crd = custom_resource_definition()?;
    let value = serde_json::to_value(&crd)?;
    serde_saphyr::to_string(&value).map_err(|e| CrdError::Schema(serde::ser::Error::custom(e)))
}

fn column(
    name: &str,
    type_: &str,
    path: &str,
    description: &str,
) -> CustomResourceColumnDefinition {
    CustomResourceColumnDefinition {
        name: name.to_owned(),
        type_: type_.to_owned(),
        json_path: path.to_owned(),
        description: Some(description.to_owned()),
        ..Default::default()
    }
}

/// The columns of `kubectl get`, those of `kubectl get hpa` first (REFERENCE, TARGETS,
/// MINPODS, MAXPODS, REPLICAS), then what only Foresight knows.
fn printer_columns() -> Vec<CustomResourceColumnDefinition> {
    vec![
        column(
            "Reference",
            "string",
            ".spec.scaleTargetRef.name",
            "The workload being scaled",
        ),
        column(
            "Targets",
            "string",
            ".status.targets",
            "Each metric's current value against its target",
        ),
        column(
            "Min",
            "integer",
            ".spec.minReplicas",
            "Lower bound on replicas",
        ),
        column(
            "Max",
            "integer",
            ".spec.maxReplicas",
            "Upper bound on replicas",
        ),
        column(
            "Current",
            "integer",
            ".status.currentReplicas",
            "Replicas of the target",
        ),
        column(
            "Desired",
            "integer",
            ".status.desiredReplicas",
            "Replicas the autoscaler wants",
        ),
        column(
            "Limited",
            "string",
            ".status.lastDecision.limits[-1:].reason",
            "The last limit that changed the decision (stabilization, policy, bounds)",
        ),
        column(
            "Strategy",
            "string",
            ".spec.scaleStrategy",
            "Auto applies, Preview only records",
        ),
        column(
            "Ready",
            "string",
            ".status.conditions[?(@.type==\"Ready\")].status",
            "Whether the autoscaler could read its sources and act",
        ),
        column(
            "Age",
            "date",
            ".metadata.creationTimestamp",
            "Time since creation",
        ),
    ]
}

/// The generator kube's derive uses: OpenAPI v3, everything inlined, and the rewrites that
/// make a schemars schema structural.
fn schema_of<T: schemars::JsonSchema>() -> Result<Value, CrdError> {
    use kube::core::schema::{OptionalEnum, OptionalIntOrString, StructuralSchemaRewriter};
    let generator = schemars::generate::SchemaSettings::openapi3()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .with_transform(schemars::transform::AddNullable::default())
        .with_transform(StructuralSchemaRewriter)
        .with_transform(OptionalEnum)
        .with_transform(OptionalIntOrString)
        .into_generator();
    let mut value = serde_json::to_value(generator.into_root_schema_for::<T>())?;
    clean(&mut value);
    Ok(value)
}

/// Removes what a CRD schema must not carry or should not: JSON-schema bookkeeping
/// (`$schema`, `title`), and `default`s. A `default` in a CRD is applied by the API server
/// and stored; the types' serde defaults (an empty string, zero replicas) are parsing
/// conveniences, not values to persist.
fn clean(v: &mut Value) {
    match v {
        Value::Object(map) => {
            map.remove("$schema");
            map.remove("title");
            map.remove("default");
            map.remove("definitions");
            map.remove("$defs");
            // kube's rewrite leaves `anyOf: [{}, {}]` beside `x-kubernetes-int-or-string`;
            // the marker alone is the canonical form.
            if map.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
                map.remove("anyOf");
            }
            for (_, child) in map.iter_mut() {
                clean(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(clean),
        _ => {}
    }
}

/// The node at `path` (property names; `*` steps into array items).
fn node<'a>(root: &'a mut Value, path: &str) -> Result<&'a mut Map<String, Value>, CrdError> {
    let mut cur = root;
    for step in path.split('.').filter(|s| !s.is_empty()) {
        let next = if step == "*" {
            cur.get_mut("items")
        } else {
            cur.get_mut("properties").and_then(|p| p.get_mut(step))
        };
        cur = next.ok_or_else(|| CrdError::MissingNode(path.to_owned()))?;
    }
    cur.as_object_mut()
        .ok_or_else(|| CrdError::MissingNode(path.to_owned()))
}

/// Adds schema keywords (`minimum`, `enum`, ...) at `path`.
fn keywords(root: &mut Value, path: &str, extra: Value) -> Result<(), CrdError> {
    let n = node(root, path)?;
    if let Value::Object(extra) = extra {
        n.extend(extra);
    }
    Ok(())
}

/// Marks `fields` required at `path`.
fn required(root: &mut Value, path: &str, fields: &[&str]) -> Result<(), CrdError> {
    let n = node(root, path)?;
    let list = n.entry("required").or_insert_with(|| json!([]));
    if let Value::Array(list) = list {
        for f in fields {
            if !list.iter().any(|v| v == f) {
                list.push(json!(f));
            }
        }
    }
    Ok(())
}

/// Appends a CEL rule with its message at `path`.
fn rule(root: &mut Value, path: &str, rule: &str, message: &str) -> Result<(), CrdError> {
    let n = node(root, path)?;
    let list = n
        .entry("x-kubernetes-validations")
        .or_insert_with(|| json!([]));
    if let Value::Array(list) = list {
        list.push(json!({"rule": rule, "message": message}));
    }
    Ok(())
}

/// The object schema: `spec` and `status` from the API types, plus the constraints.
pub fn openapi_schema() -> Result<Value, CrdError> {
    let mut root = json!({
        "type": "object",
        "description": "EffectiveHorizontalPodAutoscaler scales a workload on metrics (as the \
            HorizontalPodAutoscaler does), on forecasts and on cron windows, and records why.",
        "properties": {
            "spec": schema_of::<EffectiveHorizontalPodAutoscalerSpec>()?,
            "status": schema_of::<EffectiveHorizontalPodAutoscalerStatus>()?,
        },
        "required": ["spec"],
    });
    add_spec_constraints(&mut root)?;
    Ok(root)
}

/// Kubernetes' quantity grammar (the one controller-gen writes for `resource.Quantity`),
/// narrowed by sign: a mantissa (`12`, `1.5`, `.5`), then a binary, decimal or exponent
/// suffix. A pattern, not a CEL rule: a regular expression in CEL is priced by the string's
/// possible length, and the API server refuses the schema's total.
const QUANTITY_SUFFIX: &str = r"(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?[0-9]+))?$";
/// A positive quantity: some digit of the mantissa is not 0.
const POSITIVE_MANTISSA: &str =
    r"^[+]?(([0-9]*[1-9][0-9]*([.][0-9]*)?)|([0-9]*[.][0-9]*[1-9][0-9]*))";
/// A quantity of zero or more.
const NON_NEGATIVE_MANTISSA: &str = r"^[+]?(([0-9]+([.][0-9]*)?)|([.][0-9]+))";

/// `IsValidPathSegmentName`: names that end up in an API path.
const PATH_SEGMENT_RULE: &str =
    "self != '.' && self != '..' && !self.contains('/') && !self.contains('%')";
const PATH_SEGMENT_MESSAGE: &str = "may not be '.' or '..' and may not contain '/' or '%'";

/// A quantity field (int-or-string): its grammar and sign as a pattern for the string form,
/// and a minimum for the integer form.
fn quantity(root: &mut Value, path: &str, positive: bool) -> Result<(), CrdError> {
    let mantissa = if positive {
        POSITIVE_MANTISSA
    } else {
        NON_NEGATIVE_MANTISSA
    };
    keywords(
        root,
        path,
        json!({
            "pattern": format!("{mantissa}{QUANTITY_SUFFIX}"),
            "minimum": 0,
            "exclusiveMinimum": positive,
        }),
    )
}

/// A name that ends up in an API path: at most 253 characters (the bound also keeps the
/// CEL rule's cost within the API server's budget), and a path segment.
fn path_segment(root: &mut Value, path: &str) -> Result<(), CrdError> {
    keywords(root, path, json!({"maxLength": 253}))?;
    rule(root, path, PATH_SEGMENT_RULE, PATH_SEGMENT_MESSAGE)
}

const METRIC_TYPES: [&str; 6] = [
    "Resource",
    "ContainerResource",
    "Pods",
    "Object",
    "External",
    "Prometheus",
];

fn add_spec_constraints(root: &mut Value) -> Result<(), CrdError> {
    let r = root;
    // Scalars.
    required(r, "spec", &["scaleTargetRef", "maxReplicas"])?;
    required(r, "spec.scaleTargetRef", &["kind", "name"])?;
    keywords(r, "spec.scaleTargetRef.kind", json!({"minLength": 1}))?;
    keywords(r, "spec.scaleTargetRef.name", json!({"minLength": 1}))?;
    for field in ["kind", "name"] {
        path_segment(r, &format!("spec.scaleTargetRef.{field}"))?;
    }
    quantity(r, "spec.tolerance", false)?;
    keywords(r, "spec.maxReplicas", json!({"minimum": 1}))?;
    keywords(r, "spec.minReplicas", json!({"minimum": 0}))?;
    keywords(r, "spec.specificReplicas", json!({"minimum": 0}))?;
    keywords(
        r,
        "spec.syncPeriodSeconds",
        json!({"minimum": 1, "maximum": 3600}),
    )?;
    keywords(
        r,
        "spec.cpuInitializationPeriodSeconds",
        json!({"minimum": 0}),
    )?;
    keywords(
        r,
        "spec.initialReadinessDelaySeconds",
        json!({"minimum": 0}),
    )?;
    keywords(
        r,
        "spec.downscaleStabilizationWindowSeconds",
        json!({"minimum": 0, "maximum": 3600}),
    )?;

    // Cross-field rules on the spec.
    rule(
        r,
        "spec",
        "!has(self.minReplicas) || self.minReplicas <= self.maxReplicas",
        "minReplicas must be less than or equal to maxReplicas",
    )?;
    rule(
        r,
        "spec",
        "!has(self.specificReplicas) || (has(self.scaleStrategy) && self.scaleStrategy == 'Preview')",
        "specificReplicas may only be set with scaleStrategy: Preview",
    )?;
    rule(
        r,
        "spec",
        "!has(self.minReplicas) || self.minReplicas > 0 || (has(self.crons) && size(self.crons) > 0) \
         || (has(self.metrics) && self.metrics.exists(m, m.type == 'Object' || m.type == 'External' \
         || m.type == 'Prometheus'))",
        "minReplicas: 0 needs an Object, External or Prometheus metric, or a cron, to see load \
         while the workload has no pods",
    )?;

    // Metrics.
    keywords(r, "spec.metrics", json!({"maxItems": MAX_METRICS}))?;
    required(r, "spec.metrics.*", &["type"])?;
    keywords(r, "spec.metrics.*.type", json!({"enum": METRIC_TYPES}))?;
    rule(
        r,
        "spec.metrics.*",
        "self.type == 'Resource' ? has(self.resource) \
         : self.type == 'ContainerResource' ? has(self.containerResource) \
         : self.type == 'Pods' ? has(self.pods) \
         : self.type == 'Object' ? has(self.object) \
         : self.type == 'External' ? has(self.external) \
         : has(self.prometheus)",
        "the source named by type must be set (type: Resource needs resource, and so on)",
    )?;
    rule(
        r,
        "spec.metrics.*",
        "[has(self.resource), has(self.containerResource), has(self.pods), has(self.object), \
         has(self.external), has(self.prometheus)].filter(x, x).size() <= 1",
        "a metric sets exactly one source, the one its type names",
    )?;
    for source in [
        "resource",
        "containerResource",
        "pods",
        "object",
        "external",
        "prometheus",
    ] {
        let target = format!("spec.metrics.*.{source}.target");
        keywords(
            r,
            &format!("{target}.type"),
            json!({"enum": ["Utilization", "Value", "AverageValue"]}),
        )?;
        keywords(
            r,
            &format!("{target}.averageUtilization"),
            json!({"minimum": 1}),
        )?;
        quantity(r, &format!("{target}.value"), true)?;
        quantity(r, &format!("{target}.averageValue"), true)?;
    }
    for source in ["pods", "object", "external"] {
        let path = format!("spec.metrics.*.{source}.metric");
        required(r, &path, &["name"])?;
        keywords(r, &format!("{path}.name"), json!({"minLength": 1}))?;
        path_segment(r, &format!("{path}.name"))?;
    }
    path_segment(r, "spec.metrics.*.prometheus.name")?;
    // A DNS-1123 label, as container names are.
    keywords(
        r,
        "spec.metrics.*.containerResource.container",
        json!({"maxLength": 63, "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"}),
    )?;
    for source in ["resource", "containerResource"] {
        let path = format!("spec.metrics.*.{source}");
        required(r, &path, &["name", "target"])?;
        rule(
            r,
            &path,
            "has(self.target.averageUtilization) != has(self.target.averageValue)",
            "set exactly one of target.averageUtilization and target.averageValue",
        )?;
    }
    required(r, "spec.metrics.*.containerResource", &["container"])?;
    required(r, "spec.metrics.*.pods", &["metric", "target"])?;
    rule(
        r,
        "spec.metrics.*.pods",
        "has(self.target.averageValue)",
        "Pods metrics need target.averageValue",
    )?;
    required(
        r,
        "spec.metrics.*.object",
        &["describedObject", "metric", "target"],
    )?;
    rule(
        r,
        "spec.metrics.*.object",
        "has(self.target.value) || has(self.target.averageValue)",
        "Object metrics need target.value or target.averageValue",
    )?;
    for source in ["external", "prometheus"] {
        let path = format!("spec.metrics.*.{source}");
        required(r, &path, &["target"])?;
        rule(
            r,
            &path,
            "has(self.target.value) != has(self.target.averageValue)",
            "set exactly one of target.value and target.averageValue",
        )?;
    }
    required(r, "spec.metrics.*.external", &["metric"])?;
    required(r, "spec.metrics.*.prometheus", &["name", "query"])?;
    keywords(
        r,
        "spec.metrics.*.prometheus.query",
        json!({"minLength": 1}),
    )?;
    rule(
        r,
        "spec.metrics.*.prometheus",
        "self.target.type != 'Utilization'",
        "Prometheus metrics take a Value or AverageValue target",
    )?;

    // Behavior.
    for direction in ["scaleUp", "scaleDown"] {
        let path = format!("spec.behavior.{direction}");
        keywords(
            r,
            &format!("{path}.stabilizationWindowSeconds"),
            json!({"minimum": 0, "maximum": 3600}),
        )?;
        keywords(
            r,
            &format!("{path}.selectPolicy"),
            json!({"enum": ["Max", "Min", "Disabled"]}),
        )?;
        keywords(r, &format!("{path}.policies"), json!({"minItems": 1}))?;
        quantity(r, &format!("{path}.tolerance"), false)?;
        required(
            r,
            &format!("{path}.policies.*"),
            &["type", "value", "periodSeconds"],
        )?;
        keywords(
            r,
            &format!("{path}.policies.*.type"),
            json!({"enum": ["Pods", "Percent"]}),
        )?;
        keywords(
            r,
            &format!("{path}.policies.*.value"),
            json!({"minimum": 1}),
        )?;
        keywords(
            r,
            &format!("{path}.policies.*.periodSeconds"),
            json!({"minimum": 1, "maximum": 1800}),
        )?;
    }

    // Crons.
    keywords(r, "spec.crons", json!({"maxItems": MAX_CRONS}))?;
    required(
        r,
        "spec.crons.*",
        &["name", "start", "end", "targetReplicas"],
    )?;
    keywords(
        r,
        "spec.crons.*.name",
        json!({"minLength": 1, "maxLength": 63}),
    )?;
    keywords(
        r,
        "spec.crons.*.start",
        json!({"minLength": 1, "maxLength": 256}),
    )?;
    keywords(
        r,
        "spec.crons.*.end",
        json!({"minLength": 1, "maxLength": 256}),
    )?;
    keywords(r, "spec.crons.*.targetReplicas", json!({"minimum": 0}))?;
    rule(
        r,
        "spec.crons",
        "self.all(c, self.exists_one(d, d.name == c.name))",
        "cron names must be unique",
    )?;
    rule(
        r,
        "spec.crons.*",
        "self.start != self.end",
        "start and end must differ: a window that closes as it opens never holds",
    )?;

    // Prediction.
    keywords(
        r,
        "spec.prediction.predictionWindowSeconds",
        json!({"minimum": 1}),
    )?;
    keywords(
        r,
        "spec.prediction.predictionAlgorithm.algorithmType",
        json!({"enum": foresight_api::prediction::ALGORITHMS}),
    )?;
    keywords(
        r,
        "spec.prediction.horizon",
        json!({"enum": foresight_api::prediction::HORIZONS}),
    )?;
    keywords(
        r,
        "spec.prediction.startupSeconds",
        json!({"minimum": 0, "maximum": 3600}),
    )?;
    keywords(
        r,
        "spec.prediction.accuracy.windowSeconds",
        json!({"minimum": 600, "maximum": 2_592_000}),
    )?;
    keywords(
        r,
        "spec.prediction.accuracy.maxErrorPercent",
        json!({"minimum": 0, "maximum": 1000}),
    )?;
    rule(
        r,
        "spec.prediction",
        "has(self.predictionAlgorithm)",
        "prediction needs predictionAlgorithm (algorithmType: dsp or percentile)",
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let schema = openapi_schema().unwrap();
        assert_structural(&schema, "");
    }

    #[test]
    fn quantities_are_int_or_string() {
        let mut schema = openapi_schema().unwrap();
        let tol = node(&mut schema, "spec.tolerance").unwrap();
        assert_eq!(tol.get("x-kubernetes-int-or-string"), Some(&json!(true)));
        let value = node(&mut schema, "spec.metrics.*.external.target.averageValue").unwrap();
        assert_eq!(value.get("x-kubernetes-int-or-string"), Some(&json!(true)));
    }

    #[test]
    fn descriptions_come_from_the_doc_comments() {
        let mut schema = openapi_schema().unwrap();
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
        let crd = custom_resource_definition().unwrap();
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
                "Age"
            ]
        );
    }

    #[test]
    fn yaml_output_round_trips_to_the_same_crd() {
        let yaml = custom_resource_definition_yaml().unwrap();
        assert!(yaml.contains("x-kubernetes-validations"));
        let back: Value = serde_saphyr::from_str(&yaml).unwrap();
        let direct = serde_json::to_value(custom_resource_definition().unwrap()).unwrap();
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
