//! Which tokens of an identity provider are taken: each algorithm, keys as they come and go,
//! issuer and audience, and the claims mapped to a caller.

use super::*;

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
