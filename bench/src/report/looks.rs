//! Section 7: "since you looked" and pins, what a visit costs the store, from
//! target/bench/looks.json (written by scripts/bench_looks.py, which scripts/bench_http.py runs
//! at its end).

use super::format::thousands;
use super::verdict::{record, section_not_run, Met, Verdict};
use super::Loaded;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// looks.json, as scripts/bench_looks.py writes it.
#[derive(Debug, Clone, Deserialize)]
pub struct Results {
    pub viewers: u64,
    pub visits_each: u64,
    pub visits: u64,
    /// What one visit is, in requests to the server.
    pub visit: String,
    /// The store's requests over all the visits, by op (`pickup_store_requests_total`).
    pub requests: BTreeMap<String, u64>,
    pub idle_s: f64,
    /// The store's requests in `idle_s` seconds after the visits, with no request made.
    pub idle_requests: BTreeMap<String, u64>,
    pub priced: Priced,
    /// Each viewer's first page before and after they pinned (absent from older runs).
    #[serde(default)]
    pub pins: Option<Pins>,
}

/// First pages without and with pins, as scripts/bench_looks.py's `pins_part` writes them.
#[derive(Debug, Clone, Deserialize)]
pub struct Pins {
    pub items: u64,
    pub pins_each: u64,
    pub visits: u64,
    pub visit: String,
    pub without: BTreeMap<String, u64>,
    pub with: BTreeMap<String, u64>,
    pub usd_without: f64,
    pub usd_with: f64,
}

impl Pins {
    fn per_visit(&self, counted: &BTreeMap<String, u64>, op: &str) -> f64 {
        per(counted, op, self.visits)
    }

    fn more_lists(&self) -> f64 {
        self.per_visit(&self.with, "list") - self.per_visit(&self.without, "list")
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct Priced {
    pub viewers: u64,
    pub visits_a_day: u64,
    pub days: u64,
    pub usd_by_op: BTreeMap<String, f64>,
    pub usd: f64,
}

fn targets() -> [String; 3] {
    [
        "a visit costs the store at most one write (and one read)".into(),
        "nothing reads a look or a pin on a timer: no store request while no one visits".into(),
        "a first page with pins lists at most once more than one without".into(),
    ]
}

fn per_visit(v: &Results, op: &str) -> f64 {
    per(&v.requests, op, v.visits)
}

/// `op`'s requests in `counted`, per one of `visits`.
fn per(counted: &BTreeMap<String, u64>, op: &str, visits: u64) -> f64 {
    counted.get(op).copied().unwrap_or(0) as f64 / visits.max(1) as f64
}

pub fn section(out: &mut String, loaded: &Loaded<Results>, verdicts: &mut Vec<Verdict>) {
    let _ = writeln!(out, "## 7. Since you looked: a visit's store requests\n");
    let v = match loaded.or_why() {
        Ok(v) => v,
        Err(why) => {
            section_not_run(out, verdicts, "7", "looks.json", &why, targets());
            return;
        }
    };
    let _ = writeln!(
        out,
        "`scripts/bench_looks.py`: one `pickup serve` on a file store, {} viewers × {} visits, a visit being `{}` (the widget reads the viewer's look once, and writes it on \"Mark seen\" or a first visit: every visit here writes, the most it can cost). Store requests are the server's `pickup_store_requests_total`, before and after.\n",
        v.viewers, v.visits_each, v.visit
    );
    let _ = writeln!(out, "| op | requests | per visit | a month, USD |");
    let _ = writeln!(out, "|---|---:|---:|---:|");
    for (op, n) in &v.requests {
        let _ = writeln!(
            out,
            "| `{op}` | {} | {:.2} | {:.2} |",
            thousands(*n),
            per_visit(v, op),
            v.priced.usd_by_op.get(op).copied().unwrap_or(0.0)
        );
    }
    let _ = writeln!(
        out,
        "\nA month ({} viewers × {} visits a day × {} days, at S3's prices: $0.005 per 1,000 PUT, $0.0004 per 1,000 GET): **${:.2}**.\n",
        thousands(v.priced.viewers),
        v.priced.visits_a_day,
        v.priced.days,
        v.priced.usd
    );
    pins_table(out, v.pins.as_ref());
    for verdict in judged(v) {
        record(out, verdicts, verdict);
    }
    out.push('\n');
}

fn pins_table(out: &mut String, pins: Option<&Pins>) {
    let Some(p) = pins else {
        let _ = writeln!(out, "Pins: not measured in this run.\n");
        return;
    };
    let _ = writeln!(
        out,
        "Pins: a visit's first page (`{}`, {} items, cap 8) {} times, before and after each viewer pinned the {} oldest (below the cap: their records are read besides the page's). A first page lists the filter's markers, the viewer's dismissals and the viewer's pins: the pins' listing is made with or without a pin, the one listing pins add to a first page (before pins it listed the other two).\n",
        p.visit,
        p.items,
        thousands(p.visits),
        p.pins_each
    );
    let _ = writeln!(
        out,
        "| first page | LIST per visit | GET per visit | a month, USD |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|");
    for (name, counted, usd) in [
        ("without pins", &p.without, p.usd_without),
        ("with pins", &p.with, p.usd_with),
    ] {
        let _ = writeln!(
            out,
            "| {name} | {:.2} | {:.2} | {usd:.2} |",
            p.per_visit(counted, "list"),
            p.per_visit(counted, "get")
        );
    }
    out.push('\n');
}

fn judged(v: &Results) -> [Verdict; 3] {
    let [t_visit, t_idle, t_pins] = targets();
    let (puts, gets) = (per_visit(v, "put"), per_visit(v, "get"));
    let others: u64 = v
        .requests
        .iter()
        .filter(|(op, _)| !["put", "get"].contains(&op.as_str()))
        .map(|(_, n)| n)
        .sum();
    let idle: u64 = v.idle_requests.values().sum();
    [
        Verdict {
            section: "7",
            target: t_visit,
            measured: format!("{puts:.2} PUT and {gets:.2} GET per visit, {others} other"),
            met: if puts <= 1.0 && gets <= 1.0 && others == 0 {
                Met::Yes
            } else {
                Met::No(format!(
                    "{puts:.2} PUT, {gets:.2} GET, {others} other per visit"
                ))
            },
        },
        Verdict {
            section: "7",
            target: t_idle,
            measured: format!("{idle} in {:.0} s", v.idle_s),
            met: if idle == 0 {
                Met::Yes
            } else {
                Met::No(format!("{idle} requests while idle"))
            },
        },
        match &v.pins {
            None => Verdict {
                section: "7",
                target: t_pins,
                measured: "not measured".into(),
                met: Met::NotRun("looks.json has no pins part".into()),
            },
            Some(p) => {
                let more = p.more_lists();
                Verdict {
                    section: "7",
                    target: t_pins,
                    measured: format!("{more:.2} LIST more per visit with {} pins", p.pins_each),
                    met: if more <= 1.0 {
                        Met::Yes
                    } else {
                        Met::No(format!("{more:.2} more"))
                    },
                }
            }
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_bench_looks_py_writes() {
        let json = r#"{"viewers": 20, "visits_each": 10, "visits": 200,
            "visit": "POST /api/looked, then POST /api/look", "store": "file",
            "requests": {"get": 200, "put": 200}, "per_visit": {"get": 1.0, "put": 1.0},
            "idle_s": 5.0, "idle_requests": {}, "visits_s": 0.927,
            "priced": {"viewers": 10000, "visits_a_day": 20, "days": 30,
              "prices_per_1000": {"list": 0.005, "put": 0.005, "get": 0.0004, "head": 0.0004, "delete": 0.0},
              "usd_by_op": {"get": 2.4, "put": 30.0}, "usd": 32.4},
            "pins": {"items": 20, "pins_each": 3, "visits": 200, "visit": "GET /recent",
              "without": {"list": 400, "get": 1600}, "with": {"list": 600, "get": 2200},
              "without_per_visit": {}, "with_per_visit": {}, "usd_without": 1.0, "usd_with": 1.5}}"#;
        let r: Results = serde_json::from_str(json).unwrap();
        let mut out = String::new();
        let mut verdicts = Vec::new();
        section(&mut out, &Loaded::Read(r), &mut verdicts);
        assert!(out.contains("**$32.40**"), "{out}");
        assert!(out.contains("| with pins | 3.00 | 11.00 | 1.50 |"), "{out}");
        assert!(verdicts.iter().all(|v| matches!(v.met, Met::Yes)));
    }

    #[test]
    fn more_lists_is_the_listings_pins_add_per_visit() {
        let pins = Pins {
            items: 20,
            pins_each: 3,
            visits: 10,
            visit: "GET /recent".into(),
            without: BTreeMap::from([("list".into(), 20)]),
            with: BTreeMap::from([("list".into(), 40)]),
            usd_without: 0.0,
            usd_with: 0.0,
        };
        assert_eq!(pins.more_lists(), 2.0);
    }
}
