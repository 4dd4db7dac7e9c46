//! `PICKUP_BUS` and what goes with it; a URL as it may be printed.

use super::BusKey;

/// `PICKUP_BUS` and what goes with it.
#[derive(Clone)]
pub struct BusConfig {
    /// `redis://` or `rediss://` (TLS), with a password or an ACL user and password if any.
    pub url: String,
    /// The servers' shared key: from `PICKUP_SECRET`, or `PICKUP_BUS_KEY`.
    pub key: BusKey,
    /// PEM certificates to trust for a `rediss://` server (`PICKUP_BUS_CA`), instead of the
    /// system's.
    pub ca: Option<Vec<u8>>,
    /// Tests only: drop every n-th fact heard (0: none).
    pub drop_every: u64,
}

impl std::fmt::Debug for BusConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BusConfig")
            .field("url", &redacted(&self.url))
            .field("ca", &self.ca.as_ref().map(Vec::len))
            .field("drop_every", &self.drop_every)
            .finish_non_exhaustive()
    }
}

/// `url` with its password, if any, replaced: what may be printed.
pub(crate) fn redacted(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        Ok(u) => u.to_string(),
        Err(_) => "(not a URL)".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_is_never_shown() {
        let shown = redacted("rediss://pickup:hunter2@redis.example:6380/0");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("redis.example:6380"), "{shown}");
        assert_eq!(redacted("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
        assert!(!redacted("redis://:s3cret@[::1").contains("s3cret"));
    }
}
