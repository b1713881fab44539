//! Pause annotations: how an operator freezes or bounds an autoscaler with one
//! `kubectl annotate`, with the meanings KEDA gives its `autoscaling.keda.sh/paused*`
//! annotations.

use std::fmt;

pub use foresight_api::pause::{PAUSED, PAUSED_REPLICAS, PAUSED_SCALE_IN, PAUSED_SCALE_OUT};

/// What the annotations ask for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pause {
    /// Hold the workload: at `replicas` when set, else at its current size.
    pub hold: bool,
    /// `paused-replicas`: the size to hold.
    pub replicas: Option<i32>,
    /// No scaling in.
    pub scale_in: bool,
    /// No scaling out.
    pub scale_out: bool,
    /// The hold comes from a `paused-replicas` that is not a number of replicas (so the
    /// target is held at its current size, and `paused`, which may not be set, is not to blame).
    pub held_for_bad_replicas: bool,
    /// Annotations whose values could not be read, each with the rule it broke. Such an
    /// annotation still pauses: an operator who tried to pause gets a pause, and a warning.
    pub problems: Vec<String>,
}

impl Pause {
    /// Reads the pause annotations among `annotations` (name, value); others are ignored.
    pub fn from_annotations<'a>(annotations: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut p = Pause::default();
        for (name, value) in annotations {
            let flag = || {
                match value.trim() {
                v if v.eq_ignore_ascii_case("true") => Ok(true),
                v if v.eq_ignore_ascii_case("false") => Ok(false),
                _ => Err(format!(
                    "metadata.annotations[{name}]: Invalid value: {value:?}: must be \"true\" or \"false\"; paused until it is"
                )),
            }
            };
            let set = |target: &mut bool, problems: &mut Vec<String>| match flag() {
                Ok(b) => *target |= b,
                Err(e) => {
                    *target = true;
                    problems.push(e);
                }
            };
            match name {
                PAUSED => set(&mut p.hold, &mut p.problems),
                PAUSED_SCALE_IN => set(&mut p.scale_in, &mut p.problems),
                PAUSED_SCALE_OUT => set(&mut p.scale_out, &mut p.problems),
                PAUSED_REPLICAS => match value.trim().parse::<i32>() {
                    Ok(n) if n >= 0 => {
                        p.hold = true;
                        p.replicas = Some(n);
                    }
                    _ => {
                        p.hold = true;
                        p.held_for_bad_replicas = true;
                        p.problems.push(format!(
                            "metadata.annotations[{name}]: Invalid value: {value:?}: must be a whole number of replicas, 0 or more; paused at the current size until it is"
                        ));
                    }
                },
                _ => {}
            }
        }
        p
    }

    /// Whether any annotation pauses something.
    pub fn any(&self) -> bool {
        self.hold || self.scale_in || self.scale_out
    }

    /// The condition reason: `Paused`, `PausedAtReplicas`, `ScaleInPaused`, `ScaleOutPaused`
    /// or `ScaleInAndOutPaused`.
    pub fn reason(&self) -> &'static str {
        match (self.hold, self.replicas, self.scale_in, self.scale_out) {
            (true, Some(_), _, _) => "PausedAtReplicas",
            (true, None, _, _) | (false, _, true, true) => "Paused",
            (false, _, true, false) => "ScaleInPaused",
            (false, _, false, true) => "ScaleOutPaused",
            (false, _, false, false) => "NotPaused",
        }
    }
}

impl fmt::Display for Pause {
    /// What the pause does, naming the annotation.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.hold, self.replicas) {
            (true, Some(n)) => write!(f, "{PAUSED_REPLICAS} holds the target at {n}"),
            (true, None) if self.held_for_bad_replicas => write!(
                f,
                "{PAUSED_REPLICAS} is not a number of replicas: the target is held at its current size"
            ),
            (true, None) => write!(f, "{PAUSED} holds the target at its current size"),
            (false, _) => match (self.scale_in, self.scale_out) {
                (true, true) => write!(
                    f,
                    "{PAUSED_SCALE_IN} and {PAUSED_SCALE_OUT} hold the target at its current size"
                ),
                (true, false) => write!(f, "{PAUSED_SCALE_IN}: no scaling in"),
                (false, true) => write!(f, "{PAUSED_SCALE_OUT}: no scaling out"),
                (false, false) => write!(f, "not paused"),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_four_annotations_as_keda_does() {
        let p = Pause::from_annotations([(PAUSED, "true"), ("other", "x")]);
        assert!(p.hold && p.replicas.is_none() && p.problems.is_empty());
        assert_eq!(p.reason(), "Paused");
        let p = Pause::from_annotations([(PAUSED, "false")]);
        assert!(!p.any());
        let p = Pause::from_annotations([(PAUSED_REPLICAS, "4"), (PAUSED, "false")]);
        assert_eq!(
            (p.hold, p.replicas),
            (true, Some(4)),
            "paused-replicas wins"
        );
        assert_eq!(p.reason(), "PausedAtReplicas");
        let p = Pause::from_annotations([(PAUSED_SCALE_IN, "true")]);
        assert_eq!((p.hold, p.scale_in, p.scale_out), (false, true, false));
        assert_eq!(p.reason(), "ScaleInPaused");
        let p = Pause::from_annotations([(PAUSED_SCALE_OUT, "True")]);
        assert_eq!(p.reason(), "ScaleOutPaused");
    }

    #[test]
    fn a_bad_value_pauses_and_says_which_annotation_and_rule() {
        let p = Pause::from_annotations([(PAUSED_REPLICAS, "-1")]);
        assert!(p.hold);
        assert_eq!(p.replicas, None, "held at the current size");
        assert!(
            p.problems[0].contains("paused-replicas"),
            "{:?}",
            p.problems
        );
        assert!(p.problems[0].contains("0 or more"));
        let p = Pause::from_annotations([(PAUSED_REPLICAS, "abc")]);
        assert_eq!(
            p.to_string(),
            "autoscaling.foresight.dev/paused-replicas is not a number of replicas: the target is held at its current size",
            "the pause is not blamed on `paused`, which was never set"
        );
        let p = Pause::from_annotations([(PAUSED, "yes")]);
        assert!(p.hold);
        assert!(p.problems[0].contains("must be \"true\" or \"false\""));
    }
}
