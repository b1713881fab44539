//! The CRD's CEL rules, evaluated offline with kube's CEL interpreter (the same library the
//! API server's rules are ported from): every rule compiles, stays within the cost budget,
//! accepts good objects and rejects each bad one with its message.

use foresight_k8s::crd::openapi_schema;
use kube::core::cel::{analyze_rule, compile_schema, ScopeContext, Validator, WarningKind};
use serde_json::{json, Value};

/// A spec every rule accepts (shared with the real-cluster CEL table in
/// `tests/cluster_install.rs`).
fn good() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/manifests/every-rule-holds.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("the fixture")).expect("JSON")
}

/// The messages of the rules `object` breaks.
fn violations(object: &Value) -> Vec<String> {
    let schema = openapi_schema();
    match Validator::new().validate(&schema, object, None) {
        Ok(()) => Vec::new(),
        Err(errs) => errs.iter().map(|e| e.message.clone()).collect(),
    }
}

fn with(path: &[&str], value: Value) -> Value {
    let mut obj = good();
    let mut cur = &mut obj;
    for (i, step) in path.iter().enumerate() {
        if i + 1 == path.len() {
            if value.is_null() {
                cur.as_object_mut().unwrap().remove(*step);
            } else {
                cur[*step] = value.clone();
            }
            break;
        }
        cur = match step.parse::<usize>() {
            Ok(n) => &mut cur[n],
            Err(_) => &mut cur[*step],
        };
    }
    obj
}

fn assert_rejects(object: Value, message_part: &str) {
    let v = violations(&object);
    assert!(
        v.iter().any(|m| m.contains(message_part)),
        "expected a violation containing {message_part:?}, got {v:?}"
    );
}

#[test]
fn every_rule_compiles_and_fits_the_cost_budget() {
    let schema = openapi_schema();
    let compiled = compile_schema(&schema);
    assert!(
        !compiled.has_errors(),
        "{:?}",
        compiled.compilation_errors()
    );
    // Walk the schema and analyse each rule against the node it is attached to.
    fn walk(node: &Value, count: &mut usize) {
        let Value::Object(map) = node else { return };
        if let Some(Value::Array(rules)) = map.get("x-kubernetes-validations") {
            let compiled = compile_schema(node);
            for r in rules {
                let rule = r["rule"].as_str().unwrap();
                // The scope check does not know macro variables (`m` in `exists(m, ...)`) and
                // flags them; cost and missing bounds are what the API server would refuse.
                let warnings: Vec<_> = analyze_rule(rule, &compiled, ScopeContext::CrdValidation)
                    .into_iter()
                    .filter(|w| w.kind != WarningKind::WrongScope)
                    .collect();
                assert!(warnings.is_empty(), "{rule}: {warnings:?}");
                assert!(r["message"].as_str().is_some_and(|m| !m.is_empty()));
                *count += 1;
            }
        }
        for key in ["properties"] {
            if let Some(Value::Object(props)) = map.get(key) {
                props.values().for_each(|c| walk(c, count));
            }
        }
        if let Some(items) = map.get("items") {
            walk(items, count);
        }
    }
    let mut count = 0;
    walk(&schema, &mut count);
    assert!(count >= 12, "only {count} rules");
}

#[test]
fn a_good_object_passes() {
    assert_eq!(violations(&good()), Vec::<String>::new());
}

#[test]
fn min_must_not_exceed_max() {
    assert_rejects(
        with(&["spec", "minReplicas"], json!(20)),
        "minReplicas must be less than or equal to maxReplicas",
    );
}

#[test]
fn specific_replicas_only_with_preview() {
    assert_rejects(
        with(&["spec", "specificReplicas"], json!(3)),
        "specificReplicas may only be set with scaleStrategy: Preview",
    );
    let mut ok = with(&["spec", "specificReplicas"], json!(3));
    ok["spec"]["scaleStrategy"] = json!("Preview");
    assert_eq!(violations(&ok), Vec::<String>::new());
}

#[test]
fn scale_to_zero_needs_a_source_that_sees_load_without_pods() {
    let mut obj = with(&["spec", "minReplicas"], json!(0));
    obj["spec"]["crons"] = json!([]);
    obj["spec"]["metrics"] = json!([{"type": "Resource", "resource": {"name": "cpu",
        "target": {"type": "Utilization", "averageUtilization": 60}}}]);
    assert_rejects(
        obj.clone(),
        "minReplicas: 0 needs an Object, External, Prometheus or Formula",
    );
    obj["spec"]["metrics"][0] = json!({"type": "External", "external": {"metric": {"name": "q"},
        "target": {"type": "Value", "value": "1"}}});
    assert_eq!(violations(&obj), Vec::<String>::new());
}

#[test]
fn cron_names_are_unique() {
    assert_rejects(
        with(&["spec", "crons", "1", "name"], json!("morning")),
        "cron names must be unique",
    );
}

#[test]
fn cron_start_differs_from_end() {
    assert_rejects(
        with(&["spec", "crons", "0", "end"], json!("0 6 ? * 1-5")),
        "start and end must differ",
    );
}

#[test]
fn a_metric_sets_the_source_its_type_names() {
    assert_rejects(
        with(&["spec", "metrics", "0", "type"], json!("Pods")),
        "the source named by type must be set",
    );
    let mut two = good();
    two["spec"]["metrics"][0]["pods"] =
        json!({"metric": {"name": "x"}, "target": {"type": "AverageValue", "averageValue": "1"}});
    assert_rejects(two, "a metric sets exactly one source");
}

#[test]
fn a_formula_input_sets_the_source_its_type_names() {
    let mut both = good();
    both["spec"]["metrics"][3]["formula"]["inputs"][0]["prometheus"] = json!({"query": "up"});
    assert_rejects(both, "set the source named by type, and only it");
    let mut neither = good();
    neither["spec"]["metrics"][3]["formula"]["inputs"][1]
        .as_object_mut()
        .unwrap()
        .remove("prometheus");
    assert_rejects(neither, "set the source named by type, and only it");
    let mut util = good();
    util["spec"]["metrics"][3]["formula"]["target"] =
        json!({"type": "Utilization", "averageValue": "2"});
    assert_rejects(util, "Formula metrics take a Value or AverageValue target");
}

#[test]
fn targets_match_their_source() {
    let mut both = good();
    both["spec"]["metrics"][0]["resource"]["target"]["averageValue"] = json!("500m");
    assert_rejects(
        both,
        "set exactly one of target.averageUtilization and target.averageValue",
    );
    let mut neither = good();
    neither["spec"]["metrics"][1]["external"]["target"] = json!({"type": "Value"});
    assert_rejects(
        neither,
        "set exactly one of target.value and target.averageValue",
    );
    let mut util = good();
    util["spec"]["metrics"][2]["prometheus"]["target"]["type"] = json!("Utilization");
    assert_rejects(
        util,
        "Prometheus metrics take a Value or AverageValue target",
    );
}

#[test]
fn prediction_needs_an_algorithm() {
    assert_rejects(
        with(&["spec", "prediction", "predictionAlgorithm"], Value::Null),
        "prediction needs predictionAlgorithm",
    );
}
