//! Load traces.
