//! How the report writes numbers: the same number is always written the same way, so the
//! README can quote BENCHMARKS.md exactly.

pub fn rate(x: f64) -> String {
    if x >= 1000.0 {
        format!("{:.0}", x)
    } else if x >= 10.0 {
        format!("{:.1}", x)
    } else {
        format!("{:.2}", x)
    }
}

pub fn ms(x: f64) -> String {
    if x >= 100.0 {
        format!("{:.0}", x)
    } else if x >= 10.0 {
        format!("{:.1}", x)
    } else if x >= 1.0 {
        format!("{:.2}", x)
    } else {
        format!("{:.3}", x)
    }
}

/// `x` as [`ms`] writes it, or with as many more decimals as it takes to tell it from `limit`:
/// a verdict on 300.05 ms against 300 ms must not read "300 ms > 300 ms".
pub fn ms_against(x: f64, limit: f64) -> String {
    let plain = ms(x);
    if x == limit || plain != ms(limit) {
        return plain;
    }
    (1..=3)
        .map(|d| format!("{x:.d$}"))
        .find(|s| s.parse::<f64>().ok() != Some(limit))
        .unwrap_or(plain)
}

/// A ratio of two measurements, as `7.6×`.
pub fn times(x: f64) -> String {
    if x >= 100.0 {
        format!("{:.0}×", x)
    } else if x >= 1.0 {
        format!("{:.1}×", x)
    } else {
        // Below one a single decimal hides the difference a target is about (0.16 vs 0.2).
        format!("{:.2}×", x)
    }
}

pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A count that may be fractional (an average), as `24` or `24.5`.
pub fn count(x: f64) -> String {
    if (x - x.round()).abs() < 0.05 {
        thousands(x.round() as u64)
    } else {
        format!("{:.1}", x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_the_report_writes_them() {
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(999), "999");
        assert_eq!(rate(25_890.4), "25890");
        assert_eq!(rate(44.54), "44.5");
        assert_eq!(ms(0.1494), "0.149");
        assert_eq!(ms(351.2), "351");
        assert_eq!(times(7.64), "7.6×");
        assert_eq!(count(24.0), "24");
        assert_eq!(count(24.5), "24.5");
    }

    #[test]
    fn a_number_beside_its_limit_shows_the_difference() {
        assert_eq!(ms_against(300.05, 300.0), "300.1");
        assert_eq!(ms_against(299.96, 300.0), "299.96");
        assert_eq!(ms_against(300.0, 300.0), "300");
        assert_eq!(ms_against(351.2, 300.0), "351");
    }
}
