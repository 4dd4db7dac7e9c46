//! Section 9: what a live reconcile lists beside its workspace's viewers' looks (issue 47.6),
//! from target/bench/reconcile.json (written by scripts/bench_reconcile.py).

use super::format::thousands;
use super::verdict::{record, section_not_run, Met, Verdict};
use super::Loaded;
use serde::Deserialize;
use std::fmt::Write as _;

/// S3 Standard's LIST price, USD per request.
const LIST_USD: f64 = 0.005 / 1000.0;
const MONTH_S: f64 = 30.0 * 24.0 * 3600.0;

/// reconcile.json, as scripts/bench_reconcile.py writes it.
#[derive(Debug, Clone, Deserialize)]
pub struct Results {
    /// `2026-12-07 01:00:00 UTC`.
    pub measured_at: String,
    pub items: u64,
    pub looks: u64,
    /// A marker, an owner marker and a record per item.
    pub keys_of_items: u64,
    /// `s3 (moto)`, or `file` when no S3 emulator was there.
    pub store: String,
    pub reconciles: f64,
    pub before: Run,
    pub after: Run,
    pub periods_s: Periods,
}

/// One binary's reconciles, per reconcile.
#[derive(Debug, Clone, Deserialize)]
pub struct Run {
    /// Where the numbers come from (before: the commit they were measured at).
    #[serde(default)]
    pub source: Option<String>,
    /// As the store answered them (a proxy in front of S3); absent on a file store.
    #[serde(default)]
    pub store: Option<Count>,
    /// As the server counted them (`/metrics`).
    pub server: Count,
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub struct Count {
    pub list_per_reconcile: f64,
    pub keys_per_reconcile: f64,
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub struct Periods {
    pub base: f64,
    pub ceiling: f64,
}

fn targets() -> [String; 2] {
    [
        "a reconcile lists only its items' keys, never a look (50 items, 1,000 looks)".into(),
        "a reconcile of 50 items beside 1,000 looks is one LIST request".into(),
    ]
}

/// What the store was asked, where it was counted there; else what the server counted.
fn billed(run: &Run, like: &Run) -> Count {
    match (run.store, like.store) {
        (Some(count), Some(_)) => count,
        _ => run.server,
    }
}

/// One workspace's reconciles for a month, one every `period_s`, at S3's LIST price.
fn month_usd(list_per_reconcile: f64, period_s: f64) -> f64 {
    list_per_reconcile * MONTH_S / period_s * LIST_USD
}

pub fn section(out: &mut String, loaded: &Loaded<Results>, verdicts: &mut Vec<Verdict>) {
    let _ = writeln!(out, "## 9. A reconcile beside a workspace's looks\n");
    let r = match loaded.or_why() {
        Ok(r) => r,
        Err(why) => {
            section_not_run(out, verdicts, "9", "reconcile.json", &why, targets());
            return;
        }
    };
    let counted_at = if r.after.store.is_some() {
        "as the store answered them: a proxy in front of it counts each ListObjectsV2 request and its `KeyCount`"
    } else {
        "as the server counts them (`/metrics`)"
    };
    let _ = writeln!(
        out,
        "`scripts/bench_reconcile.py` (under `scripts/emulators.sh run`, measured at {}): one `pickup serve` without a bus on {}, so that its one watcher reconciles every `PICKUP_LIVE_EVERY` (2 s); a workspace of {} items ({} keys) and the looks of {} viewers; one live stream; {:.0} reconciles counted, {counted_at}. \"Before\" is {}. A month is one workspace's reconciles for 30 days, one every {:.0} s (the base period, while facts come) or every {:.0} s (the ceiling, quiet), at S3's $0.005 per 1,000 LIST.\n",
        r.measured_at,
        r.store,
        r.items,
        thousands(r.keys_of_items),
        thousands(r.looks),
        r.reconciles,
        r.before.source.as_deref().unwrap_or("the code before this change"),
        r.periods_s.base,
        r.periods_s.ceiling,
    );
    let _ = writeln!(
        out,
        "| | LIST requests a reconcile | keys listed a reconcile | a month at the base period | a month at the ceiling |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|");
    for (name, run) in [("before", &r.before), ("after", &r.after)] {
        let c = billed(run, &r.after);
        let _ = writeln!(
            out,
            "| {name} | {:.2} | {} | ${:.2} | ${:.3} |",
            c.list_per_reconcile,
            thousands(c.keys_per_reconcile.round() as u64),
            month_usd(c.list_per_reconcile, r.periods_s.base),
            month_usd(c.list_per_reconcile, r.periods_s.ceiling),
        );
    }
    let _ = writeln!(
        out,
        "\nAs the server counted them (`pickup_store_requests_total{{op=\"list\"}}`, `pickup_store_keys_listed_total`): before {:.2} LIST and {} keys a reconcile (it counted a listing once whatever its pages, and the watcher's copy's own keys with the store's), after {:.2} and {}.\n",
        r.before.server.list_per_reconcile,
        thousands(r.before.server.keys_per_reconcile.round() as u64),
        r.after.server.list_per_reconcile,
        thousands(r.after.server.keys_per_reconcile.round() as u64),
    );
    for verdict in judged(r) {
        record(out, verdicts, verdict);
    }
    out.push('\n');
}

fn judged(r: &Results) -> [Verdict; 2] {
    let [t_keys, t_list] = targets();
    let after = billed(&r.after, &r.after);
    let keys = after.keys_per_reconcile;
    let lists = after.list_per_reconcile;
    [
        Verdict {
            section: "9",
            target: t_keys,
            measured: format!(
                "{} keys a reconcile, the items' {}",
                thousands(keys.round() as u64),
                thousands(r.keys_of_items)
            ),
            met: if keys <= r.keys_of_items as f64 {
                Met::Yes
            } else {
                Met::No(format!(
                    "{} keys beyond the items'",
                    thousands((keys - r.keys_of_items as f64).round() as u64)
                ))
            },
        },
        Verdict {
            section: "9",
            target: t_list,
            measured: format!("{lists:.2} LIST requests a reconcile"),
            met: if lists <= 1.0 {
                Met::Yes
            } else {
                Met::No(format!("{lists:.2} a reconcile"))
            },
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_bench_reconcile_py_writes() {
        let json = r#"{"measured_at": "2026-12-07 01:00:00 UTC", "items": 50, "looks": 1000, "keys_of_items": 150, "store": "s3 (moto)",
            "reconciles": 10.0,
            "before": {"source": "8dc5328, measured 2026-12-07 on S3 (moto)",
              "store": {"list_per_reconcile": 2.0, "keys_per_reconcile": 1150.0},
              "server": {"list_per_reconcile": 1.0, "keys_per_reconcile": 1258.0}},
            "after": {"reconciles": 10.0,
              "server": {"list_per_reconcile": 1.0, "keys_per_reconcile": 150.0},
              "store": {"list_per_reconcile": 1.0, "keys_per_reconcile": 150.0}},
            "periods_s": {"base": 30, "ceiling": 600}, "price_list_per_1000": 0.005}"#;
        let r: Results = serde_json::from_str(json).unwrap();
        let mut out = String::new();
        let mut verdicts = Vec::new();
        section(&mut out, &Loaded::Read(r), &mut verdicts);
        assert!(
            out.contains("| before | 2.00 | 1,150 | $0.86 | $0.043 |"),
            "{out}"
        );
        assert!(
            out.contains("| after | 1.00 | 150 | $0.43 | $0.022 |"),
            "{out}"
        );
        assert!(verdicts.iter().all(|v| matches!(v.met, Met::Yes)));
    }
}
