//! How many cards a page has: the default, the bounds, and the one rule by which every door
//! judges the number a caller asks for (`/recent?cap=`, `/live?cap=`, each `filter:cap` of
//! `/live?views=`, the `recent` server function's `cap`): none asked is the server's default; a
//! number outside [`MIN_CAP`]..=[`MAX_CAP`] is brought to the nearer bound, never refused, as a
//! page size is; what is not a number is refused by the door, with a message that says so.
//!
//! Host pages' options (`cap="…"` on the element, `#cap=` on the home page) are read by the
//! widget's own rule (`options.rs`), which clamps into these same bounds and warns.

pub const DEFAULT_CAP: u32 = 8;
pub const MIN_CAP: u32 = 1;
pub const MAX_CAP: u32 = 50;

/// A page's number of cards, within [`MIN_CAP`]..=[`MAX_CAP`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cap(u32);

impl Cap {
    pub const DEFAULT: Cap = Cap(DEFAULT_CAP);
    pub const MIN: Cap = Cap(MIN_CAP);
    pub const MAX: Cap = Cap(MAX_CAP);

    /// The cap a page is cut at when a caller asked for `asked`.
    pub fn judge(asked: Option<u32>, default: Cap) -> Cap {
        asked.map_or(default, Cap::clamped)
    }

    /// `n`, brought into the bounds.
    pub fn clamped(n: u32) -> Cap {
        Cap(n.clamp(MIN_CAP, MAX_CAP))
    }

    /// `n` if it is within the bounds (a setting, where a number out of range is a mistake to
    /// report, not a wish to honour).
    pub fn within(n: u32) -> Option<Cap> {
        (MIN_CAP..=MAX_CAP).contains(&n).then_some(Cap(n))
    }

    pub fn get(self) -> u32 {
        self.0
    }
}

impl std::fmt::Display for Cap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cap_asked_for_is_brought_into_the_bounds_and_none_is_the_default() {
        let default = Cap::clamped(20);
        assert_eq!(Cap::judge(None, default), default);
        assert_eq!(Cap::judge(Some(0), default), Cap::MIN);
        assert_eq!(Cap::judge(Some(1), default).get(), 1);
        assert_eq!(Cap::judge(Some(50), default), Cap::MAX);
        assert_eq!(Cap::judge(Some(99), default), Cap::MAX);
        assert_eq!(Cap::judge(Some(u32::MAX), default), Cap::MAX);
        assert_eq!(Cap::within(0), None);
        assert_eq!(Cap::within(51), None);
        assert_eq!(Cap::within(8), Some(Cap::DEFAULT));
    }
}
