//! Pause annotations in the decision: the decision is still made and recorded (so the
//! explanation says what would happen), then the annotations hold or bound what is applied.

use super::Decision;
use crate::conditions::{self, PAUSED};
use crate::pause::Pause;

impl Decision {
    /// The count to apply once `pause` has had its say on `desired` (from `current`); sets
    /// the `Paused` condition and warns about annotations that could not be read.
    pub(super) fn pause(&mut self, pause: &Pause, current: i32, desired: i32) -> i32 {
        for problem in &pause.problems {
            self.warn("InvalidPauseAnnotation", problem.clone());
        }
        if !pause.any() {
            if conditions::get(&self.status.conditions, PAUSED).is_some() {
                self.set(PAUSED, false, "NotPaused", "no pause annotation is set");
            }
            return desired;
        }
        let message = pause.to_string();
        self.set(PAUSED, true, pause.reason(), &message);
        let held = match pause.replicas {
            Some(n) if pause.hold => n,
            _ if pause.hold => current,
            _ if pause.scale_in && desired < current => current,
            _ if pause.scale_out && desired > current => current,
            _ => desired,
        };
        if held != desired {
            self.limit("pause", desired, held, pause.reason(), &message);
        }
        if held != current {
            message.clone_into(&mut self.rescale_reason);
        }
        held
    }
}
