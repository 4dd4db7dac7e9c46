//! Section 5: live streams, from target/bench/live.json (written by the Playwright bench,
//! end2end/bench/live.bench.ts): how soon a registration on one server is on the screen of a
//! viewer of another, and what many viewers cost the store and the server.

use super::format::{ms, rate, thousands};
use super::verdict::{record, section_not_run, Met, Verdict};
use super::Loaded;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// live.json, as live.bench.ts writes it.
#[derive(Debug, Clone, Deserialize)]
pub struct Results {
    pub registrations: usize,
    /// Per registration, ms from server A's 201 to the card in the DOM of a viewer of server B.
    pub latency_ms: Vec<f64>,
    pub live_every_s: f64,
    pub cap: usize,
    pub subscribers: usize,
    pub window_s: f64,
    pub listings_per_s: f64,
    pub record_reads_per_s: f64,
    pub store_requests_per_s: BTreeMap<String, f64>,
    pub rss_mb_no_streams: f64,
    pub rss_mb_subscribed: f64,
    pub idle_streams: usize,
    pub rss_mb_idle_streams: f64,
}

const P95_MS: f64 = 1_500.0;
const LISTINGS_PER_S: f64 = 1.2;
const RSS_MB: f64 = 128.0;

/// The 95th percentile, nearest rank.
fn p95(samples: &[f64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((0.95 * sorted.len() as f64).ceil() as usize).max(1);
    sorted.get(rank - 1).copied().unwrap_or(f64::NAN)
}

fn targets(cap: usize) -> [String; 5] {
    [
        format!(
            "p95 from a 201 on server A to the card on a viewer's screen on server B ≤ {P95_MS} ms"
        ),
        format!("500 subscribers: store listings ≤ {LISTINGS_PER_S} a second"),
        format!(
            "500 subscribers: record reads ≤ 3N + 1 = {} a second",
            3 * cap + 1
        ),
        format!("500 subscribers: server RSS < {RSS_MB} MB"),
        format!("1,000 idle streams: server RSS < {RSS_MB} MB"),
    ]
}

fn at_most(x: f64, limit: f64, what: &str) -> Met {
    if x <= limit {
        Met::Yes
    } else {
        Met::No(format!("{} {what} > {}", rate(x), rate(limit)))
    }
}

pub fn section(out: &mut String, loaded: &Loaded<Results>, verdicts: &mut Vec<Verdict>) {
    let _ = writeln!(out, "## 5. Live\n");
    let v = match loaded.or_why() {
        Ok(v) => v,
        Err(why) => {
            section_not_run(out, verdicts, "5", "live.json", &why, targets(8));
            return;
        }
    };
    let p95 = p95(&v.latency_ms);
    let median = {
        let mut s = v.latency_ms.clone();
        s.sort_by(f64::total_cmp);
        s.get(s.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let _ = writeln!(
        out,
        "Two `pickup serve` on one file store, each reading a watched workspace every {} s. A viewer's widget on server B (polling set to 10 minutes, so only the stream can explain a card) and {} registrations through server A: from each 201 to the card in the DOM, median {} ms, p95 {} ms.\n",
        v.live_every_s,
        v.registrations,
        ms(median),
        ms(p95)
    );
    store_costs(out, v);
    for (target, measured, met) in judged(v, p95) {
        record(
            out,
            verdicts,
            Verdict {
                section: "5",
                target,
                measured,
                met,
            },
        );
    }
    out.push('\n');
}

/// The section's targets, each with what the run measured of it and whether that meets it.
fn judged(v: &Results, p95: f64) -> [(String, String, Met); 5] {
    let [t_lat, t_list, t_read, t_rss, t_idle] = targets(v.cap);
    let reads_limit = (3 * v.cap + 1) as f64;
    [
        (
            t_lat,
            format!("{} ms over {} registrations", ms(p95), v.latency_ms.len()),
            if v.latency_ms.len() < v.registrations {
                Met::No(format!(
                    "only {} of {} registrations were seen",
                    v.latency_ms.len(),
                    v.registrations
                ))
            } else if p95 <= P95_MS {
                Met::Yes
            } else {
                Met::No(format!("{} ms > {P95_MS} ms", ms(p95)))
            },
        ),
        (
            t_list,
            format!("{} a second", rate(v.listings_per_s)),
            at_most(v.listings_per_s, LISTINGS_PER_S, "listings a second"),
        ),
        (
            t_read,
            format!("{} a second", rate(v.record_reads_per_s)),
            at_most(v.record_reads_per_s, reads_limit, "reads a second"),
        ),
        (
            t_rss,
            format!("{} MB", v.rss_mb_subscribed),
            at_most(v.rss_mb_subscribed, RSS_MB, "MB"),
        ),
        (
            t_idle,
            format!("{} MB", v.rss_mb_idle_streams),
            at_most(v.rss_mb_idle_streams, RSS_MB, "MB"),
        ),
    ]
}

/// What the streams of one workspace cost the store, and the server's memory.
fn store_costs(out: &mut String, v: &Results) {
    let _ = writeln!(
        out,
        "One server on a memory store, one workspace of 30 live items, {} live streams (cap {}) for {} s, store requests counted by the server's own `/metrics`:\n",
        thousands(v.subscribers as u64),
        v.cap,
        v.window_s
    );
    let _ = writeln!(out, "| store request | per second |");
    let _ = writeln!(out, "|---|---:|");
    for (op, per_s) in &v.store_requests_per_s {
        let _ = writeln!(out, "| {op} | {} |", rate(*per_s));
    }
    let _ = writeln!(
        out,
        "\nServer memory (RSS): {} MB with no stream, {} MB with {} subscribers, {} MB with {} idle streams.\n",
        v.rss_mb_no_streams,
        v.rss_mb_subscribed,
        thousands(v.subscribers as u64),
        v.rss_mb_idle_streams,
        thousands(v.idle_streams as u64)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_the_playwright_bench_writes_and_judges_it() {
        let json = r#"{"registrations":2,"latency_ms":[800,1600],"p95_latency_ms":1600,
            "median_latency_ms":1600,"live_every_s":1,"cap":8,"subscribers":500,"window_s":30,
            "listings_per_s":1.2,"record_reads_per_s":8,"store_requests_per_s":{"get":8,"list":1.2},
            "rss_mb_no_streams":26.6,"rss_mb_subscribed":38.4,"idle_streams":1000,
            "rss_mb_idle_streams":155.1}"#;
        let r: Results = serde_json::from_str(json).unwrap();
        let mut out = String::new();
        let mut verdicts = Vec::new();
        section(&mut out, &Loaded::Read(r), &mut verdicts);
        let met: Vec<bool> = verdicts.iter().map(|v| matches!(v.met, Met::Yes)).collect();
        assert_eq!(met, [false, true, true, true, false], "{out}");
    }
}
