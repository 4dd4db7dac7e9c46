//! "3 min ago": the words a card shows for a time, from two instants in milliseconds.

pub fn relative_time(then_ms: f64, now_ms: f64) -> String {
    let secs = ((now_ms - then_ms) / 1000.0).max(0.0) as u64;
    match secs {
        0..=44 => "just now".to_string(),
        45..=89 => "1 min ago".to_string(),
        90..=3_599 => format!("{} min ago", (secs + 30) / 60),
        3_600..=5_399 => "1 h ago".to_string(),
        5_400..=86_399 => format!("{} h ago", (secs + 1_800) / 3_600),
        86_400..=172_799 => "yesterday".to_string(),
        _ => format!("{} days ago", secs / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::relative_time;

    #[test]
    fn words_for_each_range() {
        let now = 1_000_000_000.0;
        assert_eq!(relative_time(now - 10_000.0, now), "just now");
        assert_eq!(
            relative_time(now + 5_000.0, now),
            "just now",
            "clock skew is not 'in the future'"
        );
        assert_eq!(relative_time(now - 60_000.0, now), "1 min ago");
        assert_eq!(relative_time(now - 5.0 * 60_000.0, now), "5 min ago");
        assert_eq!(relative_time(now - 2.0 * 3_600_000.0, now), "2 h ago");
        assert_eq!(relative_time(now - 30.0 * 3_600_000.0, now), "yesterday");
        assert_eq!(relative_time(now - 3.0 * 86_400_000.0, now), "3 days ago");
    }
}
