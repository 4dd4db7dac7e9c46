//! A sender's sequence numbers: pub/sub delivers at most once, so a gap says a message was
//! missed, and a number heard already says a replay.

use std::time::Instant;

/// What is known of one sender: the last sequence number heard, and when.
#[derive(Debug, Clone, Copy)]
pub(super) struct Sender {
    pub(super) seq: u64,
    pub(super) heard: Instant,
}

/// How a message's sequence number stands against its sender's last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sequence {
    /// The next one (or a sender's very first, or a beat that says no more).
    InOrder,
    /// Some were missed: reconcile.
    Gap,
    /// Heard already: a replay, or out of order.
    Replayed,
}

/// `seq` of a `beat` (which repeats the last number) or of a fact or doubt (which takes the
/// next), after `last`. No arithmetic that can overflow: a peer chooses these numbers.
///
/// `joining`: this server's join is not over. A sender first heard then may have said things
/// this server never heard, but the watchers reconcile once the join is over, after this: what
/// it said is in the store they list then, not missed. Once the join is over nothing lists
/// after a sender first heard, so one that has said something before is a gap.
pub(super) fn sequence(last: Option<u64>, seq: u64, beat: bool, joining: bool) -> Sequence {
    let Some(last) = last else {
        // A sender heard for the first time that has said something before (a fact numbered
        // past the first, a beat past none), later than joining (one forgotten after a
        // silence): what it said may have been missed.
        let first = if beat { 0 } else { 1 };
        return if seq > first && !joining {
            Sequence::Gap
        } else {
            Sequence::InOrder
        };
    };
    match (beat, seq.cmp(&last)) {
        (true, std::cmp::Ordering::Less)
        | (false, std::cmp::Ordering::Less | std::cmp::Ordering::Equal) => Sequence::Replayed,
        (true, std::cmp::Ordering::Equal) => Sequence::InOrder,
        (true, std::cmp::Ordering::Greater) => Sequence::Gap,
        (false, std::cmp::Ordering::Greater) if seq - last == 1 => Sequence::InOrder,
        (false, std::cmp::Ordering::Greater) => Sequence::Gap,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_numbers_cannot_overflow_or_go_back() {
        use Sequence::*;
        assert_eq!(sequence(None, u64::MAX, false, false), Gap);
        assert_eq!(sequence(None, 1, false, false), InOrder);
        assert_eq!(sequence(None, 0, true, false), InOrder);
        assert_eq!(sequence(None, 3, true, false), Gap);
        assert_eq!(sequence(Some(u64::MAX), u64::MAX, false, false), Replayed);
        assert_eq!(sequence(Some(u64::MAX), 0, false, false), Replayed);
        assert_eq!(sequence(Some(u64::MAX), u64::MAX, true, false), InOrder);
        assert_eq!(
            sequence(Some(u64::MAX - 1), u64::MAX, false, false),
            InOrder
        );
        assert_eq!(sequence(Some(0), u64::MAX, false, false), Gap);
        assert_eq!(sequence(Some(5), 6, false, false), InOrder);
        assert_eq!(sequence(Some(5), 5, false, false), Replayed);
        assert_eq!(sequence(Some(5), 4, false, false), Replayed);
        assert_eq!(sequence(Some(5), 8, false, false), Gap);
        assert_eq!(sequence(Some(5), 5, true, false), InOrder);
        assert_eq!(sequence(Some(5), 6, true, false), Gap);
        assert_eq!(sequence(Some(5), 4, true, false), Replayed);
        // First heard while joining: what it said before is in the store, not missed.
        assert_eq!(sequence(None, 3, true, true), InOrder);
        assert_eq!(sequence(None, 9, false, true), InOrder);
    }
}
