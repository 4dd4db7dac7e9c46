//! Value parsers the flags share.

use std::time::Duration;

pub(super) fn positive_duration(s: &str) -> Result<Duration, String> {
    match humantime::parse_duration(s) {
        Ok(d) if d.is_zero() => Err("must be more than 0s".into()),
        Ok(d) => Ok(d),
        Err(e) => Err(e.to_string()),
    }
}
