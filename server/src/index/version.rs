//! A record's version, and the validator Pickup hands out as an item's `ETag`.

use super::error::IndexError;

/// What the store keeps to tell one version of an object from another: an ETag and, on stores
/// that have them (GCS generations, S3 version ids), a version.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Version {
    pub e_tag: Option<String>,
    pub version: Option<String>,
}

/// The validator Pickup hands out as an item's `ETag` and takes back in `If-Match`: whatever
/// the backend needs for a conditional update. S3 and Azure compare ETags; GCS compares the
/// object's generation (object_store's `version`), which an ETag alone does not carry. A
/// version without one is handed out as the store's ETag, unchanged; with one, both travel in
/// one opaque token: `"v1.<ETag>.<version>"`, each part base64url-encoded.
impl Version {
    const TAG: &'static str = "\"v1.";

    /// The `ETag` header value, if the store gave anything to compare.
    pub fn validator(&self) -> Option<String> {
        use base64::Engine;
        let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        match (&self.e_tag, &self.version) {
            (e_tag, Some(version)) => Some(format!(
                "{}{}.{}\"",
                Self::TAG,
                b64(e_tag.as_deref().unwrap_or("")),
                b64(version)
            )),
            (Some(e_tag), None) => Some(e_tag.clone()),
            (None, None) => None,
        }
    }

    /// Read back an `If-Match` value: a token of ours, or an ETag as the store gave it.
    pub fn from_validator(value: &str) -> Result<Self, IndexError> {
        use base64::Engine;
        let value = value.trim();
        if value.is_empty() || value == "*" || !value.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(IndexError::BadValidator);
        }
        let Some(token) = value.strip_prefix(Self::TAG) else {
            return Ok(Version {
                e_tag: Some(value.to_string()),
                version: None,
            });
        };
        let decode = |s: &str| {
            let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(s)
                .map_err(|_| IndexError::BadValidator)?;
            String::from_utf8(bytes).map_err(|_| IndexError::BadValidator)
        };
        let (e_tag, version) = token
            .strip_suffix('"')
            .and_then(|t| t.split_once('.'))
            .ok_or(IndexError::BadValidator)?;
        let e_tag = decode(e_tag)?;
        Ok(Version {
            e_tag: (!e_tag.is_empty()).then_some(e_tag),
            version: Some(decode(version)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validators_carry_what_each_backend_compares() {
        let etag_only = Version {
            e_tag: Some("\"abc\"".into()),
            version: None,
        };
        assert_eq!(etag_only.validator().as_deref(), Some("\"abc\""));
        assert_eq!(Version::from_validator("\"abc\"").unwrap(), etag_only);
        for v in [
            Version {
                e_tag: Some("\"abc\"".into()),
                version: Some("1712345678901234".into()),
            },
            Version {
                e_tag: None,
                version: Some("7".into()),
            },
        ] {
            let token = v.validator().unwrap();
            assert!(token.bytes().all(|b| b.is_ascii_graphic()), "{token}");
            assert_eq!(Version::from_validator(&token).unwrap(), v);
        }
        for bad in ["", " ", "*", "\"v1.!!.x\"", "\"v1.YWJj\"", "caf\u{e9}"] {
            assert!(Version::from_validator(bad).is_err(), "{bad:?}");
        }
    }
}
