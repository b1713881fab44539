//! A 64-bit hash of a value, kept in place of the value where the controller only needs to
//! tell a recurrence from something new (an autoscaler's last error, its last warnings):
//! at 10,000 autoscalers the texts themselves would cost megabytes.

use std::hash::{DefaultHasher, Hash, Hasher as _};

/// The hash of `value` (stable within one run of the controller, which is all it is kept for).
pub fn digest<T: Hash + ?Sized>(value: &T) -> u64 {
    let mut hasher = DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}
