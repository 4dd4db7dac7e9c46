//! Section 9: Lighthouse's mobile run of the home page, from target/bench/lighthouse.json
//! (written by scripts/lighthouse.mjs: a first visit, then a returning viewer's loads, against
//! `pickup demo` on loopback).

use super::format::ms;
use super::verdict::{record, section_not_run, Met, Verdict};
use super::Loaded;
use serde::Deserialize;
use std::fmt::Write as _;

/// lighthouse.json, as scripts/lighthouse.mjs writes it.
#[derive(Debug, Clone, Deserialize)]
pub struct Results {
    pub measured_at: String,
    /// The performance score the median must reach (0–100).
    pub target: u32,
    pub medians: Metrics,
    pub each: Vec<Run>,
}

/// Lighthouse's numbers for a load (times in ms, Lighthouse's simulated ones).
#[derive(Debug, Clone, Deserialize)]
pub struct Metrics {
    pub performance: u32,
    pub cls: f64,
    pub lcp_ms: f64,
    pub fcp_ms: f64,
    pub tbt_ms: f64,
    pub si_ms: f64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Run {
    /// "first" or "returning".
    pub visit: String,
    #[serde(flatten)]
    pub metrics: Metrics,
    pub warnings: Vec<String>,
    pub lighthouse: String,
    pub chrome: String,
}

/// Issue 47.2's bound for the Playwright suite's layout shift, held here too.
const MAX_CLS: f64 = 0.02;

fn targets(score: u32) -> [String; 2] {
    [
        format!("Lighthouse mobile performance of the home page ≥ {score} (median of its loads)"),
        format!("Lighthouse's cumulative layout shift of the home page ≤ {MAX_CLS} on every load"),
    ]
}

pub fn section(out: &mut String, loaded: &Loaded<Results>, verdicts: &mut Vec<Verdict>) {
    let _ = writeln!(out, "## 10. Lighthouse: the home page on a phone\n");
    let v = match loaded.or_why() {
        Ok(v) => v,
        Err(why) => {
            section_not_run(out, verdicts, "10", "lighthouse.json", &why, targets(95));
            return;
        }
    };
    let (version, chrome) = v
        .each
        .first()
        .map_or(("?", "?"), |r| (r.lighthouse.as_str(), r.chrome.as_str()));
    let _ = writeln!(
        out,
        "`scripts/lighthouse.mjs` (measured at {} UTC): Lighthouse {version}'s mobile run (a phone's screen, a slow 4G link and a slow CPU, simulated), performance only, of the link `pickup demo` prints, on loopback, in Debian's Chromium {chrome}, headless. The first load is a first visit; the demo's items keep changing, so the others are a returning viewer's, with changes since the last look. Times are Lighthouse's simulated ones.\n",
        super::when(&v.measured_at)
    );
    let _ = writeln!(
        out,
        "| load | performance | CLS | LCP, ms | FCP, ms | TBT, ms | Speed Index, ms |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
    let row = |out: &mut String, name: &str, m: &Metrics| {
        let _ = writeln!(
            out,
            "| {name} | {} | {:.3} | {} | {} | {} | {} |",
            m.performance,
            m.cls,
            ms(m.lcp_ms),
            ms(m.fcp_ms),
            ms(m.tbt_ms),
            ms(m.si_ms)
        );
    };
    for (i, r) in v.each.iter().enumerate() {
        row(out, &format!("{} ({})", i + 1, r.visit), &r.metrics);
    }
    row(out, "**median**", &v.medians);
    let warned: Vec<&String> = v.each.iter().flat_map(|r| &r.warnings).collect();
    if !warned.is_empty() {
        let _ = writeln!(
            out,
            "\nLighthouse warned: {}.",
            warned
                .iter()
                .map(|w| w.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    out.push('\n');
    let [t_score, t_cls] = targets(v.target);
    let worst_cls = v.each.iter().map(|r| r.metrics.cls).fold(0.0, f64::max);
    let score = v.medians.performance;
    record(
        out,
        verdicts,
        Verdict {
            section: "10",
            target: t_score,
            measured: format!("{score} (median of {} loads)", v.each.len()),
            met: if score >= v.target {
                Met::Yes
            } else {
                Met::No(format!("{score} < {}", v.target))
            },
        },
    );
    record(
        out,
        verdicts,
        Verdict {
            section: "10",
            target: t_cls,
            measured: format!("at most {worst_cls:.3}"),
            met: if worst_cls <= MAX_CLS {
                Met::Yes
            } else {
                Met::No(format!("{worst_cls:.3} > {MAX_CLS}"))
            },
        },
    );
    out.push('\n');
}
