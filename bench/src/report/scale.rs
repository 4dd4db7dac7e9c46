//! Section 8: a thousand workspaces per server (issue 35.6), from target/bench/scale.json,
//! written by scripts/bench_scale.py (`make bench-scale`; `make bench` does not run it): the
//! servers' RSS, CPU and store requests idle and busy, registration to card across servers, a
//! restart's store requests, stale pages after a reconcile period, and what 10,000 workspaces
//! on 10 servers would cost from these figures.

use super::format::{ms, rate, thousands};
use super::verdict::{record, Met, Verdict};
use super::Loaded;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// scale.json, as scripts/bench_scale.py writes it (the fields this section shows).
#[derive(Debug, Clone, Deserialize)]
pub struct Results {
    pub measured_at: String,
    pub workspaces: usize,
    pub items: usize,
    pub streams: usize,
    pub servers: usize,
    /// Writes a second in the busy phase.
    pub rate: f64,
    pub reconcile_every_s: f64,
    pub reconcile_ceiling_s: f64,
    pub prices_usd_per_1000: BTreeMap<String, f64>,
    pub open: Open,
    pub idle: Idle,
    pub busy: Busy,
    pub per_server: Vec<Server>,
    pub restart: Restart,
    pub stale: Stale,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Open {
    /// Streams on Mine.
    pub mine: usize,
}

/// The idle phase, all servers; what the reconcile cadence expects in it, and at its ceiling.
#[derive(Debug, Clone, Deserialize)]
pub struct Idle {
    pub seconds: f64,
    pub per_s: BTreeMap<String, f64>,
    pub usd_per_month: f64,
    pub model_reconciles_per_workspace: usize,
    pub model_list_per_s: f64,
    pub ceiling_list_per_s: f64,
    pub ceiling_usd_per_month: f64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Busy {
    pub seconds: f64,
    pub writes: usize,
    pub per_s: BTreeMap<String, f64>,
    pub usd_per_month: f64,
    pub latency_ms_p50: Option<f64>,
    pub latency_ms_p95: Option<f64>,
    /// One per registration and other server with a viewer that shows it.
    pub latency_samples: usize,
    /// Of those, never seen there.
    pub missed: usize,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Server {
    pub streams: usize,
    pub watched: usize,
    /// After the seeding, before any stream.
    pub rss_mb_base: f64,
    /// The most of the samples in the idle and busy phases.
    pub rss_mb_max: f64,
    pub cpu_pct_idle: f64,
    pub cpu_pct_busy: f64,
    pub idle_per_s: BTreeMap<String, f64>,
    pub busy_per_s: BTreeMap<String, f64>,
    pub idle_usd_per_month: f64,
    pub busy_usd_per_month: f64,
}

/// The restarted server's store requests from its start until they stopped.
#[derive(Debug, Clone, Deserialize)]
pub struct Restart {
    pub server: usize,
    pub streams: usize,
    pub watched: usize,
    pub start_to_ready_s: f64,
    pub start_to_settled_s: f64,
    pub requests: BTreeMap<String, u64>,
    pub usd: f64,
    /// Of `requests`, those made by the time every stream had its first page.
    pub requests_to_ready: BTreeMap<String, u64>,
    pub others_requests: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Stale {
    pub waited_s: f64,
    pub viewers: usize,
    pub stale: usize,
}

const RSS_MB: f64 = 300.0;
const IDLE_CPU_PCT: f64 = 5.0;
const P95_MS: f64 = 250.0;
/// The projection: this many workspaces on this many servers.
const TO_WORKSPACES: f64 = 10_000.0;
const TO_SERVERS: f64 = 10.0;
const MONTH_S: f64 = 30.0 * 24.0 * 3600.0;

fn per(rates: &BTreeMap<String, f64>, op: &str) -> f64 {
    rates.get(op).copied().unwrap_or(0.0)
}

/// The largest of a figure over the servers.
fn worst(v: &Results, f: impl Fn(&Server) -> f64) -> f64 {
    v.per_server.iter().map(f).fold(0.0, f64::max)
}

fn requests(r: &BTreeMap<String, u64>) -> String {
    let shown: Vec<String> = r
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(op, n)| format!("{} {}", thousands(*n), op.to_uppercase()))
        .collect();
    if shown.is_empty() {
        "none".into()
    } else {
        shown.join(", ")
    }
}

fn targets() -> [String; 4] {
    [
        format!("RSS under {RSS_MB} MB a server"),
        format!("idle CPU under {IDLE_CPU_PCT} % of a core a server"),
        format!("registration to card across servers: p95 under {P95_MS} ms"),
        "nothing stale after one reconcile".into(),
    ]
}

pub fn section(out: &mut String, loaded: &Loaded<Results>, verdicts: &mut Vec<Verdict>) {
    let _ = writeln!(out, "## 8. A thousand workspaces per server\n");
    let v = match loaded {
        Loaded::Absent => {
            let _ = writeln!(
                out,
                "Not run: run `make bench-scale` (`make bench` does not).\n"
            );
            for t in targets() {
                verdicts.push(Verdict::not_run("8", t, "run `make bench-scale`".into()));
            }
            return;
        }
        Loaded::Unreadable(e) => {
            let _ = writeln!(
                out,
                "Not run (`target/bench/scale.json` does not parse: {e}): run `make bench-scale`.\n"
            );
            for t in targets() {
                verdicts.push(Verdict::not_run("8", t, "scale.json does not parse".into()));
            }
            return;
        }
        Loaded::Read(v) => v,
    };
    let _ = writeln!(
        out,
        "`scripts/bench_scale.py` (`make bench-scale`, measured at {} UTC): {} `pickup serve` (release) on one file store and one Redis on loopback; {} workspaces of {} items; {} live streams ({} on Mine, half of those owning the items) spread over the workspaces and the servers. {} s idle, then {} s with {} writes a second (a registration and an update by turns, random workspaces, the servers in turn), then server {} restarted. Per server: RSS from `/proc` (after the seeding, and the most of samples every 5 s while idle and busy), CPU in % of one core over each phase, store requests from its `/metrics`, and a month of them at S3's prices.\n",
        super::when(&v.measured_at),
        v.servers,
        thousands(v.workspaces as u64),
        v.items,
        thousands(v.streams as u64),
        thousands(v.open.mine as u64),
        v.idle.seconds,
        v.busy.seconds,
        v.rate,
        v.restart.server,
    );
    servers_table(out, v);
    let _ = writeln!(
        out,
        "The idle phase began as the streams opened, every reconcile period at its base ({} s), each quiet one doubling the next up to {} s: the cadence expects {} reconciles a workspace in it, {} LIST/s in all, and {} LIST/s were measured. Once every period is at the ceiling, {} workspaces list {} LIST/s, ${:.2} a month.\n",
        v.reconcile_every_s,
        v.reconcile_ceiling_s,
        v.idle.model_reconciles_per_workspace,
        rate(v.idle.model_list_per_s),
        rate(per(&v.idle.per_s, "list")),
        thousands(v.workspaces as u64),
        rate(v.idle.ceiling_list_per_s),
        v.idle.ceiling_usd_per_month,
    );
    let r = &v.restart;
    let _ = writeln!(
        out,
        "Restart: server {} stopped; its {} streams reconnected to a new server on the same store and bus, every one on its first page {} s after its start. The new server's store requests until they stopped ({} s after its start, {} watched workspaces): {}, **${:.4}** at S3's prices ({} of them by the first pages); the other servers meanwhile: {}.\n",
        r.server,
        thousands(r.streams as u64),
        r.start_to_ready_s,
        r.start_to_settled_s,
        thousands(r.watched as u64),
        requests(&r.requests),
        r.usd,
        requests(&r.requests_to_ready),
        requests(&r.others_requests),
    );
    projection(out, v);
    for (target, measured, met) in judged(v) {
        record(
            out,
            verdicts,
            Verdict {
                section: "8",
                target,
                measured,
                met,
            },
        );
    }
    out.push('\n');
}

/// Per server, and all of them: streams, RSS, CPU, store requests a second and a month of them.
fn servers_table(out: &mut String, v: &Results) {
    let _ = writeln!(
        out,
        "| server | streams | watched | RSS MB (start / most) | CPU idle | CPU busy | idle LIST/s | idle GET/s | idle PUT/s | busy LIST/s | busy GET/s | busy PUT/s | a month idle | a month busy |"
    );
    let _ = writeln!(
        out,
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for (i, s) in v.per_server.iter().enumerate() {
        let _ = writeln!(
            out,
            "| {i} | {} | {} | {:.0} / {:.0} | {:.1} % | {:.1} % | {} | {} | {} | {} | {} | {} | ${:.2} | ${:.2} |",
            thousands(s.streams as u64),
            thousands(s.watched as u64),
            s.rss_mb_base,
            s.rss_mb_max,
            s.cpu_pct_idle,
            s.cpu_pct_busy,
            rate(per(&s.idle_per_s, "list")),
            rate(per(&s.idle_per_s, "get")),
            rate(per(&s.idle_per_s, "put")),
            rate(per(&s.busy_per_s, "list")),
            rate(per(&s.busy_per_s, "get")),
            rate(per(&s.busy_per_s, "put")),
            s.idle_usd_per_month,
            s.busy_usd_per_month,
        );
    }
    let _ = writeln!(
        out,
        "| all | {} | | | | | {} | {} | {} | {} | {} | {} | ${:.2} | ${:.2} |\n",
        thousands(v.streams as u64),
        rate(per(&v.idle.per_s, "list")),
        rate(per(&v.idle.per_s, "get")),
        rate(per(&v.idle.per_s, "put")),
        rate(per(&v.busy.per_s, "list")),
        rate(per(&v.busy.per_s, "get")),
        rate(per(&v.busy.per_s, "put")),
        v.idle.usd_per_month,
        v.busy.usd_per_month,
    );
}

/// 10,000 workspaces on 10 servers, linearly from the measured figures.
fn projection(out: &mut String, v: &Results) {
    let k_ws = TO_WORKSPACES / v.workspaces as f64;
    let k_srv = (TO_WORKSPACES / TO_SERVERS) / (v.workspaces as f64 / v.servers as f64);
    let rss = worst(v, |s| {
        s.rss_mb_base + (s.rss_mb_max - s.rss_mb_base) * k_srv
    });
    let (cpu_idle, cpu_busy) = (
        worst(v, |s| s.cpu_pct_idle) * k_srv,
        worst(v, |s| s.cpu_pct_busy) * k_srv,
    );
    let list_price = v.prices_usd_per_1000.get("list").copied().unwrap_or(0.0) / 1000.0;
    let fixed = TO_WORKSPACES / v.reconcile_every_s * MONTH_S * list_price;
    let _ = writeln!(
        out,
        "**Projected to {} workspaces on {} servers**, linearly from these figures, with as many items, streams and writes per workspace as here ({} writes/s): the store's requests follow workspaces and writes, not servers (one server reconciles each workspace, under the bus's lease), so a month of them is the measured month × {} / {} = ×{:.1}; a server's load follows workspaces per server, k = ({} / {}) / ({} / {}) = {:.2}, so its RSS is its RSS after the seeding + (its most − that) × k, and its CPU the measured × k; a restart's requests follow the workspaces it watched, × k.\n",
        thousands(TO_WORKSPACES as u64),
        TO_SERVERS,
        rate(v.rate * k_ws),
        thousands(TO_WORKSPACES as u64),
        thousands(v.workspaces as u64),
        k_ws,
        thousands(TO_WORKSPACES as u64),
        TO_SERVERS,
        thousands(v.workspaces as u64),
        v.servers,
        k_srv,
    );
    let _ = writeln!(
        out,
        "| {} workspaces, {} servers | projected |",
        thousands(TO_WORKSPACES as u64),
        TO_SERVERS
    );
    let _ = writeln!(out, "|---|---:|");
    let rows = [
        (
            "store, a month idle (this run's idle phase)".to_string(),
            format!("${:.2}", v.idle.usd_per_month * k_ws),
        ),
        (
            "store, a month idle, every period at the ceiling".into(),
            format!("${:.2}", v.idle.ceiling_usd_per_month * k_ws),
        ),
        (
            format!("store, a month busy ({} writes/s)", rate(v.rate * k_ws)),
            format!("${:.2}", v.busy.usd_per_month * k_ws),
        ),
        (
            format!(
                "store, a month of one listing per workspace every {} s (no growing period)",
                v.reconcile_every_s
            ),
            format!("${fixed:.2}"),
        ),
        ("RSS a server (the largest)".into(), format!("{rss:.0} MB")),
        (
            "CPU a server, idle / busy (the largest)".into(),
            format!("{cpu_idle:.1} % / {cpu_busy:.1} % of a core"),
        ),
        (
            "a restart's store requests".into(),
            format!("${:.4}", v.restart.usd * k_srv),
        ),
    ];
    for (what, projected) in rows {
        let _ = writeln!(out, "| {what} | {projected} |");
    }
    out.push('\n');
}

/// Each of [`targets`] with what the run measured of it, and whether that meets it.
fn judged(v: &Results) -> [(String, String, Met); 4] {
    let [t_rss, t_cpu, t_p95, t_stale] = targets();
    let rss = worst(v, |s| s.rss_mb_max);
    let cpu = worst(v, |s| s.cpu_pct_idle);
    let p95 = v.busy.latency_ms_p95.unwrap_or(f64::NAN);
    let b = &v.busy;
    [
        (
            t_rss,
            format!("{rss:.0} MB at most (the largest server, idle and busy)"),
            if rss < RSS_MB {
                Met::Yes
            } else {
                Met::No(format!("{rss:.0} MB ≥ {RSS_MB} MB"))
            },
        ),
        (
            t_cpu,
            format!("{cpu:.1} % (the busiest server, {} s idle)", v.idle.seconds),
            if cpu < IDLE_CPU_PCT {
                Met::Yes
            } else {
                Met::No(format!("{cpu:.1} % ≥ {IDLE_CPU_PCT} %"))
            },
        ),
        (
            t_p95,
            format!(
                "p95 {} ms (median {} ms) over {} registrations × other servers, {} never seen, in {} writes",
                ms(p95),
                ms(b.latency_ms_p50.unwrap_or(f64::NAN)),
                thousands(b.latency_samples as u64),
                b.missed,
                thousands(b.writes as u64),
            ),
            if p95 < P95_MS && b.missed == 0 {
                Met::Yes
            } else {
                Met::No(format!("p95 {} ms, {} never seen", ms(p95), b.missed))
            },
        ),
        (
            t_stale,
            format!(
                "{} of {} streams' pages differ from `GET /recent` {} s after the restart (one `PICKUP_RECONCILE_EVERY` and 5 s)",
                v.stale.stale,
                thousands(v.stale.viewers as u64),
                v.stale.waited_s
            ),
            if v.stale.stale == 0 {
                Met::Yes
            } else {
                Met::No(format!("{} stale", v.stale.stale))
            },
        ),
    ]
}
