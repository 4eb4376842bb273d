//! Timing a short operation within a slice of time: a warm-up, a calibration that picks how
//! many iterations make one sample long enough to time (timer overhead and resolution vanish),
//! then samples until the slice is spent.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// How long to sample, and how many samples at least and at most.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SampleSpec {
    /// The time to spend on samples (calibration included).
    pub slice: Duration,
    /// Samples at least (even past the slice).
    pub min_samples: usize,
    /// Samples at most (even within the slice).
    pub max_samples: usize,
}

/// The samples of one operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sampled {
    /// Iterations per sample.
    pub iterations: u64,
    /// Wall time of each sample, ns.
    pub samples_ns: Vec<u64>,
}

/// Shortest sample worth timing: far above the clock's resolution and a call's overhead.
const MIN_SAMPLE: Duration = Duration::from_micros(100);
/// Longest sample: more, shorter samples spread disturbances better.
const MAX_SAMPLE: Duration = Duration::from_millis(50);

/// Samples `op` (one iteration per call; its result is kept from the optimizer).
pub fn sample(spec: &SampleSpec, mut op: impl FnMut() -> u64) -> Sampled {
    let started = Instant::now();
    black_box(op());
    // Aim at about ten samples in the slice.
    let target = (spec.slice / 10).clamp(MIN_SAMPLE, MAX_SAMPLE);
    let mut iterations: u64 = 1;
    let per_iteration = loop {
        let elapsed = time(&mut op, iterations);
        if elapsed >= target / 4 || iterations >= 1 << 30 {
            break elapsed.as_nanos() as f64 / iterations as f64;
        }
        iterations *= 2;
    };
    let iterations = ((target.as_nanos() as f64 / per_iteration.max(1e-3)) as u64).max(1);
    let mut samples_ns = Vec::new();
    while samples_ns.len() < spec.min_samples.max(1)
        || (samples_ns.len() < spec.max_samples && started.elapsed() < spec.slice)
    {
        samples_ns.push(time(&mut op, iterations).as_nanos() as u64);
    }
    Sampled {
        iterations,
        samples_ns,
    }
}

fn time(op: &mut impl FnMut() -> u64, iterations: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..iterations {
        black_box(op());
    }
    start.elapsed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn respects_the_sample_counts() {
        let mut x = 0u64;
        let spec = SampleSpec {
            slice: Duration::ZERO,
            min_samples: 3,
            max_samples: 5,
        };
        let s = sample(&spec, || {
            x = x.wrapping_mul(31).wrapping_add(7);
            x
        });
        assert_eq!(s.samples_ns.len(), 3);
        assert!(s.iterations >= 1);
        let spec = SampleSpec {
            slice: Duration::from_millis(20),
            min_samples: 1,
            max_samples: 4,
        };
        let s = sample(&spec, || black_box(1));
        assert!((1..=4).contains(&s.samples_ns.len()));
    }
}
