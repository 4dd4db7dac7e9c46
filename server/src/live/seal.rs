//! What makes a message on the bus one of Pickup's servers': an HMAC-SHA256 tag over the
//! message, under a key only the servers hold. Anyone who can reach Redis can publish on the
//! channel; without the key, what they publish is refused before it is read.
//!
//! The key is derived with HKDF-SHA256 from `PICKUP_SECRET` (or from `PICKUP_BUS_KEY`, for a
//! deployment whose tokens all come from an identity provider), with a label of its own, so
//! the bus key is never the token-signing key itself and a leaked bus key signs no token.
//!
//! On the wire a sealed message is `pickup1.` + the tag (base64url, no padding) + `.` + the
//! message's bytes. The tag covers the version prefix too.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use thiserror::Error;

const PREFIX: &[u8] = b"pickup1.";
/// HKDF's salt and info: the key's purpose, so no other use of the same secret derives it.
const SALT: &[u8] = b"pickup bus";
const INFO: &[u8] = b"pickup bus facts v1 (HMAC-SHA256)";
/// A base64url tag of 32 bytes, unpadded.
const TAG_CHARS: usize = 43;

/// The servers' shared key for the bus.
#[derive(Clone)]
pub struct BusKey([u8; 32]);

impl std::fmt::Debug for BusKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BusKey(…)")
    }
}

/// Why a message was not taken as a server's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum SealError {
    #[error("not sealed (no `pickup1.` tag): published by something other than a Pickup server")]
    Unsealed,
    #[error("the tag does not match: not sealed with this deployment's bus key")]
    BadTag,
}

impl BusKey {
    /// The bus key of a deployment whose servers share `secret`.
    pub fn derive(secret: &[u8]) -> BusKey {
        let mut key = [0u8; 32];
        hkdf::Hkdf::<Sha256>::new(Some(SALT), secret)
            .expand(INFO, &mut key)
            .expect("32 bytes is a valid HKDF-SHA256 output length");
        BusKey(key)
    }

    fn mac(&self) -> Hmac<Sha256> {
        let mut mac =
            <Hmac<Sha256> as Mac>::new_from_slice(&self.0).expect("HMAC takes a key of any length");
        mac.update(PREFIX);
        mac
    }

    /// `message`, sealed.
    pub fn seal(&self, message: &[u8]) -> Vec<u8> {
        let mut mac = self.mac();
        mac.update(message);
        let tag = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
        let mut out = Vec::with_capacity(PREFIX.len() + tag.len() + 1 + message.len());
        out.extend_from_slice(PREFIX);
        out.extend_from_slice(tag.as_bytes());
        out.push(b'.');
        out.extend_from_slice(message);
        out
    }

    /// The message inside `sealed`, if this key sealed it (compared in constant time).
    pub fn open<'a>(&self, sealed: &'a [u8]) -> Result<&'a [u8], SealError> {
        let rest = sealed.strip_prefix(PREFIX).ok_or(SealError::Unsealed)?;
        if rest.len() <= TAG_CHARS || rest[TAG_CHARS] != b'.' {
            return Err(SealError::Unsealed);
        }
        let (tag, message) = (&rest[..TAG_CHARS], &rest[TAG_CHARS + 1..]);
        let tag = URL_SAFE_NO_PAD
            .decode(tag)
            .map_err(|_| SealError::Unsealed)?;
        let mut mac = self.mac();
        mac.update(message);
        mac.verify_slice(&tag).map_err(|_| SealError::BadTag)?;
        Ok(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_message_opens_with_its_key_only() {
        let key = BusKey::derive(b"a secret of at least thirty-two bytes!!");
        let sealed = key.seal(br#"{"seq":1}"#);
        assert_eq!(key.open(&sealed), Ok(&br#"{"seq":1}"#[..]));

        let other = BusKey::derive(b"another secret of at least thirty-two bytes");
        assert_eq!(other.open(&sealed), Err(SealError::BadTag));
        assert_eq!(key.open(br#"{"seq":1}"#), Err(SealError::Unsealed));
        assert_eq!(key.open(b"pickup1.short.{}"), Err(SealError::Unsealed));
        assert_eq!(key.open(b""), Err(SealError::Unsealed));
    }

    #[test]
    fn any_change_to_a_sealed_message_is_refused() {
        let key = BusKey::derive(b"a secret of at least thirty-two bytes!!");
        let sealed = key.seal(br#"{"seq":1,"ws":"acme"}"#);
        for i in 0..sealed.len() {
            let mut bent = sealed.clone();
            bent[i] ^= 0x01;
            assert!(
                key.open(&bent).is_err(),
                "byte {i} changed and still opened"
            );
        }
        let mut longer = sealed.clone();
        longer.push(b' ');
        assert_eq!(key.open(&longer), Err(SealError::BadTag));
    }

    /// The derivation is fixed: servers of two builds must agree on the key.
    #[test]
    fn the_key_is_derived_the_same_way_everywhere() {
        let a = BusKey::derive(b"same");
        let b = BusKey::derive(b"same");
        assert_eq!(a.0, b.0);
        assert_ne!(a.0, BusKey::derive(b"other").0);
        assert_ne!(&a.0[..], b"same", "the key is not the secret");
    }
}
