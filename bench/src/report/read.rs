//! Section 2: read cost against the floor, from target/bench/read.json
//! ([`crate::read::Results`]).

use super::format::{count, ms, thousands, times};
use super::verdict::{record, section_not_run, Met, Verdict};
use super::{plot, Loaded, PLOTS};
use crate::read::{Results, Row};
use crate::stores::Kind;
use std::fmt::Write as _;
use std::path::Path;

const AT: usize = 1_000;
const RATIO: f64 = 1.2;
const SMALL: usize = 100;
const LARGE: usize = 100_000;
const GROWTH: f64 = 2.0;
/// Keys a store may return per `recent` of 8 cards.
const KEYS: f64 = 100.0;
/// The sizes of the keys-per-`recent` table.
const KEY_SIZES: [usize; 4] = [100, 1_000, 10_000, 100_000];

fn target_ratio() -> String {
    format!(
        "`recent` at {} markers takes at most {RATIO}× the floor",
        thousands(AT as u64)
    )
}

fn target_growth(store: Kind) -> String {
    format!(
        "{} (lists in key order): `recent` at {} markers ≤ {GROWTH}× `recent` at {SMALL}",
        store.name(),
        thousands(LARGE as u64)
    )
}

fn target_keys(store: Kind, cap: usize) -> String {
    format!(
        "{}: keys the store returned per `recent` at the largest size ≤ {GROWTH}× those at {SMALL} markers, and under {KEYS} (cap {cap})",
        store.name()
    )
}

struct Rows<'a> {
    all: &'a [Row],
}

impl<'a> Rows<'a> {
    fn get(&self, store: Kind, markers: usize) -> Option<&'a Row> {
        self.all
            .iter()
            .find(|r| r.store == store && r.markers == markers)
    }

    fn largest(&self, store: Kind) -> Option<&'a Row> {
        self.all
            .iter()
            .filter(|r| r.store == store)
            .max_by_key(|r| r.markers)
    }

    fn stores(&self) -> Vec<Kind> {
        let mut s: Vec<Kind> = Vec::new();
        for r in self.all {
            if !s.contains(&r.store) {
                s.push(r.store);
            }
        }
        s
    }
}

pub fn section(
    out: &mut String,
    loaded: &Loaded<Results>,
    verdicts: &mut Vec<Verdict>,
) -> anyhow::Result<()> {
    let _ = writeln!(out, "## 2. Read cost against the floor\n");
    let v = match loaded.or_why() {
        Ok(v) => v,
        Err(why) => {
            section_not_run(out, verdicts, "2", "read.json", &why, [target_ratio()]);
            return Ok(());
        }
    };
    let rows = Rows { all: &v.rows };
    let stores = rows.stores();
    let _ = writeln!(
        out,
        "`recent` = `Index::recent` (cap {cap}) + `Index::apply`, as the server answers a widget. The *floor* = the store work no reader can avoid: one listing of `markers/{{ws}}/` (on a store that lists in key order, pulled only as far as the first {cap} names; elsewhere the whole prefix, then the {cap} smallest) plus the {cap} newest records read in parallel. The workspace's newest {} markers have records (running items, so the first {cap} resolve live); the older ones are bare markers written straight to the store, all inside the TTL, one per sub-key, so nothing is pruned. Medians of the repetitions shown, `recent` and floor interleaved (alternating which goes first) after 2 warm-ups; *listed* = listing entries one `recent` pulled from the store's stream.\n",
        v.records_seeded,
        cap = v.cap,
    );
    for &k in &stores {
        let _ = writeln!(
            out,
            "- **{}**{}: {}.",
            k.name(),
            if k.is_emulator() { " †" } else { "" },
            k.description()
        );
    }
    out.push('\n');
    main_table(out, &rows);
    for s in &v.skipped {
        let _ = writeln!(
            out,
            "Skipped: **{}**{} — {}\n",
            s.store.name(),
            s.markers
                .map(|m| format!(" at {} markers", thousands(m as u64)))
                .unwrap_or_default(),
            s.reason
        );
    }
    let cpu = cpu_note(v, &rows);
    if let Some(note) = &cpu {
        let _ = writeln!(out, "Above the floor: {note}.\n");
    }
    keys_table(out, v, &rows, &stores, verdicts);

    record(out, verdicts, verdict_ratio(&rows, &stores, cpu.as_deref()));
    for &store in stores.iter().filter(|k| k.lists_in_key_order()) {
        if let Some(verdict) = verdict_growth(&rows, store) {
            record(out, verdicts, verdict);
        }
    }
    plot::read(&v.rows, &stores, &Path::new(PLOTS).join("read-cost.svg"))?;
    let _ = writeln!(
        out,
        "\n![Median read time against the number of markers, `recent` and the floor, per store (log–log)](docs/bench/read-cost.svg)\n"
    );
    Ok(())
}

fn main_table(out: &mut String, rows: &Rows) {
    let has_paged = rows.all.iter().any(|r| r.paged_floor_ms.is_some());
    let _ = writeln!(
        out,
        "| store | markers | reps | `recent` ms | floor ms | `recent` ÷ floor | listed by `recent` |{}",
        if has_paged { " floor with an 8-key page, ms |" } else { "" }
    );
    let _ = writeln!(
        out,
        "|---|---:|---:|---:|---:|---:|---:|{}",
        if has_paged { "---:|" } else { "" }
    );
    for r in rows.all {
        let _ = writeln!(
            out,
            "| {}{} | {} | {} | {} | {} | {:.2} | {} |{}",
            r.store.name(),
            if r.store.is_emulator() { " †" } else { "" },
            thousands(r.markers as u64),
            r.reps,
            ms(r.recent_ms),
            ms(r.floor_ms),
            r.ratio,
            thousands(r.recent_listed),
            if has_paged {
                format!(
                    " {} |",
                    r.paged_floor_ms.map(ms).unwrap_or_else(|| "—".into())
                )
            } else {
                String::new()
            }
        );
    }
    out.push('\n');
}

/// `recent`'s own work above the floor, measured apart from the store, against the floors.
fn cpu_note(v: &Results, rows: &Rows) -> Option<String> {
    let c = v.cpu_us?;
    let own_us = c.judge_8_records_us + c.plan_24_names_us;
    let gap = rows
        .get(Kind::Memory, SMALL)
        .map(|r| (r.recent_ms - r.floor_ms) * 1e3);
    // The same work as a share of each store's floor at 1,000 markers.
    let shares: Vec<String> = rows
        .all
        .iter()
        .filter(|r| r.markers == AT && r.floor_ms > 0.0)
        .map(|r| {
            let share = own_us / (r.floor_ms * 1e3) * 100.0;
            format!(
                "{} of the floor on {}",
                if share >= 1.0 {
                    format!("{share:.1}%")
                } else {
                    format!("{share:.3}%")
                },
                r.store.name()
            )
        })
        .collect();
    Some(format!(
        "`recent`'s own CPU work, measured apart from the store: parsing the {cap} records and building their cards takes {:.0} µs and planning the {}-name resolve budget {:.0} µs{}{}",
        c.judge_8_records_us,
        3 * v.cap,
        c.plan_24_names_us,
        gap.map(|g| format!(" (the gap between `recent` and the floor on memory at {SMALL} markers: {g:.0} µs)"))
            .unwrap_or_default(),
        if shares.is_empty() {
            String::new()
        } else {
            format!(
                "; those {own_us:.0} µs are {} at {} markers",
                shares.join(", "),
                thousands(AT as u64)
            )
        },
        cap = v.cap,
    ))
}

/// Keys the store returned per `recent`, per store and size, and its target.
fn keys_table(
    out: &mut String,
    v: &Results,
    rows: &Rows,
    stores: &[Kind],
    verdicts: &mut Vec<Verdict>,
) {
    if !rows.all.iter().any(|r| r.keys_per_recent.is_some()) {
        return;
    }
    let _ = writeln!(
        out,
        "Keys (object metadata entries) the store returned to `recent`'s listings, per `recent` call — what a listing costs the store, where *listed* above is what `recent` used of it:\n"
    );
    let _ = writeln!(
        out,
        "| store | {} | largest ÷ {SMALL} |",
        KEY_SIZES
            .iter()
            .map(|s| format!("{} markers", thousands(*s as u64)))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let _ = writeln!(out, "|---|{}---:|", "---:|".repeat(KEY_SIZES.len()));
    let with_keys: Vec<Kind> = stores
        .iter()
        .copied()
        .filter(|&s| {
            rows.all
                .iter()
                .any(|r| r.store == s && r.keys_per_recent.is_some())
        })
        .collect();
    for &s in &with_keys {
        let growth = match (
            keys_at(rows, s, SMALL),
            largest_with_keys(rows, s).and_then(|r| r.keys_per_recent),
        ) {
            (Some(a), Some(b)) if a > 0.0 => times(b / a),
            _ => "—".into(),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {growth} |",
            s.name(),
            KEY_SIZES
                .iter()
                .map(|&n| keys_at(rows, s, n).map(count).unwrap_or_else(|| "—".into()))
                .collect::<Vec<_>>()
                .join(" | ")
        );
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "The target is for the cloud stores, which Pickup lists in pages sized to the read (S3, GCS, Azure: here moto and Azurite); the others are shown for comparison: memory's plain listing is read only as far as needed, the file system lists in no order and is read whole.\n"
    );
    for &s in with_keys.iter().filter(|s| s.is_emulator()) {
        record(out, verdicts, keys_verdict(v, rows, s));
    }
    out.push('\n');
}

/// Keys the store returned per `recent` on `s` at `n` markers, if measured.
fn keys_at(rows: &Rows, s: Kind, n: usize) -> Option<f64> {
    rows.get(s, n).and_then(|r| r.keys_per_recent)
}

/// The run of `s` at the most markers that counted its keys.
fn largest_with_keys<'a>(rows: &Rows<'a>, s: Kind) -> Option<&'a Row> {
    rows.all
        .iter()
        .filter(|r| r.store == s && r.keys_per_recent.is_some())
        .max_by_key(|r| r.markers)
}

/// The keys a cloud store returns per `recent`: how they grow with the workspace, and the
/// most at any size.
fn keys_verdict(v: &Results, rows: &Rows, s: Kind) -> Verdict {
    let target = target_keys(s, v.cap);
    let (Some(small), Some(big)) = (keys_at(rows, s, SMALL), largest_with_keys(rows, s)) else {
        return Verdict::not_run("2", target, format!("no run at {SMALL} markers"));
    };
    let large = big.keys_per_recent.unwrap_or(f64::NAN);
    let most = rows
        .all
        .iter()
        .filter(|r| r.store == s)
        .filter_map(|r| r.keys_per_recent.map(|k| (k, r.markers)))
        .fold((0.0f64, 0usize), |m, x| if x.0 > m.0 { x } else { m });
    let growth = large / small.max(f64::MIN_POSITIVE);
    let measured = format!(
        "{} at {} markers vs {} at {SMALL} = {}",
        count(large),
        thousands(big.markers as u64),
        count(small),
        times(growth)
    );
    let mut misses = Vec::new();
    if growth > GROWTH {
        misses.push(format!("{} > {GROWTH}×", times(growth)));
    }
    if most.0 >= KEYS {
        misses.push(format!(
            "{} keys at {} markers",
            count(most.0),
            thousands(most.1 as u64)
        ));
    }
    if !s.lists_in_key_order() && !misses.is_empty() {
        misses.push(format!(
            "{} lists in no order, so `recent` reads the whole listing to find the newest",
            s.name()
        ));
    }
    let met = if misses.is_empty() {
        Met::Yes
    } else {
        Met::No(misses.join("; "))
    };
    Verdict {
        section: "2",
        target,
        measured,
        met,
    }
}

fn verdict_ratio(rows: &Rows, stores: &[Kind], cpu: Option<&str>) -> Verdict {
    let at: Vec<&Row> = stores.iter().filter_map(|&s| rows.get(s, AT)).collect();
    if at.is_empty() {
        return Verdict::not_run(
            "2",
            target_ratio(),
            format!("no run at {} markers", thousands(AT as u64)),
        );
    }
    let over: Vec<String> = at
        .iter()
        .filter(|r| r.ratio > RATIO)
        .map(|r| format!("{} {:.2}×", r.store.name(), r.ratio))
        .collect();
    Verdict {
        section: "2",
        target: target_ratio(),
        measured: at
            .iter()
            .map(|r| {
                format!(
                    "{} {:.2}× ({} vs {} ms)",
                    r.store.name(),
                    r.ratio,
                    ms(r.recent_ms),
                    ms(r.floor_ms)
                )
            })
            .collect::<Vec<_>>()
            .join(", "),
        met: if over.is_empty() {
            Met::Yes
        } else {
            Met::No(format!(
                "{} over {RATIO}×{}",
                over.join(", "),
                cpu.map(|c| format!("; {c}")).unwrap_or_default()
            ))
        },
    }
}

/// `recent`'s growth from 100 markers to the largest size, against the floor's.
fn verdict_growth(rows: &Rows, store: Kind) -> Option<Verdict> {
    let small = rows.get(store, SMALL)?;
    let largest = rows.largest(store)?;
    let growth = largest.recent_ms / small.recent_ms;
    let floor_growth = largest.floor_ms / small.floor_ms;
    let measured = format!(
        "{} ms at {} vs {} ms at {SMALL} = {} (floor: {}; `recent` pulled {} of {} listing entries)",
        ms(largest.recent_ms),
        thousands(largest.markers as u64),
        ms(small.recent_ms),
        times(growth),
        times(floor_growth),
        thousands(largest.recent_listed),
        thousands(largest.markers as u64)
    );
    let why = why_growth(rows, store, small, largest, growth, floor_growth);
    let met = if largest.markers < LARGE {
        if growth <= GROWTH {
            Met::NotRun(format!(
                "measured up to {} markers only (within {GROWTH}× there)",
                thousands(largest.markers as u64)
            ))
        } else {
            Met::No(format!(
                "already {} at {} markers ({} not run): {why}",
                times(growth),
                thousands(largest.markers as u64),
                thousands(LARGE as u64)
            ))
        }
    } else if growth <= GROWTH {
        Met::Yes
    } else {
        Met::No(why)
    };
    Some(Verdict {
        section: "2",
        target: target_growth(store),
        measured,
        met,
    })
}

/// Whose growth it is, from the numbers: `recent`'s own, or the store's listing that the
/// floor pays too.
fn why_growth(
    rows: &Rows,
    store: Kind,
    small: &Row,
    largest: &Row,
    growth: f64,
    floor_growth: f64,
) -> String {
    let stopped = format!(
        "`recent` stops early (it pulled {} entries)",
        thousands(largest.recent_listed)
    );
    if floor_growth < growth * 0.8 {
        return format!(
            "`recent` grows {} where the floor grows {}: the growth is `recent`'s own",
            times(growth),
            times(floor_growth)
        );
    }
    let paged = match (small.paged_floor_ms, largest.paged_floor_ms) {
        (Some(a), Some(b)) => format!(
            "; a floor that asks for an 8-key page grows {} ({} → {} ms)",
            times(b / a),
            ms(a),
            ms(b)
        ),
        _ => String::new(),
    };
    let page = |keys: usize, service: &str| {
        let mut m = format!(
            "object_store's `list` asks the service for its default page (up to {} keys on {service}), so the first page itself grows with the workspace up to {} markers",
            thousands(keys as u64),
            thousands(keys as u64)
        );
        // Growth past a full page is not the page: the service's own listing cost.
        if let Some(at_page) = rows
            .get(store, keys)
            .filter(|r| r.markers < largest.markers)
        {
            let past = largest.floor_ms / at_page.floor_ms;
            if past > 1.5 {
                m.push_str(&format!(
                    ", and the floor still grows {} from {} to {} markers, past a full page: the emulator's listing costs more the more keys it holds",
                    times(past),
                    thousands(keys as u64),
                    thousands(largest.markers as u64)
                ));
            }
        }
        m
    };
    let mechanism = match store {
        Kind::Memory | Kind::Latency => {
            "object_store's `InMemory::list` collects every key under the prefix before it streams the first one, so any listing costs O(markers) on this store".to_string()
        }
        Kind::Azure => page(5_000, "Azure"),
        Kind::S3 => page(1_000, "S3"),
        Kind::File => "the file system lists in no order, so every listing reads the whole directory".to_string(),
    };
    format!(
        "{stopped}, but {mechanism}; the floor grows {} to `recent`'s {}{paged}",
        times(floor_growth),
        times(growth)
    )
}
