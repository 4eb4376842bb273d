//! Summaries of repeated timings: the median (what tables show: robust to the odd interrupted
//! sample), the extremes and the quartiles (how much the samples spread).

/// A summary of samples (any unit).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// The smallest sample.
    pub min: f64,
    /// The first quartile.
    pub q1: f64,
    /// The median.
    pub median: f64,
    /// The third quartile.
    pub q3: f64,
    /// The largest sample.
    pub max: f64,
}

impl Summary {
    /// The summary of `samples`; `None` when there are none.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        Some(Summary {
            min: sorted[0],
            q1: quantile(&sorted, 0.25),
            median: quantile(&sorted, 0.5),
            q3: quantile(&sorted, 0.75),
            max: sorted[sorted.len() - 1],
        })
    }

    /// The interquartile range relative to the median (0 for a single sample).
    pub fn relative_iqr(&self) -> f64 {
        if self.median > 0.0 {
            (self.q3 - self.q1) / self.median
        } else {
            0.0
        }
    }
}

/// The `p`-quantile of sorted, non-empty data, interpolating linearly between neighbours (the
/// median of an even count is the mean of the middle two).
fn quantile(sorted: &[f64], p: f64) -> f64 {
    let pos = p * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// `x` rounded to `digits` significant digits: the figures a report stores, which a JSON reader
/// parses back to exactly the same `f64` (short decimals take the exact path of every parser).
pub fn round_significant(x: f64, digits: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let magnitude = x.abs().log10().floor() as i32;
    let scale = 10f64.powi(digits - 1 - magnitude);
    if scale.is_finite() && scale > 0.0 {
        let rounded = (x * scale).round() / scale;
        // Round-trip through the shortest decimal so the value is the one a parser yields.
        format!("{rounded}").parse().unwrap_or(rounded)
    } else {
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_quartiles() {
        let s = Summary::of(&[5.0, 1.0, 3.0, 2.0, 4.0]).unwrap();
        assert_eq!(
            (s.min, s.q1, s.median, s.q3, s.max),
            (1.0, 2.0, 3.0, 4.0, 5.0)
        );
        let s = Summary::of(&[4.0, 1.0]).unwrap();
        assert_eq!(s.median, 2.5);
        let s = Summary::of(&[7.0]).unwrap();
        assert_eq!(
            (s.min, s.median, s.max, s.relative_iqr()),
            (7.0, 7.0, 7.0, 0.0)
        );
        assert!(Summary::of(&[]).is_none());
    }

    #[test]
    fn rounding_keeps_significant_digits() {
        assert_eq!(round_significant(123_456.789, 4), 123_500.0);
        assert_eq!(round_significant(0.000_123_456, 3), 0.000_123);
        assert_eq!(round_significant(0.0, 3), 0.0);
        assert_eq!(round_significant(-2.345_678, 3), -2.35);
    }
}
