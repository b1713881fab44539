//! Malformed and hostile inputs, through the real binary: each is refused, or accepted with a
//! warning, in the project's words, naming the field, line or flag and the rule; or it gets
//! the right answer. None may exit 0 with a confident wrong answer. (Found by trying
//! Foresight as a new user would; issue 31.)

use std::path::Path;
use std::process::Command;

/// The bundled snapshot every snapshot case edits.
const SNAPSHOT: &str = include_str!("../examples/snapshots/cpu-scale-up.yaml");

const EHPA: &str = "apiVersion: autoscaling.foresight.dev/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata:
  name: web
  namespace: shop
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
";

const HPA: &str = "apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
";

const LIKE_SELECTOR: &str = "  maxReplicas: 20
  metrics:
  - type: External
    external:
      metric:
        name: queue
        selector:
          matchExpressions:
          - {key: q, operator: Like, values: [a]}
      target: {type: Value, value: \"10\"}
";

/// `SNAPSHOT` with the first `from` replaced by `to`; panics when `from` is not there, so a
/// change to the example cannot quietly turn a case into a copy of it.
fn edited(from: &str, to: &str) -> String {
    assert!(
        SNAPSHOT.contains(from),
        "the example snapshot has no {from:?}"
    );
    SNAPSHOT.replacen(from, to, 1)
}

/// Two days of a load between 5 and 15, a minute apart, with `1e308` on line 1502.
fn outlier_trace() -> String {
    let mut csv = String::from("ts,value\n");
    for i in 0..2 * 1440_i64 {
        let value = if i == 1500 {
            "1e308".to_owned()
        } else {
            let phase = i as f64 / 1440.0 * std::f64::consts::TAU;
            format!("{:.3}", 10.0 + 5.0 * phase.sin())
        };
        csv.push_str(&format!("{},{value}\n", 1_700_000_000 + i * 60));
    }
    csv
}

fn alias_bomb() -> String {
    let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
    let mut yaml = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for pair in names.windows(2) {
        let list = vec![format!("*{}", pair[0]); 10].join(", ");
        yaml.push_str(&format!("{}: &{} [{list}]\n", pair[1], pair[1]));
    }
    yaml
}

/// Files every case can name.
fn files() -> Vec<(&'static str, String)> {
    vec![
        ("neg-usage.yaml", edited("cpu: \"430m\"", "cpu: \"-430m\"")),
        ("neg-window.yaml", edited("windowSeconds: 30", "windowSeconds: -30")),
        ("huge-request.yaml", edited("cpu: \"500m\"", "cpu: \"1e308\"")),
        (
            "now-far.yaml",
            edited("now: \"2026-03-02T14:00:00Z\"", "now: \"99999-01-01T00:00:00Z\""),
        ),
        (
            "now-2-63.yaml",
            edited("now: \"2026-03-02T14:00:00Z\"", "now: 9223372036854775808"),
        ),
        ("outlier.csv", outlier_trace()),
        (
            "ts-2-63.csv",
            "ts,value\n1700000000,1\n9223372036854775808,2\n".to_owned(),
        ),
        (
            "min-big.yaml",
            format!("{EHPA}  minReplicas: 4294967296\n  maxReplicas: 20\n"),
        ),
        (
            "min-nan.yaml",
            format!("{EHPA}  minReplicas: .nan\n  maxReplicas: 20\n"),
        ),
        ("no-max.yaml", format!("{EHPA}  minReplicas: 2\n")),
        ("no-max-snapshot.yaml", edited("    maxReplicas: 20\n", "")),
        ("hpa-no-max.yaml", format!("{HPA}  minReplicas: 2\n")),
        ("bomb.yaml", alias_bomb()),
        (
            "deep.yaml",
            format!("a: {}{}\n", "[".repeat(200), "]".repeat(200)),
        ),
        (
            "deep.json",
            format!("{}{}\n", "[".repeat(200), "]".repeat(200)),
        ),
        (
            "cron-never.yaml",
            format!(
                "{EHPA}  maxReplicas: 20\n  crons:\n  - {{name: feb, start: \"0 7 30 2 *\", end: \"0 9 * * *\", targetReplicas: 5}}\n"
            ),
        ),
        ("ehpa-like.yaml", format!("{EHPA}{LIKE_SELECTOR}")),
        ("hpa-like.yaml", format!("{HPA}{LIKE_SELECTOR}")),
        (
            "empty-key.yaml",
            format!("{EHPA}{}", LIKE_SELECTOR.replace("key: q, operator: Like", "key: \"\", operator: In")),
        ),
        (
            "paused-abc.yaml",
            EHPA.replace(
                "  namespace: shop\n",
                "  namespace: shop\n  annotations:\n    autoscaling.foresight.dev/paused-replicas: \"abc\"\n",
            ) + "  maxReplicas: 20\n",
        ),
        (
            "paused-abc-snapshot.yaml",
            edited(
                "    namespace: \"shop\"\n",
                "    namespace: \"shop\"\n    annotations:\n      autoscaling.foresight.dev/paused-replicas: \"abc\"\n",
            ),
        ),
        ("manifest.yaml", format!("{HPA}  maxReplicas: 10\n")),
        ("ehpa-manifest.yaml", format!("{EHPA}  maxReplicas: 10\n")),
        ("no-kind.yaml", "metadata: {name: x}\n---\n".to_owned() + EHPA + "  maxReplicas: 3\n"),
    ]
}

/// One command line and what the user must (and must not) see.
struct Case {
    name: &'static str,
    args: &'static [&'static str],
    exit: i32,
    /// Each must appear in stdout or stderr.
    says: &'static [&'static str],
    /// None may appear anywhere.
    never: &'static [&'static str],
}

/// What no message may hold: the words of the libraries and of Rust.
const LIBRARY_WORDS: &[&str] = &[
    "budget breached",
    "Depth {",
    "Nodes {",
    "configured policy",
    "expected i32",
    "expected i64",
    "unexpected argument",
    "os error",
    "panicked",
];

const CASES: &[Case] = &[
    Case {
        name: "3. one sample dwarfing the rest is refused, naming its line and the rule",
        args: &["simulate", "--trace", "outlier.csv", "--quiet", "--no-frontier"],
        exit: 1,
        says: &[
            "outlier.csv: line 1502: the value 1e308",
            "more than 100 times the trace's 99.9th percentile",
            "--raw-load",
        ],
        never: &["replica-h"],
    },
    Case {
        name: "3. backtest scores the values as recorded, and warns about the outlier",
        args: &["backtest", "--trace", "outlier.csv"],
        exit: 0,
        says: &["warning: outlier.csv: line 1502: the value 1e308 (ts 1700090000) is more than 100 times"],
        never: &[],
    },
    Case {
        name: "4. a negative CPU usage is refused at its field path",
        args: &["explain", "--snapshot", "neg-usage.yaml"],
        exit: 1,
        says: &[
            "metrics.podResourceMetrics[0].containers[0].usage.cpu: Invalid value: \"-430m\": must be 0 or more",
        ],
        never: &["scale"],
    },
    Case {
        name: "4. a negative windowSeconds is refused at its field path",
        args: &["explain", "--snapshot", "neg-window.yaml"],
        exit: 1,
        says: &["metrics.podResourceMetrics[0].windowSeconds: Invalid value: -30: must be 0 or more seconds"],
        never: &[],
    },
    Case {
        name: "4. a 1e308-core request is refused at its field path",
        args: &["explain", "--snapshot", "huge-request.yaml"],
        exit: 1,
        says: &["pods[0].containers[0].requests.cpu: Invalid value: \"1e308\": too large"],
        never: &[],
    },
    Case {
        name: "5. a count past int32 says the range",
        args: &["validate", "min-big.yaml"],
        exit: 1,
        says: &["spec.minReplicas", "4294967296 is out of range: at most 2147483647"],
        never: &[],
    },
    Case {
        name: "5. an alias bomb is said to be one",
        args: &["validate", "bomb.yaml"],
        exit: 1,
        says: &["bomb.yaml: line 6", "alias bomb"],
        never: &[],
    },
    Case {
        name: "5. deep YAML nesting is said in words",
        args: &["validate", "deep.yaml"],
        exit: 1,
        says: &["deep.yaml", "nested too deeply"],
        never: &[],
    },
    Case {
        name: "5. deep JSON nesting is said in words",
        args: &["validate", "deep.json"],
        exit: 1,
        says: &["deep.json", "nested too deeply (more than 128 levels"],
        never: &["recursion limit"],
    },
    Case {
        name: "5. .nan is not a number a field accepts",
        args: &["validate", "min-nan.yaml"],
        exit: 1,
        says: &["min-nan.yaml: line 8, column 16", ".nan is not a number any field accepts"],
        never: &[],
    },
    Case {
        name: "5. a trace timestamp of 2^63 is out of range, with the bound",
        args: &["simulate", "--trace", "ts-2-63.csv", "--quiet"],
        exit: 1,
        says: &["ts-2-63.csv: line 3: timestamp 9223372036854775808 is out of range", "100000000000"],
        never: &["is not a whole number"],
    },
    Case {
        name: "5. a snapshot time of 2^63 is refused at its field",
        args: &["explain", "--snapshot", "now-2-63.yaml"],
        exit: 1,
        says: &["now-2-63.yaml: now:"],
        never: &[],
    },
    Case {
        name: "5. --peak-replicas 2^63 is out of range, with the range",
        args: &["simulate", "--peak-replicas", "9223372036854775808"],
        exit: 2,
        says: &["9223372036854775808 is out of range: use a whole number from 1 to 10000"],
        never: &["is not a whole number"],
    },
    Case {
        name: "5. --end past any clock is out of range",
        args: &["backtest", "--prometheus-url", "http://127.0.0.1:9", "--query", "up", "--end", "9223372036854775808"],
        exit: 2,
        says: &["9223372036854775808 is out of range: Unix seconds go from"],
        never: &["is not a time"],
    },
    Case {
        name: "5. a negative duration with a unit is refused in words, not taken for a flag",
        args: &["simulate", "--startup-delay", "-5s"],
        exit: 2,
        says: &["-5s: a duration cannot be negative"],
        never: &[],
    },
    Case {
        name: "5. a negative controller duration is refused in words",
        args: &["controller", "--sync-period", "-1m"],
        exit: 2,
        says: &["-1m: a duration cannot be negative"],
        never: &[],
    },
    Case {
        name: "5. a flag where a duration belongs is not a duration",
        args: &["simulate", "--startup-delay", "--quiet"],
        exit: 2,
        says: &["\"--quiet\" is not a duration"],
        never: &[],
    },
    Case {
        name: "5. a kubeconfig that is a directory is said to be one",
        args: &["explain", "web", "--kubeconfig", "."],
        exit: 1,
        says: &["kubeconfig .: is a directory"],
        never: &["no such file"],
    },
    Case {
        name: "5. a manifest given as a snapshot is said to be a manifest",
        args: &["explain", "--snapshot", "manifest.yaml"],
        exit: 1,
        says: &[
            "manifest.yaml: a HorizontalPodAutoscaler manifest, not a snapshot",
            "examples/snapshots",
            "foresight explain -n NAMESPACE NAME",
        ],
        never: &["Required value"],
    },
    Case {
        name: "5. a Foresight autoscaler given as a snapshot is said to be a manifest",
        args: &["explain", "--snapshot", "ehpa-manifest.yaml"],
        exit: 1,
        says: &["ehpa-manifest.yaml: an EffectiveHorizontalPodAutoscaler manifest, not a snapshot"],
        never: &["Required value"],
    },
    Case {
        name: "5. a snapshot time no clock has says how to write one",
        args: &["explain", "--snapshot", "now-far.yaml"],
        exit: 1,
        says: &["now-far.yaml: now: Invalid value: not a time: write RFC 3339"],
        never: &["two digit integer", "required range"],
    },
    Case {
        name: "5. a missing maxReplicas is Required, said once",
        args: &["validate", "no-max.yaml"],
        exit: 1,
        says: &["spec.maxReplicas: Required value", "1 problem(s)"],
        never: &["Invalid value: \"0\""],
    },
    Case {
        name: "5. a snapshot's autoscaler without maxReplicas: Required, once",
        args: &["explain", "--snapshot", "no-max-snapshot.yaml"],
        exit: 1,
        says: &["no-max-snapshot.yaml: autoscaler: spec.maxReplicas: Required value"],
        never: &["Invalid value: \"0\""],
    },
    Case {
        name: "5. a native HPA's missing maxReplicas is Required too",
        args: &["validate", "hpa-no-max.yaml"],
        exit: 1,
        says: &["spec.maxReplicas: Required value", "1 problem(s)"],
        never: &["Invalid value: \"0\""],
    },
    Case {
        name: "6. a cron that never fires is accepted with a warning saying so",
        args: &["validate", "cron-never.yaml"],
        exit: 0,
        says: &[
            "warning: spec.crons[0].start: \"0 7 30 2 *\": never fires",
            "the window will never open",
            "1 document(s) valid, with 1 warning(s)",
        ],
        never: &[],
    },
    Case {
        name: "6. a selector operator Like in an HPA: accepted as Kubernetes does, with a warning",
        args: &["validate", "hpa-like.yaml"],
        exit: 0,
        says: &[
            "warning: spec.metrics[0].external.metric.selector.matchExpressions[0].operator: \"Like\": not a selector operator",
            "every read of this metric will fail",
        ],
        never: &[],
    },
    Case {
        name: "6. a selector operator Like in a Foresight autoscaler: the same warning",
        args: &["validate", "ehpa-like.yaml"],
        exit: 0,
        says: &["warning: spec.metrics[0].external.metric.selector.matchExpressions[0].operator: \"Like\""],
        never: &[],
    },
    Case {
        name: "6. an empty label key: a warning at its field",
        args: &["validate", "empty-key.yaml"],
        exit: 0,
        says: &[
            "warning: spec.metrics[0].external.metric.selector.matchExpressions[0].key: \"\": not a label key: name part must be non-empty",
        ],
        never: &[],
    },
    Case {
        name: "6. paused-replicas \"abc\": a warning naming the annotation and what happens",
        args: &["validate", "paused-abc.yaml"],
        exit: 0,
        says: &[
            "warning: metadata.annotations[autoscaling.foresight.dev/paused-replicas]: Invalid value: \"abc\"",
            "paused at the current size until it is",
        ],
        never: &[],
    },
    Case {
        name: "6. an invalid paused-replicas is blamed for the pause, not `paused`",
        args: &["explain", "--snapshot", "paused-abc-snapshot.yaml"],
        exit: 0,
        says: &["autoscaling.foresight.dev/paused-replicas is not a number of replicas"],
        never: &["autoscaling.foresight.dev/paused holds"],
    },
    Case {
        name: "8. a document without apiVersion or kind is skipped with single spaces",
        args: &["validate", "no-kind.yaml"],
        exit: 0,
        says: &["skipped: not an autoscaler (it has no apiVersion or kind)"],
        never: &["skipped  "],
    },
];

fn run(case: &Case, dir: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_foresight"))
        .args(case.args)
        .current_dir(dir)
        .env_remove("KUBECONFIG")
        .env("NO_COLOR", "1")
        .output()
        .expect("the foresight binary runs");
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn every_hostile_input_gets_a_clear_answer() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for (name, text) in files() {
        std::fs::write(dir.path().join(name), text).expect("write a case file");
    }
    let mut failures = Vec::new();
    for case in CASES {
        let (code, output) = run(case, dir.path());
        let mut wrong = Vec::new();
        if code != case.exit {
            wrong.push(format!("exit {code}, expected {}", case.exit));
        }
        for want in case.says {
            if !output.contains(want) {
                wrong.push(format!("does not say {want:?}"));
            }
        }
        for bad in case.never.iter().chain(LIBRARY_WORDS) {
            if output.contains(bad) {
                wrong.push(format!("says {bad:?}"));
            }
        }
        if !wrong.is_empty() {
            failures.push(format!(
                "{} ({}):\n  {}\n  output:\n{output}",
                case.name,
                case.args.join(" "),
                wrong.join("\n  ")
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
}

/// Peak scaling is said, with its factor, so that a reader can tell what load was replayed.
#[test]
fn simulate_says_what_peak_scaling_did() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let trace = dir.path().join("load.csv");
    let csv: String = std::iter::once("ts,value\n".to_owned())
        .chain((0..1440_i64).map(|i| format!("{},{}\n", 1_700_000_000 + i * 60, 5 + i % 20)))
        .collect();
    std::fs::write(&trace, csv).expect("write the trace");
    let out = Command::new(env!("CARGO_BIN_EXE_foresight"))
        .args(["simulate", "--quiet", "--no-frontier", "--trace"])
        .arg(&trace)
        .arg("--out")
        .arg(dir.path())
        .output()
        .expect("the foresight binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The peak is 24; the bundled policy's pods carry 0.75 cores each at its 75% target.
    assert!(
        stdout.contains(
            "scaled: every value x 0.625, so that the peak (24) is what 20 pods carry at the \
             first policy's target (15 cores;"
        ),
        "{stdout}"
    );
}
