//! `pickup item …`, the one-call producer commands, run in this process as the binary runs
//! them (their output and errors read from buffers), against the app served here.

use super::run::{card, free_addr, writer, WS};
use crate::common::cli;
use crate::common::client::token;
use crate::common::in_process::Served;
use serde_json::Value;

/// `pickup item …` with `args`: its output, after checking it succeeded.
async fn item(s: &Served, token: &str, args: &[&str]) -> String {
    let mut all = vec!["item"];
    all.extend_from_slice(args);
    let ran = cli::producer(&s.url, token, &all).await;
    assert!(ran.exited(0), "pickup item {args:?}: {:?}", ran.code);
    ran.stdout()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn item_commands_start_update_finish_get_and_remove_an_item() {
    let s = Served::start(&[]);
    let token = writer();
    let id = item(
        &s,
        &token,
        &[
            "start", "--ws", WS, "--key", "upload", "--title", "Upload", "--url", "/u/1",
        ],
    )
    .await;
    let id = id.trim_end();
    assert!(id.ends_with("_upload"), "the id alone: {id:?}");
    let c = card(&s, "upload").await.unwrap();
    assert_eq!(
        (c["id"].as_str(), &c["status"]),
        (Some(id), &"running".into())
    );

    let args = ["update", "--ws", WS, id, "--progress", "0.3"];
    let updated: Value = serde_json::from_str(&item(&s, &token, &args).await).unwrap();
    assert_eq!(updated["progress"], 0.3);
    assert_eq!(updated["title"], "Upload", "what is not given is kept");
    assert_eq!(updated["url"], "/u/1");

    let args = ["finish", "--ws", WS, id, "--status", "failed"];
    let finished: Value = serde_json::from_str(&item(&s, &token, &args).await).unwrap();
    assert_eq!(finished["status"], "failed");
    assert!(finished["finished_at"].is_string());
    let got = item(&s, &token, &["get", "--ws", WS, id]).await;
    let got: Value = serde_json::from_str(&got).unwrap();
    assert_eq!(got, finished, "get prints the record as it is");

    assert_eq!(item(&s, &token, &["rm", "--ws", WS, id]).await, "");
    let ran = cli::producer(&s.url, &token, &["item", "get", "--ws", WS, id]).await;
    assert!(
        ran.refusal().contains("(404): no such item"),
        "{}",
        ran.refusal()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn item_commands_say_what_is_wrong() {
    let s = Served::start(&[]);
    let fail = async |token: &str, url: &str, args: &[&str]| {
        let ran = cli::producer(url, token, args).await;
        ran.refusal().to_string()
    };
    let reader = token("reader", WS, false);
    let start = ["item", "start", "--ws", WS, "--key", "k", "--title", "T"];
    assert!(fail(&reader, &s.url, &start).await.contains("(403)"));
    assert!(fail(&writer(), "localhost:3000", &start)
        .await
        .contains("PICKUP_URL"));
    assert!(fail("", &s.url, &start).await.contains("PICKUP_TOKEN"));
    let args = ["item", "finish", "--ws", WS, "x", "--status", "running"];
    let err = fail(&writer(), &s.url, &args).await;
    assert!(err.contains("succeeded, failed, cancelled"), "{err}");
    let down = format!("http://{}", free_addr());
    assert!(fail(&writer(), &down, &start)
        .await
        .contains("cannot reach"));
}

/// An item's `detail`, the line under its title: set at registration (`POST`, `pickup item
/// start`, `pickup run`), changed by any update (`PUT`, `pickup item update`, "" removes it),
/// kept by an update that does not say it, and refused by the title's rule at every door.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_items_detail_is_set_changed_and_refused_by_the_titles_rule() {
    use super::run::run_args;
    use axum::http::StatusCode;
    use serde_json::json;
    let s = Served::start(&[]);
    let token = writer();
    let detail = |key: &'static str| {
        let s = &s;
        async move { card(s, key).await.unwrap()["detail"].clone() }
    };
    let start = [
        "start",
        "--ws",
        WS,
        "--key",
        "up",
        "--title",
        "Upload",
        "--detail",
        " 0 of 12 files ",
    ];
    let id = item(&s, &token, &start).await;
    let id = id.trim_end();
    assert_eq!(detail("up").await, "0 of 12 files", "trimmed");

    let body = json!({"title": "Upload", "status": "running", "detail": "3 of 12 files"});
    let put = s.client().update(&token, WS, id, &body).await;
    assert_eq!(put.status, StatusCode::OK, "{}", put.text());
    assert_eq!(detail("up").await, "3 of 12 files");
    item(&s, &token, &["update", "--ws", WS, id, "--progress", "0.5"]).await;
    assert_eq!(detail("up").await, "3 of 12 files", "kept when not said");
    item(&s, &token, &["update", "--ws", WS, id, "--detail", ""]).await;
    assert_eq!(detail("up").await, Value::Null, "\"\" removes it");

    let ran = cli::producer(
        &s.url,
        &token,
        &run_args("job", &["--detail", "Step 1"], "true"),
    )
    .await;
    assert!(ran.exited(0), "{:?} {}", ran.code, ran.err);
    assert_eq!(detail("job").await, "Step 1");

    for bad in [
        "d".repeat(121),
        "a\u{202E}b".to_string(),
        "two\nlines".to_string(),
    ] {
        let body = json!({"key": "bad", "title": "T", "detail": bad});
        let res = s.client().registered(&token, WS, &body).await;
        assert_eq!(
            (res.status, res.error()),
            (StatusCode::BAD_REQUEST, "invalid_body".to_string()),
            "{bad:?}"
        );
        assert!(res.text().contains("detail must be"), "{}", res.text());
        let body = json!({"title": "Upload", "status": "running", "detail": bad});
        let res = s.client().update(&token, WS, id, &body).await;
        assert_eq!(res.status, StatusCode::BAD_REQUEST, "{bad:?}");
        let args = run_args("job", &["--detail", &bad], "true");
        let ran = cli::producer(&s.url, &token, &args).await;
        assert!(
            ran.refusal().contains("detail must be"),
            "{}",
            ran.refusal()
        );
    }
}
