//! The identity provider's keys: a JWKS document (`PICKUP_JWKS_URL`) fetched with reqwest,
//! cached, and refreshed.
//!
//! **Design.** The usable keys live in a `RwLock<Arc<KeySet>>`: verifying a token takes a
//! clone of the `Arc` and never waits on the network. Only a token whose `kid` is not in the
//! cached set makes its request wait, once, for a refresh ([`Jwks::refresh_for_unknown`]);
//! that is why [`crate::auth::Auth::verify`] is `async`. Refreshes are single-flight (a tokio
//! mutex held across the fetch: requests that arrive meanwhile wait for that fetch and then
//! look again instead of fetching too) and rate-limited: an unknown `kid` causes a fetch only if
//! the last one *started* at least `min_refresh` ago (`PICKUP_JWKS_MIN_REFRESH`, 30 s), so a
//! stream of tokens with made-up `kid`s costs the identity provider one request per period.
//! A background task ([`Jwks::refresh_every`]) fetches every `PICKUP_JWKS_REFRESH` too, so a
//! key removed from the document stops being honoured even when no new key appears.
//!
//! A refresh that fails (unreachable, timeout, non-2xx, not a JWKS) keeps the last good set and
//! logs a warning; tokens that need a key the set lacks get 401 naming the failure, never 500.
//! A refresh that succeeds replaces the set whole: a key that left the document is refused from
//! then on, and keys still in it keep working (rotation without restart).
//!
//! **Which algorithm a key allows.** Exactly one: the JWK's `alg` when present, otherwise by
//! key type and curve (RSA → RS256, EC P-256 → ES256, EC P-384 → ES384, OKP Ed25519 → EdDSA).
//! The token's header `alg` must be that one. Symmetric (`oct`) keys and HS* are never used
//! from a JWKS (an HS256 token "signed" with a public key is the classic confusion attack),
//! nor are keys marked `use: enc` or whose `key_ops` lack `verify`. `alg: none` does not parse
//! as an algorithm at all. No cryptography here: `jsonwebtoken::DecodingKey::from_jwk` makes the
//! keys and `jsonwebtoken::decode` checks signatures.

use crate::peer::{error_chain, read_bounded};
use jsonwebtoken::jwk::{
    AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, KeyOperations, PublicKeyUse,
};
use jsonwebtoken::{Algorithm, DecodingKey};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// How long one fetch of the document may take.
pub(super) const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// A JWKS document larger than this is refused while it is read (a real one is a few
/// kilobytes).
const MAX_DOCUMENT_BYTES: usize = 1 << 20;

/// One key of the document, usable or not (and why not: said to the caller of a token that
/// names it).
#[derive(Clone)]
pub(super) struct Entry {
    pub kid: Option<String>,
    pub usable: Result<Usable, String>,
}

#[derive(Clone)]
pub struct Usable {
    /// The one algorithm this key may verify.
    pub alg: Algorithm,
    pub key: DecodingKey,
}

/// The keys of the last good document, and how the last fetch went.
#[derive(Default)]
pub(super) struct KeySet {
    pub entries: Vec<Entry>,
    /// Moves on with every fetch, successful or not: a request that waited for the refresh lock
    /// learns whether a fetch happened while it waited.
    generation: u64,
    /// Whether a document was ever loaded.
    loaded: bool,
    /// The error of the last fetch, when it failed.
    last_error: Option<String>,
}

/// What the cached set says about a token's key.
pub enum Lookup {
    /// Candidates for the header's `alg` (one when the token names a `kid`).
    Found(Vec<Usable>),
    /// The token names a key the set has, but that key does not allow this `alg` (or cannot
    /// be used at all): refused without a refresh.
    Refused(String),
    /// Not in the set: a refresh may help.
    Unknown,
}

pub struct Jwks {
    url: String,
    client: reqwest::Client,
    min_refresh: Duration,
    set: RwLock<Arc<KeySet>>,
    /// When the last fetch started; held across a fetch (single flight).
    last_fetch: tokio::sync::Mutex<Option<Instant>>,
    /// Moves on with every document installed: open streams check their tokens at once, so
    /// a key the provider withdrew ends them at that refresh.
    installed: tokio::sync::watch::Sender<u64>,
}

impl Jwks {
    pub fn new(url: &str, min_refresh: Duration) -> anyhow::Result<Self> {
        let parsed = url::Url::parse(url)
            .map_err(|e| anyhow::anyhow!("PICKUP_JWKS_URL {url:?} is not a URL: {e}"))?;
        if !matches!(parsed.scheme(), "https" | "http") {
            anyhow::bail!("PICKUP_JWKS_URL must be an https:// (or http://) URL, not {url:?}");
        }
        let client = reqwest::Client::builder()
            // The document's address is configured: a redirect is an error that names where
            // it pointed (another origin would decide which keys this server trusts).
            .redirect(reqwest::redirect::Policy::none())
            .timeout(FETCH_TIMEOUT)
            .connect_timeout(FETCH_TIMEOUT)
            .user_agent(concat!("pickup/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Jwks {
            url: url.to_string(),
            client,
            min_refresh,
            set: RwLock::new(Arc::new(KeySet::default())),
            last_fetch: tokio::sync::Mutex::new(None),
            installed: tokio::sync::watch::Sender::new(0),
        })
    }

    /// Told of every key set installed.
    pub fn installs(&self) -> tokio::sync::watch::Receiver<u64> {
        self.installed.subscribe()
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    fn current(&self) -> Arc<KeySet> {
        self.set.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The keys for a token with this header, from the cached set (never the network).
    pub fn lookup(&self, kid: Option<&str>, alg: Algorithm) -> (Lookup, u64) {
        let set = self.current();
        let found = match kid {
            Some(kid) => match set.entries.iter().find(|e| e.kid.as_deref() == Some(kid)) {
                None => Lookup::Unknown,
                Some(Entry {
                    usable: Err(why), ..
                }) => Lookup::Refused(format!("the key {kid:?} cannot verify tokens: {why}")),
                Some(Entry { usable: Ok(u), .. }) if u.alg != alg => Lookup::Refused(format!(
                    "the key {kid:?} allows {:?} only, and the token says {alg:?}",
                    u.alg
                )),
                Some(Entry { usable: Ok(u), .. }) => Lookup::Found(vec![u.clone()]),
            },
            // No kid: every key that allows the token's alg is a candidate.
            None => {
                let all: Vec<Usable> = set
                    .entries
                    .iter()
                    .filter_map(|e| e.usable.as_ref().ok())
                    .filter(|u| u.alg == alg)
                    .cloned()
                    .collect();
                if all.is_empty() {
                    Lookup::Unknown
                } else {
                    Lookup::Found(all)
                }
            }
        };
        (found, set.generation)
    }

    /// Why a key the token needs is not available, for its 401.
    pub fn why_missing(&self, kid: Option<&str>) -> String {
        let set = self.current();
        let key = match kid {
            Some(kid) => format!("the token's key {kid:?} is not in"),
            None => "no key for the token's algorithm is in".to_string(),
        };
        match (&set.last_error, set.loaded) {
            (Some(e), false) => format!(
                "{key} the identity provider's key set, which could not be fetched ({e}); try again later"
            ),
            (Some(e), true) => format!(
                "{key} the identity provider's key set (its last refresh failed: {e}); get a new token"
            ),
            (None, _) => format!("{key} the identity provider's key set; get a new token"),
        }
    }

    /// A token named a key the set (at `generation`) lacks: fetch the document again, unless
    /// another request did while this one waited, or the last fetch started less than
    /// `min_refresh` ago.
    pub async fn refresh_for_unknown(&self, generation: u64) {
        let mut last = self.last_fetch.lock().await;
        if self.current().generation != generation {
            return; // fetched while we waited: look again
        }
        if last.is_some_and(|t| t.elapsed() < self.min_refresh) {
            tracing::debug!(url = %self.url, "unknown key id: key set refreshed too recently to fetch again");
            return;
        }
        *last = Some(Instant::now());
        let _ = self.fetch_and_install().await; // a failure is logged there and kept in the set
    }

    /// Fetch now (at start, and from the periodic refresh). Returns the error when it failed.
    pub async fn refresh(&self) -> Result<usize, String> {
        let mut last = self.last_fetch.lock().await;
        *last = Some(Instant::now());
        self.fetch_and_install().await
    }

    /// Fetch every `every`, for as long as the process runs.
    pub async fn refresh_every(self: Arc<Self>, every: Duration) {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await; // immediate: the start-up fetch was just made
        loop {
            tick.tick().await;
            let _ = self.refresh().await;
        }
    }

    async fn fetch_and_install(&self) -> Result<usize, String> {
        let fetched = self.fetch().await;
        let mut guard = self.set.write().unwrap_or_else(|p| p.into_inner());
        let old = guard.clone();
        let generation = old.generation + 1;
        match fetched {
            Ok(doc) => {
                let entries = entries(&doc);
                let usable = entries.iter().filter(|e| e.usable.is_ok()).count();
                for e in entries.iter() {
                    if let Err(why) = &e.usable {
                        tracing::debug!(kid = ?e.kid, why, "JWKS key skipped");
                    }
                }
                tracing::info!(url = %self.url, keys = entries.len(), usable, "JWKS loaded");
                *guard = Arc::new(KeySet {
                    entries,
                    generation,
                    loaded: true,
                    last_error: None,
                });
                drop(guard);
                self.installed.send_replace(generation);
                Ok(usable)
            }
            Err(e) => {
                if old.loaded {
                    tracing::warn!(url = %self.url, error = %e, "JWKS refresh failed: keeping the last good key set");
                } else {
                    tracing::error!(url = %self.url, error = %e, "JWKS could not be fetched: tokens signed by the identity provider are refused until it can");
                }
                *guard = Arc::new(KeySet {
                    entries: old.entries.clone(),
                    generation,
                    loaded: old.loaded,
                    last_error: Some(e.clone()),
                });
                Err(e)
            }
        }
    }

    async fn fetch(&self) -> Result<Document, String> {
        let res = self
            .client
            .get(&self.url)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| format!("fetching {}: {}", self.url, error_chain(&e)))?;
        let status = res.status();
        if status.is_redirection() {
            let to = res
                .headers()
                .get(reqwest::header::LOCATION)
                .map(|l| format!("{:?}", String::from_utf8_lossy(l.as_bytes())))
                .unwrap_or_else(|| "nowhere (no Location)".into());
            return Err(format!(
                "{} redirected ({status}) to {to}: redirects are not followed; set PICKUP_JWKS_URL to the document's own address",
                self.url
            ));
        }
        if !status.is_success() {
            return Err(format!("{} answered {status}", self.url));
        }
        let body = read_bounded(res, MAX_DOCUMENT_BYTES)
            .await
            .map_err(|e| format!("{}: {e}", self.url))?;
        serde_json::from_slice(&body)
            .map_err(|e| format!("{} is not a JWKS document: {e}", self.url))
    }
}

/// A JWKS document, its keys read one by one: `jsonwebtoken::jwk::JwkSet` would refuse the
/// whole document for one key it cannot parse (say an `X25519` encryption key), and with it
/// every good key beside it.
#[derive(serde::Deserialize)]
pub(super) struct Document {
    pub keys: Vec<serde_json::Value>,
}

/// Every key of the document, with the algorithm it allows or why it cannot be used.
pub(super) fn entries(doc: &Document) -> Vec<Entry> {
    doc.keys
        .iter()
        .map(|value| {
            let kid = value
                .get("kid")
                .and_then(|k| k.as_str())
                .map(str::to_string);
            let usable = serde_json::from_value::<Jwk>(value.clone())
                .map_err(|e| format!("it is not a JWK this server reads ({e})"))
                .and_then(|jwk| usable(&jwk));
            Entry { kid, usable }
        })
        .collect()
}

/// The one algorithm `jwk` allows, and its decoding key.
pub(super) fn usable(jwk: &Jwk) -> Result<Usable, String> {
    if jwk.common.public_key_use == Some(PublicKeyUse::Encryption) {
        return Err("it is an encryption key (use: enc)".into());
    }
    if let Some(ops) = &jwk.common.key_operations {
        if !ops.contains(&KeyOperations::Verify) {
            return Err("its key_ops do not include verify".into());
        }
    }
    // What the key type allows: the one algorithm of its type and curve.
    let by_type = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => [
            Algorithm::RS256,
            Algorithm::RS384,
            Algorithm::RS512,
            Algorithm::PS256,
            Algorithm::PS384,
            Algorithm::PS512,
        ]
        .as_slice(),
        AlgorithmParameters::EllipticCurve(p) => match p.curve {
            EllipticCurve::P256 => [Algorithm::ES256].as_slice(),
            EllipticCurve::P384 => [Algorithm::ES384].as_slice(),
            ref other => return Err(format!("curve {other:?} is not supported")),
        },
        AlgorithmParameters::OctetKeyPair(p) => match p.curve {
            EllipticCurve::Ed25519 => [Algorithm::EdDSA].as_slice(),
            ref other => return Err(format!("curve {other:?} is not supported")),
        },
        AlgorithmParameters::OctetKey(_) => {
            return Err("symmetric (oct) keys are never used from a JWKS".into())
        }
        _ => return Err("its key type is not supported".into()),
    };
    let alg = match jwk.common.key_algorithm {
        None => by_type[0],
        Some(KeyAlgorithm::UNKNOWN_ALGORITHM) => return Err("its alg is not supported".into()),
        Some(named) => {
            let alg =
                Algorithm::try_from(named).map_err(|_| format!("its alg {named} cannot sign"))?;
            if !by_type.contains(&alg) {
                return Err(format!("its alg {named} does not fit its key type"));
            }
            alg
        }
    };
    let key = DecodingKey::from_jwk(jwk).map_err(|e| format!("it cannot be read: {e}"))?;
    Ok(Usable { alg, key })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwk(json: serde_json::Value) -> Jwk {
        serde_json::from_value(json).unwrap()
    }

    const N: &str = "sXchDaQebHnPiGvyDOAT4saGEUetSyo9MKLOoWFsueri23bOdgWp4Dy1WlUzewbgBHod5pcM9H95GQRV3JDXboIRROSBigeC5yjU1hGzHHyXss8UDprecbAYxknTcQkhslANGRUZmdTOQ5qTRsLAt6BTYuyvVRdhS8exSZEy_c4gs_7svlJJQ4H9_NxsiIoLwAEk7-Q3UXERGYw_75IDrGA84-lA_-Ct4eTlXHBIY2EaV7t7LjJaynVJCpkv4LKjTTAumiGUIuQhrNhZLuF_RJLqHpM2kgWFLU7-VTdL1VbC2tejvcI2BlMkEpk1BzBZI0KQB0GaDWFLN-aEAw3vRw";

    #[test]
    fn one_algorithm_per_key() {
        let cases = [
            (
                serde_json::json!({"kty": "RSA", "n": N, "e": "AQAB"}),
                Ok(Algorithm::RS256),
            ),
            (
                serde_json::json!({"kty": "RSA", "alg": "PS256", "n": N, "e": "AQAB"}),
                Ok(Algorithm::PS256),
            ),
            (
                serde_json::json!({"kty": "RSA", "alg": "ES256", "n": N, "e": "AQAB"}),
                Err("fit"),
            ),
            (
                serde_json::json!({"kty": "RSA", "alg": "HS256", "n": N, "e": "AQAB"}),
                Err("fit"),
            ),
            (
                serde_json::json!({"kty": "RSA", "use": "enc", "n": N, "e": "AQAB"}),
                Err("enc"),
            ),
            (
                serde_json::json!({"kty": "RSA", "alg": "RSA-OAEP", "n": N, "e": "AQAB"}),
                Err("cannot sign"),
            ),
            (
                serde_json::json!({"kty": "oct", "k": "c2VjcmV0"}),
                Err("oct"),
            ),
            (
                serde_json::json!({"kty": "oct", "alg": "HS256", "k": "c2VjcmV0"}),
                Err("oct"),
            ),
        ];
        for (json, want) in cases {
            let got = usable(&jwk(json.clone())).map(|u| u.alg);
            match (got, want) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{json}"),
                (Err(e), Err(part)) => assert!(e.contains(part), "{json}: {e}"),
                (got, want) => panic!("{json}: got {:?}, want {want:?}", got),
            }
        }
    }

    #[tokio::test]
    async fn an_unreachable_document_is_an_error_not_a_panic() {
        // A port nothing listens on: bind one, note it, close it.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let jwks = Jwks::new(&format!("http://127.0.0.1:{port}/certs"), Duration::ZERO).unwrap();
        assert!(jwks.refresh().await.is_err());
        let (found, _) = jwks.lookup(Some("k1"), Algorithm::RS256);
        assert!(matches!(found, Lookup::Unknown));
        assert!(jwks
            .why_missing(Some("k1"))
            .contains("could not be fetched"));
        assert!(Jwks::new("file:///etc/passwd", Duration::ZERO).is_err());
    }
}
