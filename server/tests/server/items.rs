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
