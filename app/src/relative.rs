//! "3 min. ago": which unit and how many of it a card shows for a time, from two instants in
//! milliseconds. The words come from the browser's `Intl.RelativeTimeFormat` in the viewer's
//! locale (`components::card`), so this part is pure and the same in every language.

/// `Intl.RelativeTimeFormat`'s options for a card's time: "3 min. ago", "yesterday", "now".
pub const TIME_WORDS: [(&str, &str); 2] = [("numeric", "auto"), ("style", "short")];
/// `Intl.DateTimeFormat`'s options for the date and time a card's relative time stands for.
pub const DATE_WORDS: [(&str, &str); 2] = [("dateStyle", "long"), ("timeStyle", "short")];

/// A unit `Intl.RelativeTimeFormat` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Second,
    Minute,
    Hour,
    Day,
}

impl Unit {
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Second => "second",
            Unit::Minute => "minute",
            Unit::Hour => "hour",
            Unit::Day => "day",
        }
    }
}

/// How long ago `then_ms` was, as a negative count of a unit (`Intl` words -1 day "yesterday"
/// and 0 seconds "now" with `numeric: "auto"`). Under 45 s it is "now": a time in the future
/// (clocks disagree) too.
pub fn relative_time(then_ms: f64, now_ms: f64) -> (f64, Unit) {
    let secs = ((now_ms - then_ms) / 1000.0).max(0.0) as u64;
    let (n, unit) = match secs {
        0..=44 => (0, Unit::Second),
        45..=89 => (1, Unit::Minute),
        90..=3_599 => ((secs + 30) / 60, Unit::Minute),
        3_600..=5_399 => (1, Unit::Hour),
        5_400..=86_399 => ((secs + 1_800) / 3_600, Unit::Hour),
        _ => (secs / 86_400, Unit::Day),
    };
    // Not -0: a negative zero is "in the past" to some formatters, "0 seconds ago".
    (if n == 0 { 0.0 } else { -(n as f64) }, unit)
}

#[cfg(test)]
mod tests {
    use super::{relative_time, Unit};

    #[test]
    fn units_for_each_range() {
        let now = 1_000_000_000.0;
        let ago = |secs: f64| relative_time(now - secs * 1000.0, now);
        assert_eq!(ago(10.0), (0.0, Unit::Second));
        assert_eq!(
            relative_time(now + 5_000.0, now),
            (0.0, Unit::Second),
            "clock skew is not 'in the future'"
        );
        assert_eq!(ago(60.0), (-1.0, Unit::Minute));
        assert_eq!(ago(5.0 * 60.0), (-5.0, Unit::Minute));
        assert_eq!(ago(2.0 * 3_600.0), (-2.0, Unit::Hour));
        assert_eq!(ago(30.0 * 3_600.0), (-1.0, Unit::Day));
        assert_eq!(ago(3.0 * 86_400.0), (-3.0, Unit::Day));
    }
}
