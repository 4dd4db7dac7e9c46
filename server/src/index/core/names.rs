//! The names a request may carry, validated before any store key is built from them. A name
//! that passes can be put in a key verbatim: none can contain `/`, `..` or anything a store
//! would encode differently.

use std::fmt;
use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("invalid {what} {shown:?}: {rule}")]
pub struct NameError {
    pub what: &'static str,
    /// The offending value, shortened so an error never echoes a huge input.
    pub shown: String,
    pub rule: &'static str,
}

fn invalid(what: &'static str, value: &str, rule: &'static str) -> NameError {
    let shown: String = value.chars().take(64).collect();
    NameError { what, shown, rule }
}

macro_rules! name_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

name_type!(
    /// A workspace: `[a-z0-9][a-z0-9-]{0,62}`.
    Workspace
);
name_type!(
    /// An item's stable sub-key (a config hash, a document id): `[A-Za-z0-9-]{1,64}`.
    SubKey
);
name_type!(
    /// A token's subject: `[A-Za-z0-9._@-]{1,128}`, not starting with `.`.
    UserId
);

impl Workspace {
    pub const RULE: &'static str =
        "use 1 to 63 of a-z, 0-9 and '-', starting with a letter or digit";

    pub fn parse(s: &str) -> Result<Self, NameError> {
        let ok = matches!(s.as_bytes().first(), Some(b'a'..=b'z' | b'0'..=b'9'))
            && s.len() <= 63
            && s.bytes()
                .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'-'));
        ok.then(|| Workspace(s.to_string()))
            .ok_or_else(|| invalid("workspace", s, Self::RULE))
    }
}

impl SubKey {
    pub const RULE: &'static str = "use 1 to 64 of A-Z, a-z, 0-9 and '-'";

    pub fn parse(s: &str) -> Result<Self, NameError> {
        let ok = (1..=64).contains(&s.len())
            && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        ok.then(|| SubKey(s.to_string()))
            .ok_or_else(|| invalid("key", s, Self::RULE))
    }
}

impl UserId {
    pub const RULE: &'static str =
        "use 1 to 128 of A-Z, a-z, 0-9, '.', '_', '@' and '-', not starting with '.'";

    pub fn parse(s: &str) -> Result<Self, NameError> {
        let ok = (1..=128).contains(&s.len())
            && !s.starts_with('.')
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._@-".contains(&b));
        ok.then(|| UserId(s.to_string()))
            .ok_or_else(|| invalid("user", s, Self::RULE))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspaces() {
        for ok in ["a", "acme", "0-team", &"a".repeat(63)] {
            assert!(Workspace::parse(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "-a",
            "Acme",
            "a/b",
            "..",
            "a.b",
            "a_b",
            "аcme",
            &"a".repeat(64),
            "a%2Fb",
        ] {
            assert!(Workspace::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn keys() {
        for ok in ["a", "Run-42", &"Z".repeat(64)] {
            assert!(SubKey::parse(ok).is_ok(), "{ok}");
        }
        for bad in ["", "a_b", "a/b", "..", "a b", &"a".repeat(65), "ключ"] {
            assert!(SubKey::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn users() {
        for ok in ["alice", "a.b@example.com", "svc_bot-1"] {
            assert!(UserId::parse(ok).is_ok(), "{ok}");
        }
        for bad in ["", ".hidden", "..", "a/b", "a b", &"u".repeat(129)] {
            assert!(UserId::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn errors_do_not_echo_huge_inputs() {
        let e = Workspace::parse(&"x".repeat(10_000)).unwrap_err();
        assert_eq!(e.shown.len(), 64);
    }
}
