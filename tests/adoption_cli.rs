//! The adoption path as a new user walks it, through the real binary: validate and import
//! the manifests they have, replay their load, read the errors. Each row is one command
//! line from the list of rough edges this path had, with the exit code and the words the
//! user must (and must not) see.

mod owned_process;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

const GOOD: &str = "apiVersion: autoscaling.foresight.dev/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 10
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}
";

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec: {replicas: 2}
";

const HPA_LIST: &str = "apiVersion: v1
kind: List
items:
- apiVersion: autoscaling/v2
  kind: HorizontalPodAutoscaler
  metadata: {name: web, namespace: shop}
  spec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
    maxReplicas: 10
- apiVersion: autoscaling/v2
  kind: HorizontalPodAutoscaler
  metadata: {name: api, namespace: shop}
  spec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}
    maxReplicas: 5
";

const CRANE_PER_POD: &str = "apiVersion: autoscaling.crane.io/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata:
  name: web
  annotations:
    metric-query.autoscaling.crane.io/resource.cpu: 'sum(rate(container_cpu_usage_seconds_total{pod=~\"web-.*\"}[1m])) by (pod)'
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
  prediction:
    predictionWindowSeconds: 3600
    predictionAlgorithm: {algorithmType: dsp}
";

const CRANE_INVALID: &str = "apiVersion: autoscaling.crane.io/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata: {name: bad}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: bad}
  maxReplicas: 0
";

/// Files every case can name.
fn files() -> Vec<(&'static str, String)> {
    let snapshot = include_str!("../examples/snapshots/cpu-scale-up.yaml");
    // Four hours of load a minute apart, then three hours without samples, then four more.
    let mut gapped = String::from("ts,value\n");
    for i in 0..240 {
        let ts = 1_700_000_000 + i * 60 + if i >= 120 { 3 * 3600 } else { 0 };
        gapped.push_str(&format!("{ts},{}\n", 1.0 + (i % 7) as f64 / 10.0));
    }
    vec![
        ("good.yaml", GOOD.to_owned()),
        ("typo.yaml", GOOD.replace("minReplicas:", "minReplica:")),
        ("beta.yaml", GOOD.replace("v1alpha1", "v1beta1")),
        ("empty.yaml", String::new()),
        ("mixed.yaml", format!("{DEPLOYMENT}---\n{GOOD}")),
        ("list.yaml", HPA_LIST.to_owned()),
        (
            "hpa-typo.yaml",
            HPA_LIST.replace(
                "    maxReplicas: 5\n",
                "    maxReplicas: 5\n    minReplica: 2\n",
            ),
        ),
        ("crane-pod.yaml", CRANE_PER_POD.to_owned()),
        ("crane-bad.yaml", CRANE_INVALID.to_owned()),
        ("syntax.yaml", "a: 1\nb: [\n".to_owned()),
        ("dup.yaml", "a: 1\na: 2\n".to_owned()),
        (
            "type.yaml",
            GOOD.replace("maxReplicas: 10", "maxReplicas: ten"),
        ),
        (
            "no-now.yaml",
            snapshot.replace("now: \"2026-03-02T14:00:00Z\"\n", ""),
        ),
        (
            "negative-scale.yaml",
            snapshot.replace("specReplicas: 4", "specReplicas: -4"),
        ),
        (
            "bad-selector.yaml",
            snapshot.replace("selector: \"app=web\"", "selector: \"app in (web\""),
        ),
        ("gap.csv", "0,1\n9999999999,2\n".to_owned()),
        ("gapped.csv", gapped),
        ("ms.csv", "1633651200000,1\n1633651260000,2\n".to_owned()),
        (
            "negative.csv",
            "ts,value\n1700000000,1\n1700000060,-2\n".to_owned(),
        ),
        (
            // Eight days of a 30-minute cycle and nothing daily: a load no predictor can use.
            "half-hourly.csv",
            (0..8 * 1440_i64)
                .map(|i| {
                    let phase = (i % 30) as f64 / 30.0 * std::f64::consts::TAU;
                    format!(
                        "{},{:.3}\n",
                        1_700_000_000 + i * 60,
                        10.0 + 4.0 * phase.sin()
                    )
                })
                .collect(),
        ),
        (
            "short.csv",
            (0..300)
                .map(|i| format!("{},{}\n", 1_700_000_000 + i * 60, 1 + i % 5))
                .collect(),
        ),
    ]
}

/// One command line and what it must do.
struct Case {
    /// The rough edge it covers.
    name: &'static str,
    args: &'static [&'static str],
    /// Sent on standard input (`-` arguments).
    stdin: Option<&'static str>,
    exit: i32,
    /// Each must appear in stdout or stderr.
    says: &'static [&'static str],
    /// None may appear in either.
    never: &'static [&'static str],
    /// Standard output must be empty.
    no_stdout: bool,
}

const CASES: &[Case] = &[
    // 1. validate and import, kubectl-grade.
    Case {
        name: "a misspelt field is an error with its path and the field meant",
        args: &["validate", "typo.yaml"],
        stdin: None,
        exit: 1,
        says: &["spec.minReplica: Unknown field: did you mean \"minReplicas\"?"],
        never: &["valid\n"],
        no_stdout: false,
    },
    Case {
        name: "an apiVersion the CRD does not serve is rejected",
        args: &["validate", "beta.yaml"],
        stdin: None,
        exit: 1,
        says: &[
            "apiVersion: Unsupported value: \"autoscaling.foresight.dev/v1beta1\": supported values: \"autoscaling.foresight.dev/v1alpha1\"",
        ],
        never: &[],
        no_stdout: false,
    },
    Case {
        name: "validate - reads standard input",
        args: &["validate", "-"],
        stdin: Some(GOOD),
        exit: 0,
        says: &["1 document(s) valid"],
        never: &["cannot read"],
        no_stdout: false,
    },
    Case {
        name: "an empty file is an error",
        args: &["validate", "empty.yaml"],
        stdin: None,
        exit: 1,
        says: &["empty.yaml: no documents (empty input)"],
        never: &["0 document(s) valid"],
        no_stdout: false,
    },
    Case {
        name: "other kinds are skipped with a note (helm template | foresight validate -)",
        args: &["validate", "-"],
        stdin: Some("apiVersion: v1\nkind: Service\nmetadata: {name: web}\n---\napiVersion: autoscaling.foresight.dev/v1alpha1\nkind: EffectiveHorizontalPodAutoscaler\nmetadata: {name: web}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  maxReplicas: 3\n"),
        exit: 0,
        says: &["skipped v1 Service", "1 document(s) valid"],
        never: &[],
        no_stdout: false,
    },
    Case {
        name: "--strict-kinds refuses other kinds",
        args: &["validate", "--strict-kinds", "mixed.yaml"],
        stdin: None,
        exit: 1,
        says: &["kind: Unsupported value: \"apps/v1/Deployment\""],
        never: &[],
        no_stdout: false,
    },
    Case {
        name: "validate -o json for tools",
        args: &["validate", "-o", "json", "typo.yaml"],
        stdin: None,
        exit: 1,
        says: &["\"valid\": false", "\"field\": \"spec.minReplica\"", "\"type\": \"FieldValueUnknown\""],
        never: &[],
        no_stdout: false,
    },
    Case {
        name: "import reads a kind: List (kubectl get hpa -o yaml)",
        args: &["import", "list.yaml"],
        stdin: None,
        exit: 0,
        says: &["name: web", "name: api", "kind: EffectiveHorizontalPodAutoscaler"],
        never: &[],
        no_stdout: false,
    },
    Case {
        name: "import writes nothing when a result is invalid",
        args: &["import", "crane-bad.yaml"],
        stdin: None,
        exit: 1,
        says: &["invalid after conversion: spec.maxReplicas", "nothing written"],
        never: &[],
        no_stdout: true,
    },
    Case {
        name: "import warns on per-pod history queries",
        args: &["import", "crane-pod.yaml"],
        stdin: None,
        exit: 0,
        says: &["keeps one series per pod (`by (pod)`)"],
        never: &[],
        no_stdout: false,
    },
    Case {
        name: "import names what it could not carry over",
        args: &["import", "hpa-typo.yaml"],
        stdin: None,
        exit: 0,
        says: &["spec.minReplica dropped: not a HorizontalPodAutoscaler field (did you mean \"minReplicas\"?)"],
        never: &[],
        no_stdout: false,
    },
    Case {
        name: "import --preview emits scaleStrategy: Preview for a side-by-side migration",
        args: &["import", "--preview", "-"],
        stdin: Some(HPA_LIST),
        exit: 0,
        says: &["scaleStrategy: Preview", "keeps running beside it"],
        never: &["delete the HorizontalPodAutoscaler"],
        no_stdout: false,
    },
    // 2. One duration syntax.
    Case {
        name: "simulate --startup-delay takes bare seconds",
        args: &["simulate", "--trace", "short.csv", "--startup-delay", "90", "--no-frontier", "--quiet", "--out", "r"],
        stdin: None,
        exit: 0,
        says: &["report: r/report.html"],
        never: &[],
        no_stdout: false,
    },
    Case {
        name: "controller --sync-period takes bare seconds",
        args: &["controller", "--sync-period", "30", "--kubeconfig", "/nonexistent"],
        stdin: None,
        exit: 1,
        says: &["kubeconfig /nonexistent: no such file"],
        never: &["sync-period"],
        no_stdout: true,
    },
    Case {
        name: "backtest --window takes a Go duration",
        args: &["backtest", "--trace", "short.csv", "--window", "1h"],
        stdin: None,
        exit: 0,
        says: &["window 1h"],
        never: &["invalid digit"],
        no_stdout: false,
    },
    // 3. simulate that answers the question, with limits.
    Case {
        name: "the bundled comparison states a verdict and each policy at equal shortfall",
        args: &["simulate", "--quiet", "--out", "r"],
        stdin: None,
        exit: 0,
        says: &[
            "against reactive (the first policy):",
            "predictive             under-provisioned 54.8 → 53.8 min (-1.0, -1.8%); replica-hours 1978.7 → 2000.8 (+22.1, +1.1%)",
            "at equal shortfall (reactive replayed at 21 targets, averageUtilization: 10 to averageUtilization: 95):",
            "predictive             53.8 min for 2000.8 replica-h; reactive as safe (between averageUtilization: 74 and 75) 1985.1 replica-h: predictive costs 0.8% more at equal shortfall",
            "clairvoyant bound                   -              -    1595.3     1.00",
            "tuned by objective: not swept in the run without --spec (ten more tuned replays); --tuned-frontier sweeps it",
            "predictive             ready after 2.0 days (daily period); 12 daily operating points chosen by replay (5 met the objective)",
        ],
        never: &[],
        no_stdout: false,
    },
    Case {
        name: "on a non-periodic trace it says why prediction never proposed",
        args: &["simulate", "--trace", "half-hourly.csv", "--quiet", "--no-frontier", "--out", "r"],
        stdin: None,
        exit: 0,
        says: &["predictive             never ready: no daily or weekly period found in 7d of history (strongest cycle: 30m, neither a day nor a week)"],
        never: &[],
        no_stdout: false,
    },
    Case {
        name: "a 316-year gap is an error naming the two lines",
        args: &["simulate", "--trace", "gap.csv"],
        stdin: None,
        exit: 1,
        says: &["no samples between line 1 (ts 0) and line 2 (ts 9999999999): a gap of 316 years", "--allow-gaps"],
        never: &[],
        no_stdout: true,
    },
    Case {
        name: "--allow-gaps closes a gap up and says so",
        args: &["simulate", "--trace", "gapped.csv", "--allow-gaps", "--no-frontier", "--quiet", "--out", "r"],
        stdin: None,
        exit: 0,
        says: &["closed up: no samples for 3h 1m between line 121 and line 122"],
        never: &[],
        no_stdout: false,
    },
    Case {
        name: "absurd settings are refused with the range",
        args: &["simulate", "--peak-replicas", "4294967295"],
        stdin: None,
        exit: 2,
        says: &["4294967295 is out of range: use a whole number from 1 to 10000"],
        never: &[],
        no_stdout: true,
    },
    Case {
        name: "--report into a directory that does not exist is refused",
        args: &["simulate", "--report", "/nonexistent/dir/r.html"],
        stdin: None,
        exit: 1,
        says: &["the directory /nonexistent/dir does not exist"],
        never: &[],
        no_stdout: true,
    },
    // 5. Errors in the project's words.
    Case {
        name: "a YAML error names its place once",
        args: &["validate", "syntax.yaml"],
        stdin: None,
        exit: 1,
        says: &["syntax.yaml: line 2, column 4: unclosed bracket '['"],
        never: &["error: line", "line 2 column 4"],
        no_stdout: false,
    },
    Case {
        name: "a duplicate key without the parser's advice to its programmer",
        args: &["validate", "dup.yaml"],
        stdin: None,
        exit: 1,
        says: &["the key \"a\" appears twice in one mapping"],
        never: &["DuplicateKeyPolicy", "Options"],
        no_stdout: false,
    },
    Case {
        name: "a wrong type without Rust type names",
        args: &["validate", "type.yaml"],
        stdin: None,
        exit: 1,
        says: &["spec.maxReplicas: Invalid value: wrong type: string \"ten\", expected an integer"],
        never: &["i32", "invalid type"],
        no_stdout: false,
    },
    Case {
        name: "a missing field is named by its path",
        args: &["explain", "--snapshot", "no-now.yaml"],
        stdin: None,
        exit: 1,
        says: &["no-now.yaml: now: Required value"],
        never: &[": : "],
        no_stdout: true,
    },
    Case {
        name: "a missing kubeconfig is said once",
        args: &["explain", "web", "--kubeconfig", "/nonexistent"],
        stdin: None,
        exit: 1,
        says: &["error: kubeconfig /nonexistent: no such file"],
        never: &["os error", "No such file or directory: No such file"],
        no_stdout: true,
    },
    Case {
        name: "a number out of range says the range in words",
        args: &["simulate", "--days", "0"],
        stdin: None,
        exit: 2,
        says: &["0 is out of range: use a whole number from 1 to 366"],
        never: &["9223372036854775807", "1..="],
        no_stdout: true,
    },
    Case {
        name: "a negative number is a bad value, not an unexpected argument",
        args: &["simulate", "--startup-delay", "-5"],
        stdin: None,
        exit: 2,
        says: &["-5: a duration cannot be negative"],
        never: &["unexpected argument"],
        no_stdout: true,
    },
    Case {
        name: "numbers that are not numbers say so without parser words",
        args: &["controller", "--tolerance", "abc"],
        stdin: None,
        exit: 2,
        says: &["\"abc\" is not a number"],
        never: &["invalid float literal"],
        no_stdout: true,
    },
    Case {
        name: "a negative count is out of range, in words",
        args: &["controller", "--concurrency", "-3"],
        stdin: None,
        exit: 2,
        says: &["-3 is out of range: use a whole number from 1 to 1000"],
        never: &["unexpected argument", "invalid digit"],
        no_stdout: true,
    },
    Case {
        name: "millisecond timestamps get a hint",
        args: &["simulate", "--trace", "ms.csv"],
        stdin: None,
        exit: 1,
        says: &["ms.csv: line 1: timestamp 1633651200000", "divide them by 1000"],
        never: &[],
        no_stdout: true,
    },
    Case {
        name: "explain refuses a negative specReplicas",
        args: &["explain", "--snapshot", "negative-scale.yaml"],
        stdin: None,
        exit: 1,
        says: &["scale.specReplicas: Invalid value: -4"],
        never: &[],
        no_stdout: true,
    },
    Case {
        name: "explain reports a malformed scale selector as Kubernetes does",
        args: &["explain", "--snapshot", "bad-selector.yaml"],
        stdin: None,
        exit: 0,
        says: &[
            "InvalidSelector",
            "couldn't convert selector into a corresponding internal selector object: unable to parse requirement: found '', expected: ',' or ')'",
        ],
        never: &[],
        no_stdout: false,
    },
    Case {
        name: "backtest refuses negative loads as simulate does",
        args: &["backtest", "--trace", "negative.csv"],
        stdin: None,
        exit: 1,
        says: &["negative.csv: line 3: value -2 is negative"],
        never: &[],
        no_stdout: true,
    },
    Case {
        name: "simulate refuses negative loads with the same words",
        args: &["simulate", "--trace", "negative.csv"],
        stdin: None,
        exit: 1,
        says: &["negative.csv: line 3: value -2 is negative"],
        never: &[],
        no_stdout: true,
    },
    Case {
        name: "--leader-elect alone, Go style",
        args: &["controller", "--leader-elect", "--kubeconfig", "/nonexistent"],
        stdin: None,
        exit: 1,
        says: &["kubeconfig /nonexistent: no such file"],
        never: &["unexpected", "leader-elect"],
        no_stdout: true,
    },
];

fn run(case: &Case, dir: &Path) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_foresight"))
        .args(case.args)
        .current_dir(dir)
        .env_remove("KUBECONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the foresight binary runs");
    let mut stdin = child.stdin.take().expect("stdin is piped");
    if let Some(text) = case.stdin {
        stdin.write_all(text.as_bytes()).expect("write stdin");
    }
    drop(stdin);
    let out = child.wait_with_output().expect("foresight finishes");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_rough_edge_of_the_adoption_path_is_smoothed() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for (name, text) in files() {
        std::fs::write(dir.path().join(name), text).expect("write a case file");
    }
    let mut failures = Vec::new();
    for case in CASES {
        let (code, stdout, stderr) = run(case, dir.path());
        let both = format!("{stdout}{stderr}");
        let mut wrong = Vec::new();
        if code != case.exit {
            wrong.push(format!("exit {code}, want {}", case.exit));
        }
        for want in case.says {
            if !both.contains(want) {
                wrong.push(format!("does not say {want:?}"));
            }
        }
        for bad in case.never {
            if both.contains(bad) {
                wrong.push(format!("says {bad:?}"));
            }
        }
        if case.no_stdout && !stdout.is_empty() {
            wrong.push("writes to stdout".to_owned());
        }
        if !wrong.is_empty() {
            failures.push(format!(
                "{} (foresight {}): {}\n--- stdout\n{stdout}--- stderr\n{stderr}",
                case.name,
                case.args.join(" "),
                wrong.join("; ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n\n")
    );
    assert!(
        !Path::new("/nonexistent/dir").exists(),
        "--report created the directory"
    );
}

/// Log lines written into a pipe carry no colour codes, even in the human format.
#[test]
fn human_logs_into_a_pipe_have_no_colour() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:9\"}\n\
         contexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {token: t}\n",
    )
    .expect("write a kubeconfig");
    // The controller runs until stopped: the test stops it (and whatever it started), even
    // when it fails on the way.
    let mut child = owned_process::Owned::spawn(
        Command::new(env!("CARGO_BIN_EXE_foresight"))
            .args([
                "controller",
                "--log-format",
                "human",
                "--metrics-address",
                "127.0.0.1:0",
            ])
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .stdout(Stdio::null())
            .stderr(Stdio::piped()),
    )
    .expect("the controller starts");
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let mut first = Vec::new();
    let mut byte = [0u8; 1];
    while first.len() < 4096 {
        match std::io::Read::read(&mut stderr, &mut byte) {
            Ok(1) if byte[0] == b'\n' => break,
            Ok(1) => first.push(byte[0]),
            _ => break,
        }
    }
    child.end();
    let line = String::from_utf8_lossy(&first);
    assert!(line.contains("starting controller"), "{line}");
    assert!(!line.contains('\u{1b}'), "colour codes in a pipe: {line:?}");
}
