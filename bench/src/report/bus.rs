//! Section 6: live updates at a store cost that follows changes, from target/bench/bus.json
//! (written by scripts/bench_bus.py): three servers and one Redis, 1 and 20 watched
//! workspaces of 100 viewers each; the store's requests counted from the servers' `/metrics`
//! and priced at S3's request prices, beside the polling watchers had before.

use super::format::{ms, rate};
use super::verdict::{record, section_not_run, Met, Verdict};
use super::Loaded;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

#[derive(Debug, Clone, Deserialize)]
pub struct Results {
    pub runs: Vec<Run>,
    pub reconcile_every_s: f64,
    /// The quiet reconcile: many idle watched workspaces (absent from older bus.json files).
    #[serde(default)]
    pub quiet: Option<Quiet>,
}

/// Idle watched workspaces with their reconcile periods scaled down (`every_s`, `ceiling_s`
/// for 30 s and 10 min), and what the listings measured then cost at the default periods.
#[derive(Debug, Clone, Deserialize)]
pub struct Quiet {
    pub workspaces: usize,
    pub servers: usize,
    pub streams: usize,
    pub seconds: f64,
    pub every_s: f64,
    pub ceiling_s: f64,
    pub per_s_measured: BTreeMap<String, f64>,
    pub per_s_at_defaults: BTreeMap<String, f64>,
    pub usd_per_month_at_defaults: f64,
    pub fixed_period_usd_per_month: f64,
}

/// Issue 35.5: 1,000 idle watched workspaces on 3 servers, in all.
const QUIET_LISTINGS_PER_S: f64 = 2.0;

#[derive(Debug, Clone, Deserialize)]
pub struct Run {
    pub workspaces: usize,
    pub servers: usize,
    pub viewers_per_workspace: usize,
    pub idle: Phase,
    pub busy: Busy,
    pub down: Down,
    pub stale_viewers_after_down: usize,
    pub polling_before: Phase,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Phase {
    pub per_s: BTreeMap<String, f64>,
    pub usd_per_month: f64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Busy {
    pub seconds: f64,
    pub per_s: BTreeMap<String, f64>,
    pub usd_per_month: f64,
    pub writes: usize,
    pub beyond_the_writers_per_write: f64,
    pub latency_ms_p95: Option<f64>,
    pub latency_ms_p50: Option<f64>,
    pub latency_samples: usize,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Down {
    pub per_s: BTreeMap<String, f64>,
    pub usd_per_month: f64,
    pub polling: bool,
}

const P95_MS: f64 = 250.0;
/// A reconcile lists a workspace's four kinds of keys (markers, owner markers, dismissals,
/// records): the target is one listing per period.
const LISTINGS_PER_RECONCILE: f64 = 1.0;

fn per(rates: &BTreeMap<String, f64>, op: &str) -> f64 {
    rates.get(op).copied().unwrap_or(0.0)
}

fn targets() -> [String; 5] {
    [
        "idle: at most one listing per workspace per reconcile period, in all servers".into(),
        "idle: no record reads".into(),
        "busy: at most one store request per write beyond the writer's own".into(),
        format!("registration on one server to the card on a viewer of another: p95 ≤ {P95_MS} ms"),
        "bus stopped: polling takes over, no viewer stale after it".into(),
    ]
}

pub fn section(out: &mut String, loaded: &Loaded<Results>, verdicts: &mut Vec<Verdict>) {
    let _ = writeln!(out, "## 6. Live at a store cost that follows changes\n");
    let v = match loaded.or_why() {
        Ok(v) => v,
        Err(why) => {
            section_not_run(out, verdicts, "6", "bus.json", &why, targets());
            return;
        }
    };
    let _ = writeln!(
        out,
        "`scripts/bench_bus.py`: three `pickup serve` (release) on one file store and one Redis on loopback, `PICKUP_BUS` set, reconcile every {} s. Each workspace: 12 items, 100 live viewers (half on Mine) spread over the servers. 60 s idle, 60 s with one registration and one update a second spread over the servers, then Redis stopped for 30 s while registrations go on. Store requests are the servers' `pickup_store_requests_total`, summed; a month is 30 days at S3's prices ($0.005 per 1,000 LIST or PUT, $0.0004 per 1,000 GET). \"Before\" is the polling measured on main before this change (per server and watched workspace 1.2 listings and 8 record reads a second, plus a listing a second per Mine viewer), priced the same way.\n",
        v.reconcile_every_s
    );
    costs_table(out, v);
    for r in &v.runs {
        for (target, measured, met) in judged(v, r) {
            record(
                out,
                verdicts,
                Verdict {
                    section: "6",
                    target: format!(
                        "{target} ({} workspaces, {} servers)",
                        r.workspaces, r.servers
                    ),
                    measured,
                    met,
                },
            );
        }
    }
    if let Some(q) = &v.quiet {
        quiet(out, q, verdicts);
    }
    out.push('\n');
}

/// The quiet reconcile's paragraph and verdict.
fn quiet(out: &mut String, q: &Quiet, verdicts: &mut Vec<Verdict>) {
    let listings = per(&q.per_s_at_defaults, "list");
    let _ = writeln!(
        out,
        "\nQuiet workspaces: {} watched workspaces of one item and one stream each ({} streams) on {} servers, no writes, reconcile periods scaled down 30 times (`PICKUP_RECONCILE_EVERY` {} s, `PICKUP_RECONCILE_CEILING` {} s); after every period had grown to the ceiling, {} s measured {} LIST/s and {} GET/s. At the default 30 s and 10 min that is {} LIST/s, ${:.2} a month at S3 prices, against ${:.2} for one listing per workspace every 30 s.\n",
        q.workspaces,
        q.streams,
        q.servers,
        q.every_s,
        q.ceiling_s,
        q.seconds,
        rate(per(&q.per_s_measured, "list")),
        rate(per(&q.per_s_measured, "get")),
        rate(listings),
        q.usd_per_month_at_defaults,
        q.fixed_period_usd_per_month,
    );
    let met = if listings <= QUIET_LISTINGS_PER_S {
        Met::Yes
    } else {
        Met::No(format!("{} > {QUIET_LISTINGS_PER_S}", rate(listings)))
    };
    record(
        out,
        verdicts,
        Verdict {
            section: "6",
            target: format!(
                "quiet: {} idle watched workspaces on {} servers list at most {QUIET_LISTINGS_PER_S} a second in all",
                q.workspaces, q.servers
            ),
            measured: format!("{} LIST/s at the default periods", rate(listings)),
            met,
        },
    );
}

/// Store requests a second in each phase, and what a month of them costs.
fn costs_table(out: &mut String, v: &Results) {
    let _ = writeln!(
        out,
        "| workspaces | phase | LIST/s | GET/s | PUT/s | a month at S3 prices |"
    );
    let _ = writeln!(out, "|---:|---|---:|---:|---:|---:|");
    for r in &v.runs {
        let row = |out: &mut String, phase: &str, p: &BTreeMap<String, f64>, usd: f64| {
            let _ = writeln!(
                out,
                "| {} | {phase} | {} | {} | {} | ${usd:.2} |",
                r.workspaces,
                rate(per(p, "list")),
                rate(per(p, "get")),
                rate(per(p, "put")),
            );
        };
        row(
            out,
            "before: polling, idle",
            &r.polling_before.per_s,
            r.polling_before.usd_per_month,
        );
        row(out, "idle", &r.idle.per_s, r.idle.usd_per_month);
        row(
            out,
            "busy (2 writes/s)",
            &r.busy.per_s,
            r.busy.usd_per_month,
        );
        row(
            out,
            "bus stopped (polling)",
            &r.down.per_s,
            r.down.usd_per_month,
        );
    }
    out.push('\n');
}

/// Each target of [`targets`] with what one run measured of it, and whether that meets it.
fn judged(v: &Results, r: &Run) -> [(String, String, Met); 5] {
    let [t_list, t_read, t_busy, t_lat, t_down] = targets();
    let w = r.workspaces as f64;
    let listings = per(&r.idle.per_s, "list") * v.reconcile_every_s / w;
    let reads = per(&r.idle.per_s, "get");
    // What the writes cost the store beyond the writers' own requests: the busy phase's
    // requests less the writers' and less what the idle phase spent in the same time.
    let idle_per_s: f64 = r.idle.per_s.values().sum();
    // Not below zero: a busy minute may hold one reconcile fewer than the idle one.
    let per_write = (r.busy.beyond_the_writers_per_write
        - idle_per_s * r.busy.seconds / r.busy.writes.max(1) as f64)
        .max(0.0);
    let p95 = r.busy.latency_ms_p95.unwrap_or(f64::NAN);
    [
        (
            t_list,
            format!("{} listings per workspace per period", rate(listings)),
            if listings <= LISTINGS_PER_RECONCILE {
                Met::Yes
            } else {
                Met::No(format!("{} > {LISTINGS_PER_RECONCILE}", rate(listings)))
            },
        ),
        (
            t_read,
            format!("{} GET/s", rate(reads)),
            if reads == 0.0 {
                Met::Yes
            } else {
                Met::No(format!("{} GET/s", rate(reads)))
            },
        ),
        (
            t_busy,
            format!(
                "{} per write over {} writes ({} with the idle phase's reconciles over the \
                 same {} s counted in: they come whether or not anyone writes, and are \
                 judged above)",
                rate(per_write),
                r.busy.writes,
                rate(r.busy.beyond_the_writers_per_write),
                ms(r.busy.seconds)
            ),
            if per_write <= 1.0 {
                Met::Yes
            } else {
                Met::No(format!("{} > 1", rate(per_write)))
            },
        ),
        (
            t_lat,
            format!(
                "p95 {} ms (median {} ms) over {} registrations",
                ms(p95),
                ms(r.busy.latency_ms_p50.unwrap_or(f64::NAN)),
                r.busy.latency_samples
            ),
            if p95 <= P95_MS {
                Met::Yes
            } else {
                Met::No(format!("{} ms > {P95_MS} ms", ms(p95)))
            },
        ),
        (
            t_down,
            format!(
                "polling: {}; {} of {} viewers stale after",
                r.down.polling,
                r.stale_viewers_after_down,
                r.workspaces * r.viewers_per_workspace
            ),
            if r.down.polling && r.stale_viewers_after_down == 0 {
                Met::Yes
            } else {
                Met::No("stale viewers, or no polling".into())
            },
        ),
    ]
}
