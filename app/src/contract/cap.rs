//! How many cards a page has: the default, the bounds, and the one rule by which every door
//! judges the number a caller asks for (`/recent?cap=`, `/live?cap=`, each `filter:cap` of
//! `/live?views=`, the `recent` server function's `cap`): none asked is the server's default; a
//! number outside [`MIN_CAP`]..=[`MAX_CAP`] is brought to the nearer bound, never refused, as a
//! page size is; what is not a number is refused by the door, with a message that says so.
//!
//! A host page's option (`cap="…"` on the element, `#cap=` on the home page, `mount()`'s `cap`)
//! is any number, or text that is one (`options.rs` reads it, and warns): [`Cap::of_number`]
//! judges it by the same rule, with what is no number for a cap (NaN, infinite, negative, beyond
//! [`NONSENSE_ABOVE`]) none. app/tests/cases/options.json holds the cases the loader's early
//! request (public/drawing.js) must agree with.

pub const DEFAULT_CAP: u32 = 8;
pub const MIN_CAP: u32 = 1;
pub const MAX_CAP: u32 = 50;
/// A larger number is a mistake, not a wish for "as many as possible".
pub const NONSENSE_ABOVE: f64 = 1e9;

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

    /// The cap a host's number asks for: from 0 to [`NONSENSE_ABOVE`], rounded and brought into
    /// the bounds (as [`Cap::clamped`]); anything else none.
    pub fn of_number(n: f64) -> Option<Cap> {
        (0.0..=NONSENSE_ABOVE)
            .contains(&n)
            .then(|| Cap::clamped(n.round() as u32))
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
        assert_eq!(Cap::of_number(2.6), Some(Cap::clamped(3)));
        assert_eq!(Cap::of_number(0.0), Some(Cap::MIN));
        assert_eq!(Cap::of_number(1e9), Some(Cap::MAX));
        for nonsense in [-1.0, 1e10, f64::NAN, f64::INFINITY] {
            assert_eq!(Cap::of_number(nonsense), None);
        }
    }
}
