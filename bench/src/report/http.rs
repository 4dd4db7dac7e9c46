//! Section 3: HTTP under load, from target/bench/http.json (written by scripts/bench_http.py).

use super::format::{ms, rate, thousands, times};
use super::verdict::{record, section_not_run, Met, Verdict};
use super::Loaded;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// http.json, as scripts/bench_http.py writes it.
#[derive(Debug, Clone, Deserialize)]
pub struct Results {
    pub markers: u64,
    pub connections: u32,
    pub seconds: u32,
    /// The load generator's command line.
    pub tool: String,
    pub healthz: Endpoint,
    pub recent: Endpoint,
    pub peak_rss_mb: f64,
    /// Store requests a second by kind while `recent` was served, and their month at S3's
    /// prices (absent from an http.json written before they were counted).
    #[serde(default)]
    pub recent_store_per_s: BTreeMap<String, f64>,
    #[serde(default)]
    pub recent_store_usd_per_month: Option<f64>,
}

/// wrk's summary of one endpoint.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct Endpoint {
    pub rps: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    /// Answers that were not 2xx or 3xx: a fast error is not throughput.
    pub non_2xx: u64,
}

const RATIO: f64 = 0.4;
const P99_MS: f64 = 15.0;
const RSS_MB: f64 = 64.0;

fn targets() -> [String; 3] {
    [
        format!("`recent` requests/s ≥ {RATIO}× `/healthz` requests/s"),
        format!("`recent` p99 < {P99_MS} ms"),
        format!("peak RSS of the server < {RSS_MB} MB"),
    ]
}

pub fn section(out: &mut String, loaded: &Loaded<Results>, verdicts: &mut Vec<Verdict>) {
    let _ = writeln!(out, "## 3. HTTP under load\n");
    let v = match loaded.or_why() {
        Ok(v) => v,
        Err(why) => {
            section_not_run(out, verdicts, "3", "http.json", &why, targets());
            return;
        }
    };
    let _ = writeln!(
        out,
        "`pickup serve` on loopback, a workspace of {} markers, {} connections for {} s per endpoint, measured with `{}`.\n",
        thousands(v.markers),
        v.connections,
        v.seconds,
        v.tool
    );
    let _ = writeln!(out, "| endpoint | requests/s | p50 ms | p99 ms | non-2xx |");
    let _ = writeln!(out, "|---|---:|---:|---:|---:|");
    for (name, e) in [("healthz", v.healthz), ("recent", v.recent)] {
        let _ = writeln!(
            out,
            "| `{name}` | {} | {} | {} | {} |",
            rate(e.rps),
            ms(e.p50_ms),
            ms(e.p99_ms),
            thousands(e.non_2xx)
        );
    }
    let _ = writeln!(out, "\nPeak RSS of the server: {:.1} MB.\n", v.peak_rss_mb);
    if let Some(usd) = v.recent_store_usd_per_month {
        let kinds: Vec<String> = v
            .recent_store_per_s
            .iter()
            .map(|(op, n)| format!("{n:.2} {}/s", op.to_uppercase()))
            .collect();
        let _ = writeln!(
            out,
            "While `recent` was served, the store saw {}: the read cache's loads for one workspace read without a pause (docs/CONFIGURATION.md, `PICKUP_READ_CACHE`), ${usd:.2} a month at S3's request prices.\n",
            if kinds.is_empty() { "no request".to_string() } else { kinds.join(", ") }
        );
    }

    for verdict in judged(v) {
        record(out, verdicts, verdict);
    }
    out.push('\n');
}

/// The section's targets, each with what the run measured of it.
fn judged(v: &Results) -> [Verdict; 3] {
    let [t_ratio, t_p99, t_rss] = targets();
    let (h, r) = (v.healthz, v.recent);
    let ratio = r.rps / h.rps;
    let errors = r.non_2xx + h.non_2xx;
    [
        Verdict {
            section: "3",
            target: t_ratio,
            measured: format!("{} vs {} = {:.2}×", rate(r.rps), rate(h.rps), ratio),
            met: if errors > 0 {
                Met::No(format!(
                    "{} answers were not 2xx/3xx: the rate is not all served requests",
                    thousands(errors)
                ))
            } else if ratio >= RATIO {
                Met::Yes
            } else {
                Met::No(format!("{} < {RATIO}×", times(ratio)))
            },
        },
        Verdict {
            section: "3",
            target: t_p99,
            measured: format!("{} ms", ms(r.p99_ms)),
            met: if r.p99_ms < P99_MS {
                Met::Yes
            } else {
                Met::No(format!("{} ms ≥ {P99_MS} ms", ms(r.p99_ms)))
            },
        },
        Verdict {
            section: "3",
            target: t_rss,
            measured: format!("{:.1} MB", v.peak_rss_mb),
            met: if v.peak_rss_mb < RSS_MB {
                Met::Yes
            } else {
                Met::No(format!("{:.1} MB ≥ {RSS_MB} MB", v.peak_rss_mb))
            },
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_bench_http_py_writes() {
        let json = r#"{"markers": 1000, "connections": 50, "seconds": 10,
            "tool": "wrk -t2 -c50 -d10s --latency (same machine)",
            "healthz": {"rps": 90573.1, "p50_ms": 0.495, "p99_ms": 2.22, "non_2xx": 0},
            "recent": {"rps": 40012.2, "p50_ms": 1.84, "p99_ms": 7.35, "non_2xx": 0},
            "peak_rss_mb": 17.7, "ratio_rps": 0.442,
            "recent_store_per_s": {"list": 10.69, "get": 5.3},
            "recent_store_usd_per_month": 141.99}"#;
        let r: Results = serde_json::from_str(json).unwrap();
        assert_eq!(r.markers, 1000);
        assert_eq!(r.recent.non_2xx, 0);
        let mut out = String::new();
        let mut verdicts = Vec::new();
        section(&mut out, &Loaded::Read(r), &mut verdicts);
        assert!(verdicts.iter().all(|v| matches!(v.met, Met::Yes)), "{out}");
        assert!(out.contains("40012 vs 90573 = 0.44×"), "{out}");
        assert!(
            out.contains("the store saw 5.30 GET/s, 10.69 LIST/s:"),
            "{out}"
        );
        assert!(out.contains("$141.99 a month"), "{out}");
    }
}
