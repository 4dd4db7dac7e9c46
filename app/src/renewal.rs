//! When the widget asks the host's `getToken` for a new token: at 80% of the token's lifetime
//! (`exp` − `iat`), counted from when the token was issued, not from when the widget got it.
//! A token handed over at page load may be seconds old already (minted before the page, the
//! wasm still loading): counting its whole lifetime from then renewed it after it expired.
//!
//! Issued-at is read on the issuer's clock, and a tab's clock may disagree with it. So the tab
//! learns the difference from each token getToken gives (minted just now, so its `iat` is the
//! issuer's now) and never waits longer than 80% of the lifetime from now: a tab clock that is
//! ahead renews early once, then knows better; one behind renews no later than before. Pure:
//! the host reads the claims and the clock.

use std::time::Duration;

/// Never sooner than this after a token arrives, whatever the claims or clocks say, so that a
/// token that looks expired on arrival cannot make the widget ask for tokens in a loop.
pub const AT_THE_SOONEST: Duration = Duration::from_millis(500);

/// A token's claims, in seconds since the epoch, as the issuer's clock reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Claims {
    pub exp: f64,
    /// Absent in some tokens: the lifetime is then counted from now.
    pub iat: Option<f64>,
}

/// The issuer's clock less the tab's, in ms, learnt from a token minted at `now_ms`.
pub fn skew_ms(fresh: Claims, now_ms: f64) -> Option<f64> {
    fresh
        .iat
        .map(|iat| iat * 1000.0 - now_ms)
        .filter(|s| s.is_finite())
}

/// How long from `now_ms` (the tab's clock) to wait before renewing a token with `claims`,
/// given the `skew_ms` learnt so far (0 before any); `None` for claims that make no lifetime.
pub fn wait(claims: Claims, now_ms: f64, skew_ms: f64) -> Option<Duration> {
    let issuer_now = (now_ms + skew_ms) / 1000.0;
    let lifetime = claims.exp - claims.iat.unwrap_or(issuer_now);
    if !lifetime.is_finite() || lifetime <= 0.0 {
        return None;
    }
    let renew_at = claims.exp - lifetime / 5.0;
    let secs = (renew_at - issuer_now)
        .clamp(0.0, lifetime * 4.0 / 5.0)
        .min(1e9);
    Some(Duration::from_millis((secs * 1000.0) as u64).max(AT_THE_SOONEST))
}

/// How long from `now_ms` until a token with `claims` expires, by the issuer's clock as
/// `skew_ms` says (none for an `exp` that is no time): a stream the browser shares between
/// the viewer's tokens ends the widget's read at its own token's `exp`, as the server ends a
/// stream opened with that token (the holder tab's may last longer).
pub fn until_expiry(claims: Claims, now_ms: f64, skew_ms: f64) -> Option<Duration> {
    let ms = claims.exp * 1000.0 - (now_ms + skew_ms);
    ms.is_finite()
        .then(|| Duration::from_millis(ms.clamp(0.0, 1e12) as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_expires_at_its_exp_by_the_issuers_clock() {
        let claims = Claims {
            exp: NOW / S + 30.0,
            iat: None,
        };
        assert_eq!(ms(until_expiry(claims, NOW, 0.0)), 30_000);
        assert_eq!(ms(until_expiry(claims, NOW, 10.0 * S)), 20_000);
        assert_eq!(ms(until_expiry(claims, NOW + 60.0 * S, 0.0)), 0);
        let nan = Claims {
            exp: f64::NAN,
            iat: None,
        };
        assert_eq!(until_expiry(nan, NOW, 0.0), None);
    }

    const NOW: f64 = 1_800_000_000_000.0;
    const S: f64 = 1000.0;

    fn ms(d: Option<Duration>) -> u128 {
        d.expect("a lifetime").as_millis()
    }

    #[test]
    fn a_fresh_token_is_renewed_at_four_fifths_of_its_lifetime() {
        let claims = Claims {
            exp: NOW / S + 100.0,
            iat: Some(NOW / S),
        };
        assert_eq!(ms(wait(claims, NOW, 0.0)), 80_000);
    }

    /// The flake this fixes: a 3 s token minted before the page, handed over 1.5 s later.
    #[test]
    fn a_token_handed_over_late_is_renewed_before_it_expires() {
        let claims = Claims {
            exp: NOW / S + 3.0,
            iat: Some(NOW / S),
        };
        let got_at = NOW + 1.5 * S;
        let renews_at = got_at + ms(wait(claims, got_at, 0.0)) as f64;
        assert!(
            renews_at < claims.exp * S,
            "{renews_at} is not before {}",
            claims.exp * S
        );
        assert_eq!(renews_at, NOW + 2.4 * S);
    }

    #[test]
    fn a_token_past_four_fifths_is_renewed_at_the_soonest() {
        let claims = Claims {
            exp: NOW / S + 10.0,
            iat: Some(NOW / S),
        };
        assert_eq!(wait(claims, NOW + 9.5 * S, 0.0), Some(AT_THE_SOONEST));
        assert_eq!(wait(claims, NOW + 60.0 * S, 0.0), Some(AT_THE_SOONEST));
    }

    #[test]
    fn a_tab_clock_behind_renews_no_later_than_four_fifths_from_now() {
        let claims = Claims {
            exp: NOW / S + 100.0,
            iat: Some(NOW / S),
        };
        // The tab reads an hour earlier than the issuer.
        assert_eq!(ms(wait(claims, NOW - 3600.0 * S, 0.0)), 80_000);
    }

    #[test]
    fn a_tab_clock_ahead_renews_once_early_then_knows_the_skew() {
        let ahead = 3600.0 * S;
        let first = Claims {
            exp: NOW / S + 100.0,
            iat: Some(NOW / S),
        };
        assert_eq!(wait(first, NOW + ahead, 0.0), Some(AT_THE_SOONEST));
        // getToken's token, minted as it arrives: its iat tells the tab the issuer's now.
        let t = NOW + 1.0 * S;
        let fresh = Claims {
            exp: t / S + 100.0,
            iat: Some(t / S),
        };
        let skew = skew_ms(fresh, t + ahead).unwrap();
        assert_eq!(skew, -ahead);
        assert_eq!(ms(wait(fresh, t + ahead, skew)), 80_000);
    }

    #[test]
    fn without_iat_the_lifetime_counts_from_now() {
        let claims = Claims {
            exp: NOW / S + 50.0,
            iat: None,
        };
        assert_eq!(ms(wait(claims, NOW, 0.0)), 40_000);
    }

    #[test]
    fn claims_that_make_no_lifetime_schedule_nothing() {
        let expired = Claims {
            exp: NOW / S - 10.0,
            iat: None,
        };
        assert_eq!(wait(expired, NOW, 0.0), None);
        let backwards = Claims {
            exp: NOW / S,
            iat: Some(NOW / S + 5.0),
        };
        assert_eq!(wait(backwards, NOW, 0.0), None);
        let nan = Claims {
            exp: f64::NAN,
            iat: None,
        };
        assert_eq!(wait(nan, NOW, 0.0), None);
    }
}
