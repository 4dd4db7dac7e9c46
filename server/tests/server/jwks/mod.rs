//! Tokens from an identity provider, over real HTTP: the app served in this process (a real
//! `pickup serve` where its memory is the point) with `PICKUP_JWKS_URL` pointing at a JWKS document this test serves on loopback (and counts the
//! fetches of), with RSA, P-256 and Ed25519 keys made here and tokens signed with
//! `jsonwebtoken::encode`. No sleeps: the tests wait on the server's answers or on the count of
//! fetches, each within a bound.

use crate::common::client::TestClient;
use crate::common::in_process::{self, Listening, Served};
use aws_lc_rs::encoding::{AsDer, Pkcs8V1Der};
use aws_lc_rs::signature::{EcdsaKeyPair, Ed25519KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use axum::http::StatusCode;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const SECRET: &str = "test-secret-test-secret-test-secret!";
const ISS: &str = "https://kc.test/realms/acme";
const AUD: &str = "pickup";

// ---------------------------------------------------------------------------------------------
// Keys

struct Key {
    kid: String,
    alg: Algorithm,
    encoding: EncodingKey,
    /// The public JWK, as the document lists it.
    jwk: Value,
}

/// The content of the OCTET STRING that ends a PKCS#8 v1 document: for RSA, the PKCS#1
/// `RSAPrivateKey` that `EncodingKey::from_rsa_der` wants (aws-lc-rs exports PKCS#8 only).
fn pkcs1_of(pkcs8: &[u8]) -> Vec<u8> {
    fn tlv(b: &[u8]) -> (u8, &[u8], &[u8]) {
        let (tag, first) = (b[0], b[1] as usize);
        let (len, head) = if first < 0x80 {
            (first, 2)
        } else {
            let n = first & 0x7f;
            (
                b[2..2 + n].iter().fold(0, |a, x| a << 8 | *x as usize),
                2 + n,
            )
        };
        (tag, &b[head..head + len], &b[head + len..])
    }
    let (tag, mut inner, _) = tlv(pkcs8);
    assert_eq!(tag, 0x30);
    loop {
        let (tag, content, rest) = tlv(inner);
        if tag == 0x04 {
            return content.to_vec();
        }
        inner = rest;
    }
}

impl Key {
    fn of(kid: &str, alg: Algorithm, encoding: EncodingKey) -> Key {
        let mut jwk =
            serde_json::to_value(Jwk::from_encoding_key(&encoding, alg).unwrap()).unwrap();
        jwk["kid"] = json!(kid);
        jwk["use"] = json!("sig");
        Key {
            kid: kid.into(),
            alg,
            encoding,
            jwk,
        }
    }

    /// RSA 2048; its JWK has no `alg`, so the server infers RS256.
    fn rsa(kid: &str) -> Key {
        let pair = aws_lc_rs::rsa::KeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048).unwrap();
        let pkcs8: Pkcs8V1Der = pair.as_der().unwrap();
        let der = pkcs1_of(pkcs8.as_ref());
        let mut key = Key::of(kid, Algorithm::RS256, EncodingKey::from_rsa_der(&der));
        key.jwk.as_object_mut().unwrap().remove("alg");
        key
    }

    fn p256(kid: &str) -> Key {
        let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap();
        let der = pair.to_pkcs8v1().unwrap();
        Key::of(
            kid,
            Algorithm::ES256,
            EncodingKey::from_ec_der(der.as_ref()),
        )
    }

    fn ed25519(kid: &str) -> Key {
        let der = Ed25519KeyPair::generate().unwrap().to_pkcs8v1().unwrap();
        Key::of(
            kid,
            Algorithm::EdDSA,
            EncodingKey::from_ed_der(der.as_ref()),
        )
    }

    /// A token signed with this key, its header naming `alg` and this key's kid.
    fn sign_as(&self, alg: Algorithm, claims: &Value) -> String {
        let header = Header {
            kid: Some(self.kid.clone()),
            ..Header::new(alg)
        };
        encode(&header, claims, &self.encoding).unwrap()
    }

    fn sign(&self, claims: &Value) -> String {
        self.sign_as(self.alg, claims)
    }
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Claims as Pickup's own tokens have them (the default mapping), with `iss` and `aud`.
fn claims(sub: &str, write: bool) -> Value {
    json!({
        "sub": sub, "name": sub.to_uppercase(), "ws": ["acme"],
        "scope": if write { "read write" } else { "read" },
        "iss": ISS, "aud": AUD, "exp": now_secs() + 600,
    })
}

// ---------------------------------------------------------------------------------------------
// The identity provider's JWKS document, served on loopback

#[derive(Default)]
struct Idp {
    keys: Mutex<Vec<Value>>,
    fetches: AtomicUsize,
    /// Answer 503 instead of the document.
    down: std::sync::atomic::AtomicBool,
}

/// An [`Idp`] and the listener that serves it.
struct Serving {
    idp: Arc<Idp>,
    _listening: Listening,
}

impl std::ops::Deref for Serving {
    type Target = Idp;
    fn deref(&self) -> &Idp {
        &self.idp
    }
}

impl Idp {
    /// Serve `keys` at http://127.0.0.1:PORT/certs, until the [`Serving`] is dropped.
    async fn start(keys: &[&Key]) -> (Serving, String) {
        let idp = Arc::new(Idp::default());
        idp.set(keys);
        let state = idp.clone();
        let app = axum::Router::new().route(
            "/certs",
            axum::routing::get(move || {
                let idp = state.clone();
                async move {
                    idp.fetches.fetch_add(1, Ordering::SeqCst);
                    if idp.down.load(Ordering::SeqCst) {
                        return Err(axum::http::StatusCode::SERVICE_UNAVAILABLE);
                    }
                    let keys = idp.keys.lock().unwrap().clone();
                    Ok(axum::Json(json!({ "keys": keys })))
                }
            }),
        );
        let listening = Listening::start(app).await;
        let url = format!("{}/certs", listening.url);
        (
            Serving {
                idp,
                _listening: listening,
            },
            url,
        )
    }

    fn set(&self, keys: &[&Key]) {
        *self.keys.lock().unwrap() = keys.iter().map(|k| k.jwk.clone()).collect();
    }

    fn push(&self, jwk: Value) {
        self.keys.lock().unwrap().push(jwk);
    }

    fn fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }
}

// ---------------------------------------------------------------------------------------------
// Pickup: the app in this process; a real `pickup serve` where its memory is the point.

struct Pickup {
    url: String,
    running: Running,
}

/// What serves `url`; held until the test ends.
enum Running {
    InProcess {
        _app: Served,
    },
    Child {
        child: Child,
        _dir: tempfile::TempDir,
    },
}

/// `PICKUP_JWKS_URL` as `serve`'s flag: `--jwks-url`.
fn flag(var: &str) -> String {
    let name = var.trim_start_matches("PICKUP_").to_ascii_lowercase();
    format!("--{}", name.replace('_', "-"))
}

impl Pickup {
    /// The app with `env` as its flags (and the test secret unless `secret` is false), once it
    /// listens, which is after its start-up fetch of the JWKS.
    async fn start(env: &[(&str, &str)], secret: bool) -> Pickup {
        let flags: Vec<String> = env
            .iter()
            .flat_map(|(var, value)| [flag(var), value.to_string()])
            .collect();
        // Starting blocks until the JWKS is fetched from this runtime's identity provider.
        let served = tokio::task::spawn_blocking(move || {
            let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
            match secret {
                true => Served::start(&flags),
                false => in_process::Serving::new(&flags).without_secret().start(),
            }
        })
        .await
        .unwrap();
        Pickup {
            url: served.url.clone(),
            running: Running::InProcess { _app: served },
        }
    }

    /// `pickup serve` with `env` and the test secret, for a test of the process itself.
    async fn process(env: &[(&str, &str)]) -> Pickup {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        tokio::task::spawn_blocking(move || {
            let dir = tempfile::tempdir().unwrap();
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_pickup"));
            cmd.arg("serve")
                .env("PICKUP_ADDR", "127.0.0.1:0")
                .env("PICKUP_STORE", format!("file://{}", dir.path().display()))
                .env("PICKUP_SITE", dir.path().join("no-site"))
                .env("PICKUP_LOG", "error")
                .env("PICKUP_SECRET", SECRET)
                .envs(env)
                .stdout(Stdio::piped());
            let mut child = cmd.spawn().unwrap();
            let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
            let url = loop {
                let line = lines
                    .next()
                    .expect("pickup exited before listening")
                    .unwrap();
                if let Some(rest) = line.split("listening on ").nth(1) {
                    break rest.split_whitespace().next().unwrap().to_string();
                }
            };
            std::thread::spawn(move || lines.for_each(drop));
            Pickup {
                url,
                running: Running::Child { child, _dir: dir },
            }
        })
        .await
        .unwrap()
    }

    fn client(&self) -> TestClient {
        TestClient::url(&self.url)
    }

    /// The status and body of reading `ws` with `token`.
    async fn read(&self, ws: &str, token: &str) -> (StatusCode, Value) {
        let res = self.client().page(token, ws, "").await;
        (res.status, res.value())
    }

    async fn status(&self, token: &str) -> StatusCode {
        self.read("acme", token).await.0
    }

    /// The status and body of registering an item in `ws` with `token`.
    async fn register(&self, ws: &str, token: &str) -> (StatusCode, Value) {
        let body = json!({"key": "k1", "title": "item", "status": "running"});
        let res = self.client().registered(token, ws, &body).await;
        (res.status, res.value())
    }

    /// A token of Pickup's own (HS256), with the claims `pickup token --iss … --aud …` writes.
    fn hs256(&self, sub: &str) -> String {
        let exp = crate::common::client::now_secs() + 3600;
        let claims = json!({"sub": sub, "ws": ["acme"], "scope": "read", "exp": exp, "iss": ISS, "aud": AUD});
        crate::common::client::signed(&claims)
    }

    fn pid(&self) -> u32 {
        match &self.running {
            Running::Child { child, .. } => child.id(),
            Running::InProcess { .. } => panic!("the app runs in this process"),
        }
    }
}

impl Drop for Pickup {
    fn drop(&mut self) {
        if let Running::Child { child, .. } = &mut self.running {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn message(body: &Value) -> String {
    body["message"].as_str().unwrap_or_default().to_string()
}

fn jwks_env<'a>(url: &'a str, min_refresh: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("PICKUP_JWKS_URL", url),
        ("PICKUP_JWKS_MIN_REFRESH", min_refresh),
        ("PICKUP_ISSUER", ISS),
        ("PICKUP_AUDIENCE", AUD),
    ]
}

// ---------------------------------------------------------------------------------------------

mod peer;
mod streams;
mod tokens;
