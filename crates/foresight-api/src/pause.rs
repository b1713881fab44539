//! The pause annotations' names, Foresight's and KEDA's (the decision core reads their
//! values; `foresight import` renames KEDA's).

/// Stops scaling (`"true"`); the workload keeps its size.
pub const PAUSED: &str = "autoscaling.foresight.dev/paused";
/// Scales the workload to this many replicas and stops scaling there.
pub const PAUSED_REPLICAS: &str = "autoscaling.foresight.dev/paused-replicas";
/// Stops scaling in (down) only (`"true"`).
pub const PAUSED_SCALE_IN: &str = "autoscaling.foresight.dev/paused-scale-in";
/// Stops scaling out (up) only (`"true"`).
pub const PAUSED_SCALE_OUT: &str = "autoscaling.foresight.dev/paused-scale-out";

/// KEDA's name for each of them.
pub const KEDA_NAMES: [(&str, &str); 4] = [
    ("autoscaling.keda.sh/paused", PAUSED),
    ("autoscaling.keda.sh/paused-replicas", PAUSED_REPLICAS),
    ("autoscaling.keda.sh/paused-scale-in", PAUSED_SCALE_IN),
    ("autoscaling.keda.sh/paused-scale-out", PAUSED_SCALE_OUT),
];
