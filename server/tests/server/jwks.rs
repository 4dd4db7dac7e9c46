//! Tokens from an identity provider, over real HTTP: the app served in this process (a real
//! `pickup serve` where its memory is the point) with `PICKUP_JWKS_URL` pointing at a JWKS document this test serves on loopback (and counts the
//! fetches of), with RSA, P-256 and Ed25519 keys made here and tokens signed with
//! `jsonwebtoken::encode`. No sleeps: the tests wait on the server's answers or on the count of
//! fetches, each within a bound.

use crate::common::client::TestClient;
use crate::common::in_process::{Listening, Served};
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
                false => Served::start_without_secret(&flags),
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

    /// A token of Pickup's own (HS256), from `pickup token`.
    fn hs256(&self, sub: &str) -> String {
        let out = Command::new(env!("CARGO_BIN_EXE_pickup"))
            .args([
                "token", "--sub", sub, "--ws", "acme", "--iss", ISS, "--aud", AUD,
            ])
            .env("PICKUP_SECRET", SECRET)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rs256_es256_and_eddsa_tokens_are_accepted_beside_hs256() {
    let (rsa, ec, ed) = (Key::rsa("rsa-1"), Key::p256("ec-1"), Key::ed25519("ed-1"));
    let (idp, url) = Idp::start(&[&rsa, &ec, &ed]).await;
    let pickup = Pickup::start(&jwks_env(&url, "30s"), true).await;
    assert_eq!(idp.fetches(), 1, "fetched once, at start");
    for key in [&rsa, &ec, &ed] {
        let (status, body) = pickup
            .read("acme", &key.sign(&claims("alice", false)))
            .await;
        assert_eq!(status, StatusCode::OK, "{:?}: {body}", key.alg);
        let (status, body) = pickup
            .register("acme", &key.sign(&claims("bob", true)))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{:?}: {body}", key.alg);
        assert_eq!(body["owner"]["name"], "BOB");
    }
    // Pickup's own tokens still work, with the same issuer and audience rules.
    assert_eq!(pickup.status(&pickup.hs256("carol")).await, StatusCode::OK);
    // A member of acme only.
    let (status, _) = pickup
        .read("beta", &rsa.sign(&claims("alice", false)))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(idp.fetches(), 1, "known keys need no fetch");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_key_is_used_without_restart_after_one_fetch() {
    let old = Key::rsa("2024-old");
    let (idp, url) = Idp::start(&[&old]).await;
    let pickup = Pickup::start(&jwks_env(&url, "1s"), false).await;
    assert_eq!(idp.fetches(), 1);
    // The provider rotates: a new key appears beside the old one.
    let new = Key::p256("2025-new");
    idp.set(&[&old, &new]);
    let token = new.sign(&claims("alice", false));
    // Poll, within a bound, until the new key is accepted.
    let (start, mut refused) = (Instant::now(), 0);
    let accepted = loop {
        match pickup.read("acme", &token).await {
            (StatusCode::OK, _) => break true,
            (StatusCode::UNAUTHORIZED, body) => {
                assert!(message(&body).contains("2025-new"), "{body}");
                refused += 1;
            }
            other => panic!("{other:?}"),
        }
        if start.elapsed() > Duration::from_secs(15) {
            break false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(accepted, "the new key was never accepted");
    // Every refusal came inside the minimum refresh period after the start-up fetch: one more
    // fetch in all, however many tokens asked.
    assert_eq!(idp.fetches(), 2, "{refused} tokens were refused before");
    // The old key is still in the document: still honoured, and nothing more is fetched.
    assert_eq!(
        pickup.status(&old.sign(&claims("bob", false))).await,
        StatusCode::OK
    );
    assert_eq!(pickup.status(&token).await, StatusCode::OK);
    assert_eq!(idp.fetches(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_key_ids_fetch_at_most_once_per_min_refresh() {
    let key = Key::rsa("k1");
    let (idp, url) = Idp::start(&[&key]).await;
    let pickup = Pickup::start(&jwks_env(&url, "1h"), true).await;
    assert_eq!(idp.fetches(), 1);
    // A new key is in the document, but the start-up fetch was less than an hour ago.
    let new = Key::ed25519("k2");
    idp.set(&[&key, &new]);
    let mut tasks = Vec::new();
    let pickup = Arc::new(pickup);
    for i in 0..20 {
        let pickup = pickup.clone();
        let stranger = Key::p256(&format!("made-up-{i}"));
        let token = if i == 0 {
            new.sign(&claims("alice", false))
        } else {
            stranger.sign(&claims("alice", false))
        };
        tasks.push(tokio::spawn(
            async move { pickup.read("acme", &token).await },
        ));
    }
    for t in tasks {
        let (status, body) = t.await.unwrap();
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
        assert!(
            message(&body).contains("is not in the identity provider's key set"),
            "{body}"
        );
    }
    assert_eq!(idp.fetches(), 1, "no fetch within PICKUP_JWKS_MIN_REFRESH");
    assert_eq!(
        pickup.status(&key.sign(&claims("bob", false))).await,
        StatusCode::OK
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_removed_from_the_document_is_refused_after_the_next_refresh() {
    let (leaving, staying) = (Key::rsa("leaving"), Key::ed25519("staying"));
    let (idp, url) = Idp::start(&[&leaving, &staying]).await;
    let pickup = Pickup::start(&jwks_env(&url, "0s"), true).await;
    let token = leaving.sign(&claims("alice", false));
    assert_eq!(pickup.status(&token).await, StatusCode::OK);
    idp.set(&[&staying]);
    // Not refreshed yet: the cached key still verifies.
    assert_eq!(pickup.status(&token).await, StatusCode::OK);
    assert_eq!(idp.fetches(), 1);
    // A token naming an unknown key makes the server fetch again...
    let stranger = Key::p256("stranger").sign(&claims("mallory", false));
    assert_eq!(pickup.status(&stranger).await, StatusCode::UNAUTHORIZED);
    assert_eq!(idp.fetches(), 2);
    // ...and from then on the removed key is refused, the other one still honoured.
    let (status, body) = pickup.read("acme", &token).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert!(message(&body).contains("\"leaving\""), "{body}");
    assert_eq!(
        pickup.status(&staying.sign(&claims("bob", false))).await,
        StatusCode::OK
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_refresh_keeps_the_last_good_keys() {
    let key = Key::p256("k1");
    let (idp, url) = Idp::start(&[&key]).await;
    let pickup = Pickup::start(&jwks_env(&url, "0s"), false).await;
    idp.down.store(true, Ordering::SeqCst);
    let (status, body) = pickup
        .read("acme", &Key::rsa("new").sign(&claims("alice", false)))
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert!(message(&body).contains("last refresh failed"), "{body}");
    assert_eq!(idp.fetches(), 2);
    assert_eq!(
        pickup.status(&key.sign(&claims("bob", false))).await,
        StatusCode::OK
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_issuer_or_audience_is_refused() {
    let key = Key::rsa("k1");
    let (_idp, url) = Idp::start(&[&key]).await;
    let pickup = Pickup::start(&jwks_env(&url, "30s"), true).await;
    let with = |edit: &dyn Fn(&mut Value)| {
        let mut c = claims("alice", false);
        edit(&mut c);
        key.sign(&c)
    };
    // An audience list that includes ours (as Keycloak sends it) is fine.
    let good = with(&|c| c["aud"] = json!(["account", AUD]));
    assert_eq!(pickup.status(&good).await, StatusCode::OK);
    for (what, token) in [
        (
            "other issuer",
            with(&|c| c["iss"] = json!("https://evil.test/realms/acme")),
        ),
        (
            "no issuer",
            with(&|c| drop(c.as_object_mut().unwrap().remove("iss"))),
        ),
        ("other audience", with(&|c| c["aud"] = json!("account"))),
        (
            "no audience",
            with(&|c| drop(c.as_object_mut().unwrap().remove("aud"))),
        ),
        ("expired", with(&|c| c["exp"] = json!(now_secs() - 3600))),
    ] {
        let (status, body) = pickup.read("acme", &token).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{what}: {body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_is_used_only_with_the_alg_it_allows() {
    let rsa = Key::rsa("rsa-inferred"); // no alg in its JWK: RS256
    let mut rs256 = Key::rsa("rsa-declared");
    rs256.jwk["alg"] = json!("RS256");
    let ec = Key::p256("ec");
    let (idp, url) = Idp::start(&[&rsa, &rs256, &ec]).await;
    // A symmetric key in the document: never used.
    idp.push(json!({"kty": "oct", "kid": "oct", "alg": "HS256", "k": "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA"}));
    for secret in [true, false] {
        let pickup = Pickup::start(&jwks_env(&url, "1h"), secret).await;
        let c = claims("mallory", true);
        assert_eq!(pickup.status(&rsa.sign(&c)).await, StatusCode::OK);
        assert_eq!(pickup.status(&rs256.sign(&c)).await, StatusCode::OK);
        let mut refused = vec![
            ("RS384 with an RS256 key", rsa.sign_as(Algorithm::RS384, &c)),
            ("PS256 with an RS256 key", rsa.sign_as(Algorithm::PS256, &c)),
            (
                "RS512 with a key declared RS256",
                rs256.sign_as(Algorithm::RS512, &c),
            ),
        ];
        // An ES256 token whose header is changed to ES384.
        let es = ec.sign(&c);
        let mut parts: Vec<String> = es.split('.').map(str::to_string).collect();
        parts[0] = b64(br#"{"alg":"ES384","kid":"ec","typ":"JWT"}"#);
        refused.push(("ES384 header on a P-256 key", parts.join(".")));
        // alg none, naming a real key.
        parts[0] = b64(br#"{"alg":"none","kid":"rsa-inferred"}"#);
        parts[2] = String::new();
        refused.push(("alg none", parts.join(".")));
        // The confusion attack: HS256 "signed" with the RSA key's public material, naming it.
        for public in [
            serde_json::to_vec(&rsa.jwk).unwrap(),
            rsa.jwk["n"].as_str().unwrap().as_bytes().to_vec(),
        ] {
            let header = Header {
                kid: Some("rsa-inferred".into()),
                ..Header::new(Algorithm::HS256)
            };
            let forged = encode(&header, &c, &EncodingKey::from_secret(&public).unwrap()).unwrap();
            refused.push(("HS256 with the public key as secret", forged));
        }
        // HS256 with the document's own symmetric key.
        let header = Header {
            kid: Some("oct".into()),
            ..Header::new(Algorithm::HS256)
        };
        let oct = b"secret-secret-secret-secret-secret";
        refused.push((
            "HS256 with the JWKS's oct key",
            encode(&header, &c, &EncodingKey::from_secret(oct).unwrap()).unwrap(),
        ));
        for (what, token) in refused {
            let (status, body) = pickup.read("acme", &token).await;
            assert_eq!(
                status,
                StatusCode::UNAUTHORIZED,
                "{what} (secret {secret}): {body}"
            );
        }
    }
}

fn b64(bytes: &[u8]) -> String {
    base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, bytes)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_are_mapped_groups_with_a_prefix_and_scp() {
    let key = Key::ed25519("k1");
    let (_idp, url) = Idp::start(&[&key]).await;
    let mut env = jwks_env(&url, "30s");
    env.extend([
        ("PICKUP_WS_CLAIM", "groups"),
        ("PICKUP_WS_PREFIX", "pickup:"),
        ("PICKUP_SCOPE_CLAIM", "scp"),
    ]);
    let pickup = Pickup::start(&env, true).await;
    let token = |groups: Value, scp: Option<Value>| {
        let mut c = json!({
            "sub": "0f8fad5b-d9cb-469f-a165-70867728950e", "preferred_username": "dana",
            "groups": groups, "iss": ISS, "aud": AUD, "exp": now_secs() + 600,
        });
        if let Some(scp) = scp {
            c["scp"] = scp;
        }
        key.sign(&c)
    };
    let writer = token(
        json!(["pickup:acme", "beta", "admins:gamma"]),
        Some(json!(["read", "write"])),
    );
    let (status, body) = pickup.register("acme", &writer).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(
        body["owner"]["name"], "dana",
        "preferred_username when no name"
    );
    // Values without the prefix count for nothing.
    for ws in ["beta", "gamma"] {
        assert_eq!(
            pickup.read(ws, &writer).await.0,
            StatusCode::FORBIDDEN,
            "{ws}"
        );
    }
    // scp as a string, without write; and no scp at all: read only.
    for reader in [
        token(json!("pickup:acme"), Some(json!("read profile"))),
        token(json!(["pickup:acme"]), None),
    ] {
        assert_eq!(pickup.status(&reader).await, StatusCode::OK);
        assert_eq!(
            pickup.register("acme", &reader).await.0,
            StatusCode::FORBIDDEN
        );
    }
    // The `ws` claim means nothing to this mapping.
    let mut c = claims("erin", true);
    c["scp"] = json!(["write"]);
    assert_eq!(pickup.status(&key.sign(&c)).await, StatusCode::FORBIDDEN);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_jwks_at_start_leaves_hs256_working_and_refuses_idp_tokens_with_401() {
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/certs", l.local_addr().unwrap())
    };
    let pickup = Pickup::start(&jwks_env(&closed, "1h"), true).await;
    assert_eq!(pickup.status(&pickup.hs256("alice")).await, StatusCode::OK);
    let (status, body) = pickup
        .read("acme", &Key::rsa("k1").sign(&claims("alice", false)))
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert!(message(&body).contains("could not be fetched"), "{body}");
    // Without a secret nothing could be verified: the server says so and does not start.
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_pickup"))
        .arg("serve")
        .env("PICKUP_ADDR", "127.0.0.1:0")
        .env("PICKUP_STORE", format!("file://{}", dir.path().display()))
        .env("PICKUP_LOG", "off")
        .env_remove("PICKUP_SECRET")
        .env("PICKUP_JWKS_URL", &closed)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("PICKUP_JWKS_URL"), "{stderr}");
}

/// The live stream of `acme` on the server at `url`, which must be opened.
async fn live(url: &str, token: &str) -> reqwest::Response {
    let res = crate::common::stream::client()
        .get(format!("{url}/api/v1/workspaces/acme/live"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    res
}

/// The text of a live stream until its closing event (`unauthenticated` or `reconnect`), or
/// `None` if none came within `bound`.
async fn closing_event(res: reqwest::Response, bound: std::time::Duration) -> Option<String> {
    let read = async move {
        let mut res = res;
        let mut text = String::new();
        while let Some(chunk) = res.chunk().await.ok().flatten() {
            text.push_str(&String::from_utf8_lossy(&chunk));
            for closing in ["event: unauthenticated", "event: reconnect"] {
                if text.contains(closing) {
                    return closing.trim_start_matches("event: ").to_string();
                }
            }
        }
        "the stream ended without a closing event".to_string()
    };
    tokio::time::timeout(bound, read).await.ok()
}

/// A live stream lasts no longer than what allowed it: once its token's key has left the
/// provider's set (and the server has refreshed it), the stream ends as unauthenticated,
/// while a stream of a key that stayed goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_stream_ends_when_its_key_leaves_the_key_set() {
    let (leaving, staying) = (Key::rsa("leaving"), Key::ed25519("staying"));
    let (idp, url) = Idp::start(&[&leaving, &staying]).await;
    let mut env = jwks_env(&url, "0s");
    env.push(("PICKUP_JWKS_REFRESH", "1s"));
    let pickup = Pickup::start(&env, false).await;
    let open = |token: String| {
        let url = pickup.url.clone();
        async move { live(&url, &token).await }
    };
    let doomed = open(leaving.sign(&claims("alice", false))).await;
    let lasting = open(staying.sign(&claims("bob", false))).await;
    idp.set(&[&staying]);
    assert_eq!(
        closing_event(doomed, std::time::Duration::from_secs(20))
            .await
            .as_deref(),
        Some("unauthenticated"),
        "the withdrawn key's stream ends"
    );
    // The other stream is still open after the refreshes that ended the first.
    assert_eq!(
        closing_event(lasting, std::time::Duration::from_secs(5)).await,
        None,
        "a stream of a key that stayed goes on"
    );
}

/// A busy stream is checked too: while a writer keeps changing its page, its key leaves the
/// set, and the stream ends at that refresh (the check used to be re-armed by every page, so a
/// busy stream lasted until `exp`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_live_stream_ends_at_the_refresh_that_drops_its_key() {
    let (leaving, staying) = (Key::rsa("leaving"), Key::ed25519("staying"));
    let (idp, url) = Idp::start(&[&leaving, &staying]).await;
    let mut env = jwks_env(&url, "0s");
    env.push(("PICKUP_JWKS_REFRESH", "1s"));
    env.push(("PICKUP_LIVE_EVERY", "100ms"));
    let pickup = Arc::new(Pickup::start(&env, false).await);
    let res = live(&pickup.url, &leaving.sign(&claims("alice", false))).await;
    // A page for the stream every few hundred milliseconds, until the test ends.
    let writer = staying.sign(&claims("bob", true));
    let busy = {
        let (pickup, writer) = (pickup.clone(), writer.clone());
        tokio::spawn(async move {
            for i in 0.. {
                let body = json!({"key": format!("k{i}"), "title": "busy", "status": "running"});
                let res = pickup.client().registered(&writer, "acme", &body).await;
                assert_eq!(res.status, StatusCode::CREATED);
                tokio::time::sleep(std::time::Duration::from_millis(150)).await;
            }
        })
    };
    idp.set(&[&staying]);
    let closing = closing_event(res, std::time::Duration::from_secs(20)).await;
    busy.abort();
    let _ = busy.await;
    assert_eq!(
        closing.as_deref(),
        Some("unauthenticated"),
        "the busy stream of a withdrawn key ends"
    );
}

// ---------------------------------------------------------------------------------------------
// A hostile identity provider (issue 26)

/// An axum app on a free loopback port, until dropped.
async fn serve_app(app: axum::Router) -> Listening {
    Listening::start(app).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_of_the_document_is_not_followed_and_is_named() {
    // The keys are real, but served from another origin the configured one redirects to.
    let key = Key::rsa("k1");
    let (idp, elsewhere) = Idp::start(&[&key]).await;
    let to = elsewhere.clone();
    let redirecting_peer = serve_app(axum::Router::new().fallback(move || {
        let to = to.clone();
        async move {
            (
                axum::http::StatusCode::TEMPORARY_REDIRECT,
                [(axum::http::header::LOCATION, to)],
            )
        }
    }))
    .await;
    let redirecting = redirecting_peer.url.clone();
    let pickup = Pickup::start(&jwks_env(&format!("{redirecting}/certs"), "1h"), true).await;
    let (status, body) = pickup
        .read("acme", &key.sign(&claims("alice", false)))
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    let why = message(&body);
    assert!(why.contains("redirected (307 Temporary Redirect)"), "{why}");
    assert!(why.contains(&elsewhere), "names where it pointed: {why}");
    assert_eq!(idp.fetches(), 0, "the other origin was never asked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_1_gib_document_is_refused_while_it_is_read() {
    use futures::StreamExt;
    const GIB: u64 = 1 << 30;
    let sent = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counter = sent.clone();
    // 1 GiB of spaces, chunked, made as it is sent (one 64 KiB buffer shared by every chunk).
    let peer = serve_app(axum::Router::new().fallback(move || {
        let sent = counter.clone();
        async move {
            let chunk = bytes::Bytes::from(vec![b' '; 64 * 1024]);
            let stream = futures::stream::repeat(chunk)
                .take((GIB / (64 * 1024)) as usize)
                .map(move |c| {
                    sent.fetch_add(c.len() as u64, Ordering::SeqCst);
                    Ok::<_, std::convert::Infallible>(c)
                });
            axum::body::Body::from_stream(stream)
        }
    }))
    .await;
    let url = peer.url.clone();
    // The server's own peak memory: a process of its own.
    let pickup = Pickup::process(&jwks_env(&format!("{url}/certs"), "1h")).await;
    let (status, body) = pickup
        .read("acme", &Key::rsa("k1").sign(&claims("alice", false)))
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert!(
        message(&body).contains("larger than 1048576 bytes"),
        "{body}"
    );
    let status = std::fs::read_to_string(format!("/proc/{}/status", pickup.pid())).unwrap();
    let hwm_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    let sent = sent.load(Ordering::SeqCst);
    eprintln!("pickup serve against a 1 GiB JWKS: VmHWM {hwm_kib} KiB, {sent} bytes sent");
    assert!(hwm_kib < 128 * 1024, "peak memory {hwm_kib} KiB");
    assert!(sent < GIB / 8, "stopped reading: {sent} bytes sent");
}
