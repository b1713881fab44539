//! What can stop a simulation before it starts. Once running, a simulation cannot fail: every
//! problem the decision meets (a metric it cannot read, a forecast not ready) is part of what
//! is simulated and shows up in the explanations.

/// A simulation that cannot be run as asked.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SimError {
    /// The load trace cannot be used.
    #[error("trace: {0}")]
    Trace(String),
    /// A policy cannot be simulated (invalid spec, or a metric the model cannot feed).
    #[error("policy {policy}: {message}")]
    Policy {
        /// The policy's name.
        policy: String,
        /// What is wrong, with field paths where the spec is at fault.
        message: String,
    },
    /// A model setting is out of range.
    #[error("model: {0}")]
    Model(String),
}
