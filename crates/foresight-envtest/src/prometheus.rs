//! A Prometheus server of the test's own (Debian's `prometheus` package): its TSDB is
//! backfilled from OpenMetrics text with `promtool tsdb create-blocks-from openmetrics`, and
//! it serves on a free loopback port until dropped.

use crate::process::{free_port, http_ok};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Appends a counter family to OpenMetrics text: for each `(labels, share)`, the running total
/// of `share × rate(t)` per second, one sample every `step` seconds over `[end - days, end]`.
/// (The caller ends the text with `# EOF`.)
pub fn counter(
    out: &mut String,
    family: &str,
    series: &[(&str, f64)],
    (end, days, step): (i64, i64, i64),
    rate: impl Fn(i64) -> f64,
) {
    use std::fmt::Write as _;
    let step = step.max(1);
    let _ = writeln!(out, "# TYPE {family} counter");
    for (labels, share) in series {
        let mut total = 0.0;
        let mut t = end - days * 86_400;
        while t <= end {
            total += rate(t) * share * step as f64;
            let _ = writeln!(out, "{family}_total{{{labels}}} {total:.3} {t}");
            t += step;
        }
    }
}

/// A Prometheus process of our own; killed (by its pid) when dropped.
pub struct PrometheusServer {
    child: Option<Child>,
    url: String,
    _dir: tempfile::TempDir,
    log: PathBuf,
}

impl PrometheusServer {
    /// Backfills `openmetrics` into a fresh TSDB and serves it on a free loopback port;
    /// panics, naming the Debian package, when `prometheus` or `promtool` is missing.
    pub fn start(openmetrics: &str) -> PrometheusServer {
        require("prometheus");
        require("promtool");
        let dir = tempfile::tempdir().expect("a temporary directory");
        let input = dir.path().join("history.om");
        std::fs::write(&input, openmetrics).expect("write the OpenMetrics file");
        let data = dir.path().join("data");
        let out = Command::new("promtool")
            .args(["tsdb", "create-blocks-from", "openmetrics", "--quiet"])
            .arg(&input)
            .arg(&data)
            .output()
            .expect("promtool runs");
        assert!(
            out.status.success(),
            "promtool create-blocks-from openmetrics failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let config = dir.path().join("prometheus.yml");
        std::fs::write(&config, "global:\n  scrape_interval: 1m\n").expect("write the config");
        let port = free_port().expect("a free port on 127.0.0.1");
        let log = dir.path().join("prometheus.log");
        let log_file = std::fs::File::create(&log).expect("create the log");
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", data.display()))
            .arg("--storage.tsdb.retention.time=30d")
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(log_file)
            .spawn()
            .expect("prometheus starts");
        let mut server = PrometheusServer {
            child: Some(child),
            url: format!("http://127.0.0.1:{port}"),
            _dir: dir,
            log,
        };
        server.wait_ready();
        server
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        let addr = self.url.trim_start_matches("http://").to_owned();
        while Instant::now() < deadline {
            if let Some(child) = &mut self.child {
                if let Ok(Some(status)) = child.try_wait() {
                    panic!("prometheus exited ({status}): {}", self.log_text());
                }
            }
            if http_ok(&addr, "/-/ready") {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!(
            "prometheus did not become ready in 30s: {}",
            self.log_text()
        );
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Its base URL, `http://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Stops the server, as an outage would.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for PrometheusServer {
    fn drop(&mut self) {
        self.kill();
    }
}

fn require(tool: &str) {
    let found = Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "`{tool}` is not installed or not on PATH. These tests need a real Prometheus: \
         install Debian's package with `apt-get install -y prometheus` (it provides both \
         prometheus and promtool)."
    );
}
