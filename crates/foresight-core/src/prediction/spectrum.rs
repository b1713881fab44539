//! Real-input FFTs of one length, planned once, with buffers reused across calls.
//!
//! Crane uses go-dsp's complex DFT of the real signal, `X_k = Σ x_n e^{-2πikn/N}`
//! (unnormalized), and its inverse with the `1/N` factor. realfft computes the same forward
//! transform but returns only the half spectrum `X_0 ..= X_{N/2}`: for real input the other
//! half is the complex conjugate mirror, `X_{N-k} = conj(X_k)`. Its inverse is unnormalized
//! and assumes that mirror, so [`Fft::inverse`] divides by `N` and the callers that
//! manipulate bins say how they treat the mirror half (see `estimator.rs`).

use std::sync::Arc;

use realfft::num_complex::Complex;
use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};

/// Why a transform could not run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpectrumError {
    /// The transform length is zero.
    #[error("cannot transform an empty signal")]
    Empty,
    /// A buffer does not match the planned length.
    #[error("signal of {got} samples given to a transform planned for {expected}")]
    Length {
        /// The planned length.
        expected: usize,
        /// The length given.
        got: usize,
    },
    /// realfft refused the buffers (cannot happen with the lengths checked above).
    #[error("FFT failed: {0}")]
    Fft(String),
}

/// Plans shared by every transform of a prediction: planning a transform costs about as much
/// as running it ten times, and realfft reuses a plan for every later request of its length.
pub struct Planners {
    /// Double precision, for everything that shapes the forecast.
    pub(crate) f64: RealFftPlanner<f64>,
    /// Single precision, for the shuffled spectra of the period detector's threshold only.
    pub(crate) f32: RealFftPlanner<f32>,
    /// The period detector's shuffles of the last length and seed (see `period.rs`).
    pub(crate) shuffles: super::period::Shuffles,
}

impl Default for Planners {
    fn default() -> Self {
        Planners {
            f64: RealFftPlanner::new(),
            f32: RealFftPlanner::new(),
            shuffles: super::period::Shuffles::default(),
        }
    }
}

/// A single-precision forward real FFT of length `N` with its buffers (see `period.rs` for the
/// one place it is used and why).
pub struct ForwardF32 {
    forward: Arc<dyn RealToComplex<f32>>,
    input: Vec<f32>,
    spectrum: Vec<Complex<f32>>,
    scratch: Vec<Complex<f32>>,
}

impl ForwardF32 {
    /// Plans the transform of length `len`.
    pub fn new(planner: &mut RealFftPlanner<f32>, len: usize) -> Result<Self, SpectrumError> {
        if len == 0 {
            return Err(SpectrumError::Empty);
        }
        let forward = planner.plan_fft_forward(len);
        Ok(ForwardF32 {
            input: forward.make_input_vec(),
            spectrum: forward.make_output_vec(),
            scratch: forward.make_scratch_vec(),
            forward,
        })
    }

    /// The buffer that [`ForwardF32::transform`] transforms.
    pub fn input_mut(&mut self) -> &mut [f32] {
        &mut self.input
    }

    /// The half spectrum of what is in [`ForwardF32::input_mut`] (which it overwrites).
    pub fn transform(&mut self) -> Result<&[Complex<f32>], SpectrumError> {
        self.forward
            .process_with_scratch(&mut self.input, &mut self.spectrum, &mut self.scratch)
            .map_err(|e| SpectrumError::Fft(e.to_string()))?;
        Ok(&self.spectrum)
    }
}

/// Forward and inverse real FFTs of length `N`, with their work buffers.
pub struct Fft {
    len: usize,
    forward: Arc<dyn RealToComplex<f64>>,
    inverse: Arc<dyn ComplexToReal<f64>>,
    input: Vec<f64>,
    spectrum: Vec<Complex<f64>>,
    output: Vec<f64>,
    scratch: Vec<Complex<f64>>,
}

impl Fft {
    /// Plans both transforms of length `len` (realfft picks the algorithm for the length's
    /// factors; a planner shared between lengths reuses its plans).
    pub fn new(planner: &mut RealFftPlanner<f64>, len: usize) -> Result<Self, SpectrumError> {
        if len == 0 {
            return Err(SpectrumError::Empty);
        }
        let forward = planner.plan_fft_forward(len);
        let inverse = planner.plan_fft_inverse(len);
        let scratch_len = forward.get_scratch_len().max(inverse.get_scratch_len());
        Ok(Fft {
            len,
            input: forward.make_input_vec(),
            spectrum: forward.make_output_vec(),
            output: inverse.make_output_vec(),
            scratch: vec![Complex::new(0.0, 0.0); scratch_len],
            forward,
            inverse,
        })
    }

    /// Plans with a planner of its own.
    pub fn with_len(len: usize) -> Result<Self, SpectrumError> {
        Fft::new(&mut RealFftPlanner::new(), len)
    }

    /// The signal length `N`.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: a zero length cannot be planned.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The half spectrum `X_0 ..= X_{N/2}` of `signal` (unnormalized, as go-dsp).
    pub fn forward(&mut self, signal: &[f64]) -> Result<&[Complex<f64>], SpectrumError> {
        if signal.len() != self.len {
            return Err(SpectrumError::Length {
                expected: self.len,
                got: signal.len(),
            });
        }
        self.input.copy_from_slice(signal);
        self.forward_input()
    }

    /// The buffer that [`Fft::forward_input`] transforms, for callers that fill it in place.
    pub fn input_mut(&mut self) -> &mut [f64] {
        &mut self.input
    }

    /// The half spectrum of what is in [`Fft::input_mut`] (which the transform overwrites).
    pub fn forward_input(&mut self) -> Result<&[Complex<f64>], SpectrumError> {
        self.forward
            .process_with_scratch(&mut self.input, &mut self.spectrum, &mut self.scratch)
            .map_err(|e| SpectrumError::Fft(e.to_string()))?;
        Ok(&self.spectrum)
    }

    /// `Re(IFFT(X))` with the `1/N` factor, where `X` is the Hermitian spectrum whose lower
    /// half is `half` (`N/2 + 1` bins). The imaginary parts of `X_0` and, for even `N`,
    /// `X_{N/2}` are ignored, as the real part of a full inverse ignores them.
    pub fn inverse(&mut self, half: &[Complex<f64>]) -> Result<&[f64], SpectrumError> {
        if half.len() != self.spectrum.len() {
            return Err(SpectrumError::Length {
                expected: self.spectrum.len(),
                got: half.len(),
            });
        }
        self.spectrum.copy_from_slice(half);
        if let Some(first) = self.spectrum.first_mut() {
            first.im = 0.0;
        }
        if self.len.is_multiple_of(2) {
            if let Some(last) = self.spectrum.last_mut() {
                last.im = 0.0;
            }
        }
        self.inverse
            .process_with_scratch(&mut self.spectrum, &mut self.output, &mut self.scratch)
            .map_err(|e| SpectrumError::Fft(e.to_string()))?;
        // realfft's inverse is unnormalized; go-dsp's IFFT divides by N.
        let scale = 1.0 / self.len as f64;
        for y in &mut self.output {
            *y *= scale;
        }
        Ok(&self.output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The textbook DFT, for comparison.
    fn dft(x: &[f64]) -> Vec<Complex<f64>> {
        let n = x.len();
        (0..n)
            .map(|k| {
                x.iter()
                    .enumerate()
                    .fold(Complex::new(0.0, 0.0), |acc, (j, &v)| {
                        let angle = -2.0 * std::f64::consts::PI * (k * j) as f64 / n as f64;
                        acc + Complex::new(angle.cos(), angle.sin()) * v
                    })
            })
            .collect()
    }

    #[test]
    fn forward_matches_the_unnormalized_dft_lower_half() {
        for n in [1usize, 2, 7, 8, 12, 45] {
            let x: Vec<f64> = (0..n).map(|i| ((i * 7 + 3) % 11) as f64 - 4.5).collect();
            let full = dft(&x);
            let mut fft = Fft::with_len(n).unwrap();
            let half = fft.forward(&x).unwrap().to_vec();
            assert_eq!(half.len(), n / 2 + 1);
            for (k, (a, b)) in half.iter().zip(&full).enumerate() {
                assert!((a - b).norm() < 1e-9, "n={n} k={k}: {a} vs {b}");
            }
        }
    }

    #[test]
    fn inverse_undoes_forward_with_the_one_over_n_factor() {
        for n in [1usize, 2, 9, 16, 1440] {
            let x: Vec<f64> = (0..n)
                .map(|i| (i as f64 * 0.37).sin() * 10.0 + 3.0)
                .collect();
            let mut fft = Fft::with_len(n).unwrap();
            let half = fft.forward(&x).unwrap().to_vec();
            let y = fft.inverse(&half).unwrap();
            for (a, b) in x.iter().zip(y) {
                assert!((a - b).abs() < 1e-9, "n={n}: {a} vs {b}");
            }
        }
    }

    #[test]
    fn rejects_wrong_lengths_and_empty_plans() {
        assert_eq!(Fft::with_len(0).err(), Some(SpectrumError::Empty));
        let mut fft = Fft::with_len(4).unwrap();
        assert_eq!(
            fft.forward(&[1.0; 3]).err(),
            Some(SpectrumError::Length {
                expected: 4,
                got: 3
            })
        );
        assert_eq!(
            fft.inverse(&[Complex::new(0.0, 0.0); 2]).err(),
            Some(SpectrumError::Length {
                expected: 3,
                got: 2
            })
        );
    }
}
