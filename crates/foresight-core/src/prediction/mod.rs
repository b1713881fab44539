//! Prediction (see issue: prediction).
