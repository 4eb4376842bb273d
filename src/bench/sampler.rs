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
    sample_interleaved(spec, 1, |_| op()).remove(0)
}

/// Samples `n` variants of an operation (`op(i)` runs variant `i` once: the tiers of one
/// kernel) in turns — a sample of each, then again — so that a disturbance on a busy machine
/// falls on all of them alike instead of on whichever ran at the time. `spec.slice` is the time
/// for all of them together; each gets `min_samples` to `max_samples` samples.
pub fn sample_interleaved(
    spec: &SampleSpec,
    n: usize,
    mut op: impl FnMut(usize) -> u64,
) -> Vec<Sampled> {
    let started = Instant::now();
    // Aim at about ten samples of each variant in the slice.
    let target = (spec.slice / (10 * n.max(1) as u32)).clamp(MIN_SAMPLE, MAX_SAMPLE);
    let mut out: Vec<Sampled> = (0..n)
        .map(|i| {
            black_box(op(i));
            let mut iterations: u64 = 1;
            let per_iteration = loop {
                let elapsed = time(&mut op, i, iterations);
                if elapsed >= target / 4 || iterations >= 1 << 30 {
                    break elapsed.as_nanos() as f64 / iterations as f64;
                }
                iterations *= 2;
            };
            Sampled {
                iterations: ((target.as_nanos() as f64 / per_iteration.max(1e-3)) as u64).max(1),
                samples_ns: Vec::new(),
            }
        })
        .collect();
    let mut taken = 0;
    while taken < spec.min_samples.max(1)
        || (taken < spec.max_samples && started.elapsed() < spec.slice)
    {
        for (i, sampled) in out.iter_mut().enumerate() {
            let ns = time(&mut op, i, sampled.iterations).as_nanos() as u64;
            sampled.samples_ns.push(ns);
        }
        taken += 1;
    }
    out
}

fn time(op: &mut impl FnMut(usize) -> u64, i: usize, iterations: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..iterations {
        black_box(op(i));
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

    #[test]
    fn interleaved_variants_get_equal_turns() {
        let spec = SampleSpec {
            slice: Duration::from_millis(5),
            min_samples: 2,
            max_samples: 6,
        };
        let mut calls = [0u64; 3];
        let out = sample_interleaved(&spec, 3, |i| {
            calls[i] += 1;
            calls[i]
        });
        assert_eq!(out.len(), 3);
        let n = out[0].samples_ns.len();
        assert!((2..=6).contains(&n));
        assert!(
            out.iter()
                .all(|s| s.samples_ns.len() == n && s.iterations >= 1)
        );
        assert!(calls.iter().all(|&c| c > 0));
    }
}
