//! Child processes that cannot outlive the test: each runs in its own process group, is
//! killed by the kernel when the test process dies (`PR_SET_PDEATHSIG`, even on abort), and is
//! stopped by PID when its handle is dropped (a failed assertion unwinds through the drop).
//!
//! The kernel ties the death signal to the *thread* that forked, so every child is forked by
//! one spawner thread that lives as long as the process.

// prctl, kill and sysconf have no safe wrapper in std; each call says why it is sound.
#![allow(unsafe_code)]

use std::fs::File;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use anyhow::Context as _;

type Request = (Command, mpsc::Sender<std::io::Result<Child>>);

fn spawner() -> &'static Mutex<mpsc::Sender<Request>> {
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<Request>>> = OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Request>();
        std::thread::Builder::new()
            .name("envtest-spawner".into())
            .spawn(move || {
                for (mut command, reply) in rx {
                    let _ = reply.send(command.spawn());
                }
                // The channel's sender lives in a static: this thread never returns, so the
                // children's death signal fires only when the process ends.
                loop {
                    std::thread::park();
                }
            })
            .expect("starting the envtest spawner thread");
        Mutex::new(tx)
    })
}

/// A running child process.
pub struct Process {
    name: String,
    child: Option<Child>,
    log: PathBuf,
}

impl Process {
    /// Starts `program` with `args`, its stdout and stderr appended to `log`.
    pub fn spawn(name: &str, program: &Path, args: &[String], log: &Path) -> anyhow::Result<Self> {
        Self::spawn_with_env(name, program, args, &[], log)
    }

    /// As [`Process::spawn`], with extra environment variables.
    pub fn spawn_with_env(
        name: &str,
        program: &Path,
        args: &[String],
        env: &[(&str, &str)],
        log: &Path,
    ) -> anyhow::Result<Self> {
        let out = File::options()
            .create(true)
            .append(true)
            .open(log)
            .with_context(|| format!("opening {}", log.display()))?;
        let err = out.try_clone()?;
        let mut command = Command::new(program);
        command
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0);
        // SAFETY: prctl is async-signal-safe and touches only the child's own state.
        unsafe {
            command.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let (tx, rx) = mpsc::channel();
        spawner()
            .lock()
            .map_err(|_| anyhow::anyhow!("the spawner lock is poisoned"))?
            .send((command, tx))
            .map_err(|_| anyhow::anyhow!("the spawner thread is gone"))?;
        let child = rx
            .recv()
            .context("the spawner thread did not answer")?
            .with_context(|| format!("starting {name} ({})", program.display()))?;
        Ok(Process {
            name: name.to_owned(),
            child: Some(child),
            log: log.to_owned(),
        })
    }

    /// The process ID.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The file its output goes to.
    pub fn log_path(&self) -> &Path {
        &self.log
    }

    /// Its output so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Whether it is still running.
    pub fn is_running(&mut self) -> bool {
        match &mut self.child {
            Some(c) => matches!(c.try_wait(), Ok(None)),
            None => false,
        }
    }

    /// Sends `signal` to the process alone.
    pub fn signal(&self, signal: i32) {
        if let Some(pid) = self.pid() {
            // SAFETY: kill with a PID this handle owns.
            unsafe {
                libc::kill(pid as i32, signal);
            }
        }
    }

    /// Sends SIGTERM and waits up to `grace` for the process to exit; returns how long it
    /// took, or `None` if it had to be killed.
    pub fn terminate(&mut self, grace: Duration) -> Option<Duration> {
        let started = Instant::now();
        self.signal(libc::SIGTERM);
        let exited = self.wait_for_exit(grace);
        if !exited {
            self.kill();
            return None;
        }
        self.child = None;
        Some(started.elapsed())
    }

    /// Kills the whole process group at once.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SAFETY: the group was created for this child (process_group(0)).
            unsafe {
                libc::kill(-(child.id() as i32), libc::SIGKILL);
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn wait_for_exit(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let Some(child) = &mut self.child else {
            return true;
        };
        loop {
            match child.try_wait() {
                Ok(Some(_)) | Err(_) => return true,
                Ok(None) if Instant::now() >= deadline => return false,
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }

    /// The name given at start.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if self.child.is_some() {
            self.signal(libc::SIGTERM);
            if !self.wait_for_exit(Duration::from_secs(3)) {
                self.kill();
            } else if let Some(child) = self.child.take() {
                // Anything it left in its group goes too.
                // SAFETY: the group was created for this child.
                unsafe {
                    libc::kill(-(child.id() as i32), libc::SIGKILL);
                }
            }
        }
    }
}

/// A free TCP port on 127.0.0.1 (bound and released; the caller binds it next).
pub fn free_port() -> anyhow::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("finding a free port")?;
    Ok(listener.local_addr()?.port())
}

/// Whether a bare HTTP/1.0 GET of `path` at `addr` answers 200: enough to poll a process's
/// readiness without an async runtime.
pub fn http_ok(addr: &str, path: &str) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(addr) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if stream
        .write_all(format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes())
        .is_err()
    {
        return false;
    }
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response.starts_with("HTTP/1.0 200") || response.starts_with("HTTP/1.1 200")
}

/// (user + system CPU seconds, RSS in MiB) of a process, from /proc.
pub fn usage(pid: u32) -> (f64, f64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    // utime and stime are fields 14 and 15 (1-based), i.e. 11 and 12 after the comm field.
    let ticks: f64 = fields.get(11..13).map_or(0.0, |f| {
        f.iter().filter_map(|v| v.parse::<f64>().ok()).sum()
    });
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let rss_kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0);
    (ticks / hz, rss_kib / 1024.0)
}
