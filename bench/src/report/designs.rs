//! Section 1: the designs under the same workload, from target/bench/designs.json
//! ([`crate::designs::Results`]).

use super::format::{rate, thousands, times};
use super::verdict::{record, section_not_run, Met, Verdict};
use super::{plot, Loaded, PLOTS};
use crate::designs::{Design, Results, Run};
use crate::stores::Kind;
use std::fmt::Write as _;
use std::path::Path;

/// The store and the number of producers the speed target is judged at: a cloud store's round
/// trips, many producers.
const TARGET_STORE: Kind = Kind::Latency;
const TARGET_P: usize = 64;
const TARGET_RATIO: f64 = 20.0;

fn target_lost() -> String {
    "the marker index loses 0 registrations, on every store and at every P".into()
}

fn target_speed() -> String {
    format!(
        "at P = {TARGET_P} on {} (a cloud store's round trips, simulated), the marker index registers at least {TARGET_RATIO}× as fast as the compare-and-set list at its best back-off, losing 0",
        TARGET_STORE.name()
    )
}

/// The runs of one section, looked up by what the tables show.
struct Runs<'a> {
    all: &'a [Run],
}

impl<'a> Runs<'a> {
    /// The main run (not a back-off variant) of a design at P on a store.
    fn main(&self, store: Kind, p: usize, d: Design) -> Option<&'a Run> {
        self.all
            .iter()
            .find(|r| r.store == store && r.producers == p && r.design == d && !r.variant)
    }

    fn supported(&self, store: Kind, p: usize, d: Design) -> Option<&'a Run> {
        self.main(store, p, d).filter(|r| r.supported)
    }

    /// Stores in the order they were run.
    fn stores(&self) -> Vec<Kind> {
        let mut s: Vec<Kind> = Vec::new();
        for r in self.all {
            if !s.contains(&r.store) {
                s.push(r.store);
            }
        }
        s
    }

    fn producers(&self) -> Vec<usize> {
        let mut p: Vec<usize> = self.all.iter().map(|r| r.producers).collect();
        p.sort_unstable();
        p.dedup();
        p
    }
}

/// `index ÷ list` of two runs, when both registered something.
fn ratio(index: &Run, list: &Run) -> Option<f64> {
    (list.supported && list.regs_per_s > 0.0).then(|| index.regs_per_s / list.regs_per_s)
}

fn store_cell(store: Kind) -> String {
    if store.is_emulator() {
        format!("{} †", store.name())
    } else {
        store.name().to_string()
    }
}

fn backoff_label(r: &Run) -> String {
    match (r.variant, r.cas_backoff) {
        (true, Some(b)) => format!("{} ({} ms back-off cap)", r.design.label(), b.cap_us / 1000),
        _ => r.design.label().to_string(),
    }
}

/// (rate, lost) cells of one run in the main table.
fn cells(r: Option<&Run>) -> (String, String) {
    let Some(r) = r else {
        return ("—".into(), "—".into());
    };
    if !r.supported {
        return ("not supported".into(), "—".into());
    }
    let mut speed = rate(r.regs_per_s);
    if r.cut_by_deadline {
        speed.push_str(" ⏱");
    }
    let mut lost = format!("{} / {}", thousands(r.lost), thousands(r.live_registered));
    let mut extra = Vec::new();
    if r.errors > 0 {
        extra.push(format!("{} errors", r.errors));
    }
    if r.abandoned > 0 {
        extra.push(format!("{} abandoned", r.abandoned));
    }
    if !extra.is_empty() {
        lost.push_str(&format!(" ({})", extra.join(", ")));
    }
    (speed, lost)
}

pub fn section(
    out: &mut String,
    loaded: &Loaded<Results>,
    verdicts: &mut Vec<Verdict>,
) -> anyhow::Result<()> {
    let _ = writeln!(out, "## 1. The designs, under the same workload\n");
    let v = match loaded.or_why() {
        Ok(v) => v,
        Err(why) => {
            section_not_run(
                out,
                verdicts,
                "1",
                "designs.json",
                &why,
                [target_lost(), target_speed()],
            );
            return Ok(());
        }
    };
    let runs = Runs { all: &v.runs };
    let stores = runs.stores();
    let producers = runs.producers();
    describe(out, v, &runs, &stores);
    main_table(out, &runs, &stores, &producers);
    emulator_note(out, &runs, &stores, v.machine.nproc);
    variants_table(out, &runs);
    every_run(out, v);
    for s in &v.skipped {
        let _ = writeln!(out, "Skipped: **{}** — {}\n", s.store.name(), s.reason);
    }
    record(out, verdicts, verdict_lost(&runs, &stores));
    record(out, verdicts, verdict_speed(v, &runs));

    plot::designs(
        &v.runs,
        &stores,
        &producers,
        &Path::new(PLOTS).join("designs-throughput.svg"),
    )?;
    let _ = writeln!(
        out,
        "\n![Registrations per second by design, store and P (log scale)](docs/bench/designs-throughput.svg)\n"
    );
    Ok(())
}

fn describe(out: &mut String, v: &Results, runs: &Runs, stores: &[Kind]) {
    let w = &v.workload;
    let per_store = |f: &dyn Fn(Kind) -> Option<String>| {
        stores
            .iter()
            .filter_map(|&k| f(k).map(|x| format!("{} {x}", k.name())))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(
        out,
        "P producers register items concurrently ({:.0}% of them already finished, hence dead at once) while {} reader lists and prunes in a loop, on a fresh root per run. Each run is bounded by count (registrations split over the producers: {}) and by time ({}); a run cut by its time bound is marked. Registrations/s = successful registrations ÷ the producers' wall time. *Lost* = live (running) registrations that returned success but are missing from the index or list at the end.\n",
        w.finished_fraction * 100.0,
        w.readers,
        per_store(&|k| w.total_per_run.get(&k).map(|n| thousands(*n as u64))),
        per_store(&|k| w.time_bound_s.get(&k).map(|s| format!("{s} s"))),
    );
    let _ = writeln!(out, "The stores:\n");
    for &k in stores {
        let _ = writeln!(
            out,
            "- **{}**{}: {}.",
            k.name(),
            if k.is_emulator() { " †" } else { "" },
            k.description()
        );
    }
    out.push('\n');
    describe_designs(out, v, runs, stores);
}

/// The three designs, as the runs measured them (the compare-and-set list's back-off per
/// store, and where it is not supported).
fn describe_designs(out: &mut String, v: &Results, runs: &Runs, stores: &[Kind]) {
    let w = &v.workload;
    // The back-off of the stores where the compare-and-set list ran at all.
    let cas_stores: Vec<Kind> = stores
        .iter()
        .copied()
        .filter(|&k| {
            runs.all
                .iter()
                .any(|r| r.store == k && r.design == Design::CasList && r.supported)
        })
        .collect();
    let backoffs = cas_stores
        .iter()
        .filter_map(|k| {
            w.cas_backoff.get(k).map(|b| {
                format!(
                    "{} {} µs doubling up to {} ms",
                    k.name(),
                    b.base_us,
                    b.cap_us / 1000
                )
            })
        })
        .collect::<Vec<_>>()
        .join(", ");
    let unsupported: Vec<&str> = stores
        .iter()
        .filter(|&&k| {
            runs.all
                .iter()
                .any(|r| r.store == k && r.design == Design::CasList && !r.supported)
        })
        .map(|k| k.name())
        .collect();
    let _ = writeln!(out, "- **marker index (Pickup)**: `Index::register` (create-only record, then the empty markers); the reader is `Index::recent` (cap 8) + `Index::apply`.");
    let _ = writeln!(out, "- **naive shared list**: the record, then the list read, prepended to and written back unconditionally; the reader reads the list, resolves the newest entries like `recent`, writes back the list without the dead.");
    let _ = writeln!(
        out,
        "- **compare-and-set list**: the same, done right: the version comes from a real read (no ETag and no version is an error, never a plain write), the first write is create-only, a lost race re-reads and recomputes the whole change (after a full-jitter exponential back-off scaled to the store: {backoffs}), the update is `PutMode::Update` with that read's ETag and version, and the reader deletes the pruned records only after its save won.{}\n",
        if unsupported.is_empty() {
            String::new()
        } else {
            format!(
                " {} no conditional update: {} *not supported*.",
                if unsupported.len() == 1 {
                    format!("The {} store has", unsupported[0])
                } else {
                    format!("The {} stores have", unsupported.join(", "))
                },
                if unsupported.len() == 1 { "that row is" } else { "those rows are" }
            )
        }
    );
}

fn main_table(out: &mut String, runs: &Runs, stores: &[Kind], producers: &[usize]) {
    let _ = writeln!(out, "| store | P | marker index reg/s | lost | naive list reg/s | lost | CAS list reg/s | lost | index ÷ CAS |");
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for &s in stores {
        for &p in producers {
            let (i, n, c) = (
                runs.main(s, p, Design::MarkerIndex),
                runs.main(s, p, Design::NaiveList),
                runs.main(s, p, Design::CasList),
            );
            let r = match (i, c) {
                (Some(i), Some(c)) => ratio(i, c).map(times),
                _ => None,
            };
            let ((ir, il), (nr, nl), (cr, cl)) = (cells(i), cells(n), cells(c));
            let _ = writeln!(
                out,
                "| {} | {p} | {ir} | {il} | {nr} | {nl} | {cr} | {cl} | {} |",
                store_cell(s),
                r.unwrap_or_else(|| "—".into())
            );
        }
    }
    let _ = writeln!(out, "\n⏱ = cut by the run's time bound before every producer finished its count. *lost* = lost / live registrations.\n");
}

/// What the emulators' rows measure, from their own numbers: how the marker index's rate
/// answered more producers.
fn emulator_note(out: &mut String, runs: &Runs, stores: &[Kind], nproc: usize) {
    let producers = runs.producers();
    let (Some(&lo), Some(&hi)) = (producers.iter().find(|&&p| p > 1), producers.last()) else {
        return;
    };
    let mut lines = Vec::new();
    for &s in stores.iter().filter(|k| k.is_emulator()) {
        let (Some(a), Some(b)) = (
            runs.supported(s, lo, Design::MarkerIndex),
            runs.supported(s, hi, Design::MarkerIndex),
        ) else {
            continue;
        };
        if hi <= lo || a.regs_per_s <= 0.0 {
            continue;
        }
        let growth = b.regs_per_s / a.regs_per_s;
        let more = hi as f64 / lo as f64;
        lines.push(format!(
            "on {}, {}× the producers (P = {lo} → {hi}) gave the marker index {} its rate ({}/s → {}/s){}",
            s.name(),
            more,
            times(growth),
            rate(a.regs_per_s),
            rate(b.regs_per_s),
            if growth < more / 2.0 {
                format!(
                    ": producers writing distinct keys wait on the emulator, not on each other, so these rows measure the emulator's share of the {nproc} CPUs"
                )
            } else {
                String::new()
            }
        ));
    }
    if !lines.is_empty() {
        let _ = writeln!(
            out,
            "† An emulator, one process on the benchmark's own {nproc} cores: {}.\n",
            lines.join("; ")
        );
    }
}

fn variants_table(out: &mut String, runs: &Runs) {
    let variants: Vec<&Run> = runs.all.iter().filter(|r| r.variant).collect();
    if variants.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "How much the compare-and-set list depends on its back-off (same run, same workload):\n"
    );
    let _ = writeln!(
        out,
        "| store | P | back-off cap | CAS list reg/s | lost | CAS retries | marker index ÷ CAS |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
    let mut groups: Vec<(Kind, usize)> = variants.iter().map(|r| (r.store, r.producers)).collect();
    groups.dedup();
    for (store, p) in groups {
        let mut rows: Vec<&Run> = runs
            .all
            .iter()
            .filter(|x| x.store == store && x.producers == p && x.design == Design::CasList)
            .collect();
        rows.sort_by_key(|x| x.cas_backoff.map(|b| b.cap_us).unwrap_or(0));
        let index = runs.main(store, p, Design::MarkerIndex);
        for x in rows {
            let _ = writeln!(
                out,
                "| {} | {} | {} ms | {}{} | {} / {} | {} | {} |",
                store_cell(x.store),
                x.producers,
                x.cas_backoff.map(|b| b.cap_us / 1000).unwrap_or(0),
                rate(x.regs_per_s),
                if x.cut_by_deadline { " ⏱" } else { "" },
                thousands(x.lost),
                thousands(x.live_registered),
                thousands(x.cas_retries),
                index
                    .and_then(|i| ratio(i, x))
                    .map(times)
                    .unwrap_or_else(|| "—".into())
            );
        }
    }
    out.push('\n');
}

fn every_run(out: &mut String, v: &Results) {
    let _ = writeln!(
        out,
        "<details><summary>Every run (reads, prunes, compare-and-set retries)</summary>\n"
    );
    let _ = writeln!(
        out,
        "| store | P | design | registered | s | reads | pruned | CAS retries | note |"
    );
    let _ = writeln!(out, "|---|---:|---|---:|---:|---:|---:|---:|---|");
    for r in &v.runs {
        let mut note = r.note.clone();
        if let Some(e) = &r.first_error {
            if !note.is_empty() {
                note.push_str("; ");
            }
            note.push_str(&format!("first error: {}", e.replace('|', "/")));
        }
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.2} | {} | {} | {} | {} |",
            r.store.name(),
            r.producers,
            backoff_label(r),
            thousands(r.registered),
            r.elapsed_s,
            thousands(r.reads),
            thousands(r.pruned),
            thousands(r.cas_retries),
            note
        );
    }
    let _ = writeln!(out, "\n</details>\n");
}

fn verdict_lost(runs: &Runs, stores: &[Kind]) -> Verdict {
    let of = |d: Design| {
        runs.all
            .iter()
            .filter(move |r| r.design == d && r.supported)
    };
    let index: Vec<&Run> = of(Design::MarkerIndex).collect();
    let lost: u64 = index.iter().map(|r| r.lost).sum();
    let live: u64 = index.iter().map(|r| r.live_registered).sum();
    let errors: u64 = index.iter().map(|r| r.errors).sum();
    let lost_of = |d: Design| {
        let (l, n) = of(d).fold((0, 0), |(l, n), r| (l + r.lost, n + r.live_registered));
        format!("{} of {}", thousands(l), thousands(n))
    };
    Verdict {
        section: "1",
        target: target_lost(),
        measured: format!(
            "{} lost of {} live registrations in {} runs ({} store{}){}; for comparison the naive list lost {}, the compare-and-set list {}",
            thousands(lost),
            thousands(live),
            index.len(),
            stores.len(),
            if stores.len() == 1 { "" } else { "s" },
            if errors > 0 {
                format!(", {errors} registrations failed with an error")
            } else {
                String::new()
            },
            lost_of(Design::NaiveList),
            lost_of(Design::CasList),
        ),
        met: if index.is_empty() {
            Met::NotRun("no marker-index run".into())
        } else if lost == 0 && errors == 0 {
            Met::Yes
        } else {
            Met::No(format!("{lost} lost, {errors} errors"))
        },
    }
}

fn verdict_speed(v: &Results, runs: &Runs) -> Verdict {
    // Against the compare-and-set list with whichever back-off served it best in this run.
    let best_cas = runs
        .all
        .iter()
        .filter(|r| {
            r.store == TARGET_STORE
                && r.producers == TARGET_P
                && r.design == Design::CasList
                && r.supported
        })
        .max_by(|a, b| a.regs_per_s.total_cmp(&b.regs_per_s));
    let (index, cas) = match (
        runs.supported(TARGET_STORE, TARGET_P, Design::MarkerIndex),
        best_cas,
    ) {
        (Some(i), Some(c)) => (i, c),
        _ => {
            let why = v
                .skipped
                .iter()
                .find(|s| s.store == TARGET_STORE)
                .map(|s| s.reason.clone())
                .unwrap_or_else(|| {
                    format!(
                        "no run of both designs at P = {TARGET_P} on {}",
                        TARGET_STORE.name()
                    )
                });
            return Verdict::not_run("1", target_speed(), why);
        }
    };
    let r = ratio(index, cas);
    let variants = cas_variants(runs, index, cas);
    let measured = format!(
        "{}/s vs {}/s ({} ms back-off cap, the list's best in this run) = {} (same run), {} of {} live registrations lost by the index{}",
        rate(index.regs_per_s),
        rate(cas.regs_per_s),
        backoff_cap_ms(cas),
        r.map(times).unwrap_or_else(|| "—".into()),
        thousands(index.lost),
        thousands(index.live_registered),
        if variants.is_empty() {
            String::new()
        } else {
            format!("; {}", variants.join("; "))
        }
    );
    let met = match r {
        Some(r) if r >= TARGET_RATIO && index.lost == 0 && index.errors == 0 => Met::Yes,
        Some(r) if r >= TARGET_RATIO => Met::No(format!(
            "the index lost {} and failed {} registrations",
            index.lost, index.errors
        )),
        Some(r) => Met::No(format!(
            "{} < {TARGET_RATIO}×: {}",
            times(r),
            why_slow(v, runs, index, cas)
        )),
        None => Met::No("the compare-and-set list registered nothing".into()),
    };
    Verdict {
        section: "1",
        target: target_speed(),
        measured,
        met,
    }
}

/// The compare-and-set list's cap on its back-off, in ms.
fn backoff_cap_ms(run: &Run) -> u64 {
    run.cas_backoff.map(|b| b.cap_us / 1000).unwrap_or(0)
}

/// The index against the other runs of the compare-and-set list (its other back-off caps).
fn cas_variants(runs: &Runs, index: &Run, cas: &Run) -> Vec<String> {
    runs.all
        .iter()
        .filter(|x| {
            x.store == TARGET_STORE
                && x.producers == TARGET_P
                && x.design == Design::CasList
                && x.supported
                && !std::ptr::eq(*x, cas)
        })
        .filter_map(|x| {
            Some(format!(
                "against the same list with a {} ms back-off cap: {}/s, {}",
                backoff_cap_ms(x),
                rate(x.regs_per_s),
                times(ratio(index, x)?)
            ))
        })
        .collect()
}

/// Where each design stands against what the round trip allows, from the runs' own numbers.
fn why_slow(v: &Results, runs: &Runs, index: &Run, cas: &Run) -> String {
    let rt_ms = v.workload.round_trip_ms.get(&TARGET_STORE).copied();
    let mut parts = Vec::new();
    if let Some(one) = runs.supported(TARGET_STORE, 1, Design::MarkerIndex) {
        parts.push(format!(
            "the marker index ran {} as fast with {TARGET_P} producers as with 1 ({}/s → {}/s)",
            times(index.regs_per_s / one.regs_per_s.max(1e-9)),
            rate(one.regs_per_s),
            rate(index.regs_per_s)
        ));
    }
    if let Some(rt) = rt_ms {
        // The next commit's read reaches the store after this commit's write, and its own
        // write reaches the store a round trip after that: at most one commit per round trip.
        let ceiling = 1e3 / rt;
        parts.push(format!(
            "the compare-and-set list reached {}/s, {:.0}% of the {}/s that one commit per {rt} ms round trip allows, after {} lost races ({:.1} per registration)",
            rate(cas.regs_per_s),
            cas.regs_per_s / ceiling * 100.0,
            rate(ceiling),
            thousands(cas.cas_retries),
            cas.cas_retries as f64 / cas.registered.max(1) as f64
        ));
    }
    parts.join("; ")
}
