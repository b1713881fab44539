//! The pause annotations on an autoscaler, as `kubectl annotate` may set them. Input lines:
//! the values of paused, paused-replicas, paused-scale-in and paused-scale-out.
#![no_main]

use foresight_core::pause::{Pause, PAUSED, PAUSED_REPLICAS, PAUSED_SCALE_IN, PAUSED_SCALE_OUT};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let names = [PAUSED, PAUSED_REPLICAS, PAUSED_SCALE_IN, PAUSED_SCALE_OUT];
    let pause = Pause::from_annotations(names.into_iter().zip(text.split('\n')));
    let _ = (pause.reason(), pause.to_string(), pause.any());
});
