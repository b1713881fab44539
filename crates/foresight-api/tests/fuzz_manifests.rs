//! No input makes manifest reading, defaulting or validation panic.

use foresight_api::manifest::{classify, parse_documents, Document};
use foresight_api::validation::validate_spec;
use proptest::prelude::*;
use serde_json::{json, Value};

/// Arbitrary JSON, biased towards the shapes and keys of a manifest.
fn value() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        Just("spec".to_owned()),
        Just("metrics".to_owned()),
        Just("behavior".to_owned()),
        Just("scaleUp".to_owned()),
        Just("policies".to_owned()),
        Just("crons".to_owned()),
        Just("prediction".to_owned()),
        Just("target".to_owned()),
        Just("type".to_owned()),
        Just("minReplicas".to_owned()),
        Just("maxReplicas".to_owned()),
        Just("averageValue".to_owned()),
        "[a-zA-Z]{1,12}",
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f)
            .map(Value::Number)
            .unwrap_or(Value::Null)),
        ".{0,20}".prop_map(Value::from),
        prop_oneof![
            Just("Resource"),
            Just("Pods"),
            Just("Max"),
            Just("100m"),
            Just("0 6 * * *"),
            Just("dsp")
        ]
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 64, 8, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::btree_map(key.clone(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn any_text_parses_or_fails_cleanly(text in ".{0,400}") {
        if let Ok(docs) = parse_documents(&text) {
            for d in &docs {
                let _ = classify(d);
            }
        }
    }

    #[test]
    fn any_spec_shape_validates_without_panicking(spec in value()) {
        let doc = json!({
            "apiVersion": "autoscaling.foresight.dev/v1alpha1",
            "kind": "EffectiveHorizontalPodAutoscaler",
            "metadata": {"name": "x"},
            "spec": spec,
        });
        if let Ok(Document::Foresight(ehpa)) = classify(&doc) {
            let _ = validate_spec(&ehpa.spec);
        }
    }
}

/// A manifest of the right shape with arbitrary values in every field.
fn shaped_spec() -> impl Strategy<Value = Value> {
    let int = || prop_oneof![any::<i32>(), -5i32..5000];
    let text = || {
        prop_oneof![
            ".{0,12}",
            Just("cpu".to_owned()),
            Just("Max".to_owned()),
            Just("..".to_owned())
        ]
    };
    let quantity = || {
        prop_oneof![
            "[-+]?[0-9.]{0,6}[eEkKMGTPimun]{0,2}[0-9]{0,3}",
            Just("100m".to_owned())
        ]
    };
    let schedule = || {
        prop_oneof![
            "[0-9*?/,A-Za-z -]{0,24}",
            Just("0 6 ? * MON-FRI".to_owned())
        ]
    };
    (
        (text(), text(), int(), int(), prop_oneof![Just("Resource"), Just("Pods"), Just("External"), Just("Prometheus"), Just("Bogus")]),
        (text(), prop_oneof![Just("Utilization"), Just("AverageValue"), Just("Value"), Just("")], int(), quantity()),
        (int(), text(), text(), int(), int(), quantity()),
        (text(), text(), schedule(), schedule(), int()),
        (int(), text(), text(), text()),
    )
        .prop_map(|(a, b, c, d, e)| {
            json!({
                "scaleTargetRef": {"kind": a.0, "name": a.1},
                "minReplicas": a.2, "maxReplicas": a.3,
                "metrics": [{"type": a.4,
                    "resource": {"name": b.0, "target": {"type": b.1, "averageUtilization": b.2, "averageValue": b.3}},
                    "pods": {"metric": {"name": b.0}, "target": {"type": b.1, "averageValue": b.3}},
                    "external": {"metric": {"name": b.0}, "target": {"type": b.1, "value": b.3}},
                    "prometheus": {"name": b.0, "query": b.0, "target": {"type": b.1, "value": b.3}}}],
                "behavior": {"scaleUp": {"stabilizationWindowSeconds": c.0, "selectPolicy": c.1,
                    "policies": [{"type": c.2, "value": c.3, "periodSeconds": c.4}], "tolerance": c.5}},
                "crons": [{"name": d.0, "timezone": d.1, "start": d.2, "end": d.3, "targetReplicas": d.4}],
                "prediction": {"predictionWindowSeconds": e.0, "predictionAlgorithm": {"algorithmType": e.1,
                    "dsp": {"sampleInterval": e.2, "historyLength": e.3}}},
                "syncPeriodSeconds": e.0,
            })
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn any_field_value_validates_without_panicking(spec in shaped_spec()) {
        let doc = json!({"apiVersion": "autoscaling.foresight.dev/v1alpha1", "kind": "EffectiveHorizontalPodAutoscaler", "spec": spec});
        match classify(&doc) {
            Ok(Document::Foresight(ehpa)) => {
                let errors = validate_spec(&ehpa.spec);
                for e in errors {
                    prop_assert!(e.field.starts_with("spec."), "{e}");
                }
            }
            Ok(other) => prop_assert!(false, "classified as {other:?}"),
            Err(e) => prop_assert!(e.field.starts_with("spec"), "{e}"),
        }
    }
}
