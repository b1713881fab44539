//! The `foresight controller` process under test, run from the binary cargo built, with a
//! kubeconfig of the test's choosing (usually the controller's own service account).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::process::{free_port, Process};

/// A running `foresight controller`.
pub struct ForesightController {
    process: Process,
    /// The port of its `/metrics`, `/healthz` and `/readyz`.
    pub metrics_port: u16,
}

impl ForesightController {
    /// Starts `binary controller` with `kubeconfig`, logging human-readable lines to `log`,
    /// serving `/metrics` on a free port, plus `extra` flags.
    pub fn start(
        binary: &Path,
        kubeconfig: &Path,
        log: &Path,
        extra: &[&str],
    ) -> anyhow::Result<ForesightController> {
        let metrics_port = free_port()?;
        let mut args = vec![
            "controller".to_owned(),
            format!("--kubeconfig={}", kubeconfig.display()),
            "--log-format=human".to_owned(),
            format!("--metrics-address=127.0.0.1:{metrics_port}"),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        // A by-hand measurement may run the controller under a profiler (heaptrack, valgrind):
        // `FORESIGHT_CONTROLLER_WRAPPER` names a program that is given the binary and its
        // arguments. The suite never sets it.
        let wrapper = std::env::var_os("FORESIGHT_CONTROLLER_WRAPPER").map(PathBuf::from);
        let program = match &wrapper {
            Some(w) => {
                args.insert(0, binary.display().to_string());
                w.as_path()
            }
            None => binary,
        };
        let process = Process::spawn_with_env(
            "foresight-controller",
            program,
            &args,
            &[("NO_COLOR", "1"), ("RUST_BACKTRACE", "1")],
            log,
        )?;
        Ok(ForesightController {
            process,
            metrics_port,
        })
    }

    /// Its process ID.
    pub fn pid(&self) -> Option<u32> {
        self.process.pid()
    }

    /// Its log so far.
    pub fn log(&self) -> String {
        self.process.log()
    }

    /// Where its log is.
    pub fn log_path(&self) -> PathBuf {
        self.process.log_path().to_owned()
    }

    /// Whether it still runs.
    pub fn is_running(&mut self) -> bool {
        self.process.is_running()
    }

    /// SIGTERM, then how long it took to exit (`None`: it had to be killed after `grace`).
    pub fn terminate(&mut self, grace: Duration) -> Option<Duration> {
        self.process.terminate(grace)
    }

    /// SIGKILL: a crash.
    pub fn kill(&mut self) {
        self.process.kill();
    }

    /// `GET /metrics` (plain HTTP on loopback).
    pub async fn scrape(&self) -> anyhow::Result<String> {
        http_get(self.metrics_port, "/metrics").await
    }

    /// `GET /readyz`'s status code.
    pub async fn ready(&self) -> bool {
        http_get(self.metrics_port, "/readyz").await.is_ok()
    }
}

/// `GET http://127.0.0.1:{port}{path}`, the body when the answer is 200.
async fn http_get(port: u16, path: &str) -> anyhow::Result<String> {
    let response = reqwest::get(format!("http://127.0.0.1:{port}{path}")).await?;
    let status = response.status();
    let body = response.text().await?;
    if !status.is_success() {
        anyhow::bail!("GET {path}: {status}: {body}");
    }
    Ok(body)
}
