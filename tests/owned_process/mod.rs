//! Processes a test starts are the test's to end. A test that only kills its direct child
//! leaves the child's own children running (a browser's renderers, the program `script`
//! runs on its terminal), and a signal such as SIGHUP does not stop a program started under
//! `nohup`; so a test's process runs in a process group of its own, and the whole group is
//! killed when the test lets go of it, passed, failed or panicked.

#![allow(dead_code)] // Each test file uses part of it.

use std::ops::{Deref, DerefMut};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use std::os::unix::process::CommandExt as _;

/// A child process and its process group, killed (SIGKILL) and reaped on drop.
pub struct Owned {
    child: Child,
    /// Processes outside the group that the child started and named (see [`Owned::also_end`]).
    others: Vec<u32>,
}

impl Owned {
    /// Starts `command` as the leader of a new process group.
    pub fn spawn(command: &mut Command) -> std::io::Result<Owned> {
        let child = command.process_group(0).spawn()?;
        Ok(Owned {
            child,
            others: Vec::new(),
        })
    }

    /// Ends the process `pid` too, with the group: for a process the child started in a
    /// session of its own (as `script` does), which the group's kill does not reach.
    pub fn also_end(&mut self, pid: u32) {
        self.others.push(pid);
    }

    /// Kills the group and the other processes, and reaps the child.
    #[allow(unsafe_code)] // kill(2), which std does not wrap for groups.
    pub fn end(&mut self) {
        let group = i32::try_from(self.child.id()).unwrap_or(0);
        if group > 0 {
            // SAFETY: kill(2) with a negative pid signals the process group the child leads;
            // it reads no memory of ours.
            unsafe {
                libc::kill(-group, libc::SIGKILL);
            }
        }
        for pid in &self.others {
            kill(*pid);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Deref for Owned {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.child
    }
}

impl DerefMut for Owned {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.child
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        self.end();
    }
}

/// Sends SIGKILL to `pid`.
#[allow(unsafe_code)] // kill(2), for a process that is not our child.
pub fn kill(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        if pid > 0 {
            // SAFETY: kill(2) takes plain integers.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
}

/// Whether `pid` is still running: it exists and is not a zombie waiting to be reaped.
pub fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name, which is in parentheses and may hold spaces.
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z') && !rest.starts_with('X')),
        Err(_) => false,
    }
}

/// Waits up to `limit` for `pid` to stop running; whether it did.
pub fn stops_within(pid: u32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while running(pid) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}
