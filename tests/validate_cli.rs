//! `foresight validate` against a table of hand-written bad manifests: each must be rejected
//! with the field path of its problem, the valid examples accepted, and malformed YAML
//! reported with its line and column.

use std::io::Write;
use std::process::Command;

const BASE: &str = r#"apiVersion: autoscaling.foresight.dev/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata:
  name: web
  namespace: shop
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 20
"#;

/// `BASE` with `extra` spec lines added; a top-level spec key in `extra` replaces BASE's.
fn manifest(extra: &str) -> String {
    let key = |line: &str| {
        line.strip_prefix("  ")
            .and_then(|l| l.split(':').next())
            .map(str::to_owned)
    };
    let replaced: Vec<String> = extra
        .lines()
        .filter(|l| !l.starts_with("   "))
        .filter_map(key)
        .collect();
    let mut out: String = BASE
        .lines()
        .filter(|l| key(l).is_none_or(|k| !replaced.contains(&k)))
        .map(|l| format!("{l}\n"))
        .collect();
    out.push_str(extra);
    out
}

fn validate(text: &str) -> (bool, String) {
    let mut file = tempfile::Builder::new()
        .suffix(".yaml")
        .tempfile()
        .expect("temp file");
    file.write_all(text.as_bytes()).expect("write manifest");
    let out = Command::new(env!("CARGO_BIN_EXE_foresight"))
        .arg("validate")
        .arg(file.path())
        .output()
        .expect("run foresight validate");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// `(case, spec lines appended under spec:, expected field path)`.
const BAD: &[(&str, &str, &str)] = &[
    ("max zero", "  maxReplicas: 0\n", "spec.maxReplicas"),
    ("max below min", "  minReplicas: 30\n", "spec.maxReplicas"),
    ("negative min", "  minReplicas: -1\n", "spec.minReplicas"),
    ("max not a number", "  maxReplicas: ten\n", "spec.maxReplicas"),
    ("target kind missing", "  scaleTargetRef: {name: web}\n", "spec.scaleTargetRef.kind"),
    ("target name dot-dot", "  scaleTargetRef: {kind: Deployment, name: '..'}\n", "spec.scaleTargetRef.name"),
    ("target name slash", "  scaleTargetRef: {kind: Deployment, name: 'a/b'}\n", "spec.scaleTargetRef.name"),
    ("metric type missing", "  metrics: [{resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]\n", "spec.metrics[0].type"),
    ("metric type unknown", "  metrics: [{type: Bogus}]\n", "spec.metrics[0].type"),
    ("resource source missing", "  metrics: [{type: Resource}]\n", "spec.metrics[0].resource"),
    ("resource name missing", "  metrics: [{type: Resource, resource: {target: {type: Utilization, averageUtilization: 50}}}]\n", "spec.metrics[0].resource.name"),
    ("utilization zero", "  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 0}}}]\n", "spec.metrics[0].resource.target.averageUtilization"),
    ("both utilization and value", "  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50, averageValue: 100m}}}]\n", "spec.metrics[0].resource.target.averageValue"),
    ("target type unknown", "  metrics: [{type: Resource, resource: {name: cpu, target: {type: Percent, averageUtilization: 50}}}]\n", "spec.metrics[0].resource.target.type"),
    ("negative average value", "  metrics: [{type: Pods, pods: {metric: {name: qps}, target: {type: AverageValue, averageValue: '-5'}}}]\n", "spec.metrics[0].pods.target.averageValue"),
    ("malformed quantity", "  metrics: [{type: Pods, pods: {metric: {name: qps}, target: {type: AverageValue, averageValue: 12xyz}}}]\n", "spec.metrics[0].pods.target.averageValue"),
    ("pods without average value", "  metrics: [{type: Pods, pods: {metric: {name: qps}, target: {type: Value, value: '5'}}}]\n", "spec.metrics[0].pods.target.averageValue"),
    ("pods metric name missing", "  metrics: [{type: Pods, pods: {metric: {}, target: {type: AverageValue, averageValue: '5'}}}]\n", "spec.metrics[0].pods.metric.name"),
    ("object without described object", "  metrics: [{type: Object, object: {metric: {name: rps}, target: {type: Value, value: '10'}}}]\n", "spec.metrics[0].object.describedObject.kind"),
    ("external with both targets", "  metrics: [{type: External, external: {metric: {name: q}, target: {type: Value, value: '1', averageValue: '2'}}}]\n", "spec.metrics[0].external.target.value"),
    ("external metric name with slash", "  metrics: [{type: External, external: {metric: {name: 'a/b'}, target: {type: Value, value: '1'}}}]\n", "spec.metrics[0].external.metric.name"),
    ("container resource without container", "  metrics: [{type: ContainerResource, containerResource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]\n", "spec.metrics[0].containerResource.container"),
    ("container name not a DNS label", "  metrics: [{type: ContainerResource, containerResource: {name: cpu, container: App_1, target: {type: Utilization, averageUtilization: 50}}}]\n", "spec.metrics[0].containerResource.container"),
    ("two sources in one metric", "  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}, pods: {metric: {name: qps}, target: {type: AverageValue, averageValue: '1'}}}]\n", "spec.metrics[0].pods"),
    ("prometheus without query", "  metrics: [{type: Prometheus, prometheus: {name: rps, target: {type: Value, value: '100'}}}]\n", "spec.metrics[0].prometheus.query"),
    ("prometheus utilization target", "  metrics: [{type: Prometheus, prometheus: {name: rps, query: 'sum(rate(x[1m]))', target: {type: Utilization, averageUtilization: 50}}}]\n", "spec.metrics[0].prometheus.target.type"),
    ("stabilization window too long", "  behavior: {scaleDown: {stabilizationWindowSeconds: 3601}}\n", "spec.behavior.scaleDown.stabilizationWindowSeconds"),
    ("negative stabilization window", "  behavior: {scaleUp: {stabilizationWindowSeconds: -1}}\n", "spec.behavior.scaleUp.stabilizationWindowSeconds"),
    ("select policy unknown", "  behavior: {scaleUp: {selectPolicy: Fastest}}\n", "spec.behavior.scaleUp.selectPolicy"),
    ("empty policy list", "  behavior: {scaleDown: {policies: []}}\n", "spec.behavior.scaleDown.policies"),
    ("policy period too long", "  behavior: {scaleUp: {policies: [{type: Pods, value: 4, periodSeconds: 1801}]}}\n", "spec.behavior.scaleUp.policies[0].periodSeconds"),
    ("policy value zero", "  behavior: {scaleUp: {policies: [{type: Percent, value: 0, periodSeconds: 60}]}}\n", "spec.behavior.scaleUp.policies[0].value"),
    ("policy type unknown", "  behavior: {scaleDown: {policies: [{type: Replicas, value: 1, periodSeconds: 60}]}}\n", "spec.behavior.scaleDown.policies[0].type"),
    ("negative tolerance", "  behavior: {scaleUp: {tolerance: '-0.1'}}\n", "spec.behavior.scaleUp.tolerance"),
    ("specificReplicas without Preview", "  specificReplicas: 5\n", "spec.specificReplicas"),
    ("unknown strategy", "  scaleStrategy: Manual\n", "spec.scaleStrategy"),
    ("sync period zero", "  syncPeriodSeconds: 0\n", "spec.syncPeriodSeconds"),
    ("prediction without algorithm", "  prediction: {predictionWindowSeconds: 600}\n", "spec.prediction.predictionAlgorithm"),
    ("prediction unknown algorithm", "  prediction: {predictionAlgorithm: {algorithmType: arima}}\n", "spec.prediction.predictionAlgorithm.algorithmType"),
    ("prediction negative window", "  prediction: {predictionWindowSeconds: -60, predictionAlgorithm: {algorithmType: dsp}}\n", "spec.prediction.predictionWindowSeconds"),
    ("dsp sample interval over an hour", "  prediction: {predictionAlgorithm: {algorithmType: dsp, dsp: {sampleInterval: 2h}}}\n", "spec.prediction.predictionAlgorithm.dsp.sampleInterval"),
    ("dsp history under 48h", "  prediction: {predictionAlgorithm: {algorithmType: dsp, dsp: {historyLength: 1d}}}\n", "spec.prediction.predictionAlgorithm.dsp.historyLength"),
    ("cron duplicate names", "  crons:\n  - {name: a, start: '0 6 * * *', end: '0 9 * * *', targetReplicas: 3}\n  - {name: a, start: '0 18 * * *', end: '0 20 * * *', targetReplicas: 3}\n", "spec.crons[1].name"),
    ("cron schedule with six fields", "  crons: [{name: a, start: '0 0 6 * * *', end: '0 9 * * *', targetReplicas: 3}]\n", "spec.crons[0].start"),
    ("cron minute out of range", "  crons: [{name: a, start: '0 6 * * *', end: '60 9 * * *', targetReplicas: 3}]\n", "spec.crons[0].end"),
    ("cron start equals end", "  crons: [{name: a, start: '0 6 * * *', end: '0 6 * * *', targetReplicas: 3}]\n", "spec.crons[0].end"),
    ("cron unknown time zone", "  crons: [{name: a, timezone: Mars/Olympus, start: '0 6 * * *', end: '0 9 * * *', targetReplicas: 3}]\n", "spec.crons[0].timezone"),
    ("cron negative target", "  crons: [{name: a, start: '0 6 * * *', end: '0 9 * * *', targetReplicas: -2}]\n", "spec.crons[0].targetReplicas"),
];

#[test]
fn rejects_every_bad_manifest_with_its_field_path() {
    assert!(BAD.len() >= 30);
    let mut failures = Vec::new();
    for (case, extra, path) in BAD {
        let (ok, out) = validate(&manifest(extra));
        if ok || !out.contains(&format!(": {path}:")) {
            failures.push(format!("{case}: expected a problem at {path}, got:\n{out}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn accepts_valid_manifests() {
    let (ok, out) = validate(BASE);
    assert!(ok, "{out}");
    let full = format!(
        "{BASE}  metrics:\n  - type: Resource\n    resource: {{name: cpu, target: {{type: Utilization, averageUtilization: 60}}}}\n  behavior:\n    scaleDown: {{stabilizationWindowSeconds: 120}}\n---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {{name: api}}\nspec:\n  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: api}}\n  maxReplicas: 5\n"
    );
    let (ok, out) = validate(&full);
    assert!(ok, "{out}");
    assert!(out.contains("2 document(s) valid"), "{out}");
}

#[test]
fn reports_every_problem_of_a_document() {
    let (ok, out) = validate(&manifest("  maxReplicas: 0\n  syncPeriodSeconds: 0\n"));
    assert!(!ok);
    assert!(
        out.contains("spec.maxReplicas") && out.contains("spec.syncPeriodSeconds"),
        "{out}"
    );
}

#[test]
fn malformed_yaml_gives_line_and_column() {
    let (ok, out) = validate("spec:\n  maxReplicas: [1, 2\n  minReplicas: 3\n");
    assert!(!ok);
    assert!(out.contains("line ") && out.contains("column "), "{out}");
}
