//! Item ids: `{inv}_{key}` with `inv = 9999999999999 - created_ms`, zero-padded to 13 digits.
//!
//! Ascending byte order of ids is newest first, so a store that lists in key order can stop
//! after its first page; and the creation time and the sub-key come from the id alone.

use super::names::{NameError, SubKey};
use std::cmp::Ordering;
use std::fmt;
use thiserror::Error;

/// The largest creation time an id can carry (in the year 2286).
pub(crate) const MAX_CREATED_MS: u64 = 9_999_999_999_999;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ItemId {
    created_ms: u64,
    key: SubKey,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum IdError {
    #[error("an id is 13 digits, '_', then the item's key, e.g. 8234567890123_run-42")]
    Shape,
    #[error(transparent)]
    Key(#[from] NameError),
    #[error("a creation time after {MAX_CREATED_MS} ms cannot be encoded")]
    TooLate,
}

impl ItemId {
    pub fn new(created_ms: u64, key: SubKey) -> Result<Self, IdError> {
        if created_ms > MAX_CREATED_MS {
            return Err(IdError::TooLate);
        }
        Ok(ItemId { created_ms, key })
    }

    pub fn parse(s: &str) -> Result<Self, IdError> {
        let (inv, key) = s.split_once('_').ok_or(IdError::Shape)?;
        if inv.len() != 13 || !inv.bytes().all(|b| b.is_ascii_digit()) {
            return Err(IdError::Shape);
        }
        let inv: u64 = inv.parse().map_err(|_| IdError::Shape)?;
        Ok(ItemId {
            created_ms: MAX_CREATED_MS - inv,
            key: SubKey::parse(key)?,
        })
    }

    pub fn created_ms(&self) -> u64 {
        self.created_ms
    }

    pub fn key(&self) -> &SubKey {
        &self.key
    }
}

impl fmt::Display for ItemId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:013}_{}", MAX_CREATED_MS - self.created_ms, self.key)
    }
}

/// The order of the ids' text, which is newest first.
impl Ord for ItemId {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .created_ms
            .cmp(&self.created_ms)
            .then_with(|| self.key.as_str().cmp(other.key.as_str()))
    }
}

impl PartialOrd for ItemId {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn key(s: &str) -> SubKey {
        SubKey::parse(s).unwrap()
    }

    #[test]
    fn encodes_and_parses() {
        let id = ItemId::new(1_700_000_000_000, key("run-42")).unwrap();
        assert_eq!(id.to_string(), "8299999999999_run-42");
        assert_eq!(ItemId::parse("8299999999999_run-42").unwrap(), id);
        assert_eq!(id.created_ms(), 1_700_000_000_000);
        assert_eq!(id.key().as_str(), "run-42");
    }

    #[test]
    fn rejects_malformed() {
        for bad in [
            "",
            "_a",
            "123_a",
            "82999999999990_a",
            "829999999999x_a",
            "8299999999999_",
            "8299999999999_a/b",
            "8299999999999-a",
        ] {
            assert!(ItemId::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            ItemId::new(MAX_CREATED_MS + 1, key("a")),
            Err(IdError::TooLate)
        );
    }

    proptest! {
        #[test]
        fn text_order_is_newest_first(a in 0..=MAX_CREATED_MS, b in 0..=MAX_CREATED_MS, ka in "[a-z]{1,3}", kb in "[a-z]{1,3}") {
            let x = ItemId::new(a, key(&ka)).unwrap();
            let y = ItemId::new(b, key(&kb)).unwrap();
            prop_assert_eq!(x.to_string().cmp(&y.to_string()), x.cmp(&y));
            if a > b { prop_assert!(x < y); }
            prop_assert_eq!(ItemId::parse(&x.to_string()).unwrap(), x);
        }
    }
}
