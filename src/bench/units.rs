//! Numbers as tables print them: throughputs with three significant figures, counts with a
//! metric suffix.

/// `x` with three significant figures (`0.123`, `1.23`, `12.3`, `123`, `1234`).
pub fn three_figures(x: f64) -> String {
    if !x.is_finite() {
        return "–".to_owned();
    }
    let a = x.abs();
    if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// A rate with a metric suffix: `950`, `12.3 k`, `4.56 M`, `1.23 G`.
pub fn metric(x: f64) -> String {
    for (scale, suffix) in [(1e9, " G"), (1e6, " M"), (1e3, " k")] {
        if x >= scale {
            return format!("{}{suffix}", three_figures(x / scale));
        }
    }
    three_figures(x)
}

/// A speed-up factor: `1.00×`, `2.35×`, `12.3×`.
pub fn factor(x: f64) -> String {
    format!("{}×", three_figures(x))
}

/// A kernel's input size: `64 B`, `4 KiB`, `1 MiB`, `10.5 KiB`.
pub fn size(bytes: u64) -> String {
    super::machine::format_bytes(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures() {
        assert_eq!(three_figures(0.12345), "0.123");
        assert_eq!(three_figures(1.2345), "1.23");
        assert_eq!(three_figures(12.345), "12.3");
        assert_eq!(three_figures(1234.5), "1234");
        assert_eq!(metric(950.0), "950");
        assert_eq!(metric(4_560_000.0), "4.56 M");
        assert_eq!(factor(2.345), "2.35×");
    }
}
