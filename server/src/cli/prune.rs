//! `pickup prune`: sweep workspaces from the command line.

use super::store::StoreArgs;
use crate::index::Workspace;
use crate::producer::Console;
use anyhow::Context;
use clap::Args;
use std::collections::BTreeSet;

#[derive(Args)]
pub struct PruneArgs {
    #[arg(long, conflicts_with = "all", required_unless_present = "all")]
    pub ws: Option<String>,
    #[arg(long)]
    pub all: bool,
    /// Print what would be deleted and why; delete nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

pub(super) async fn prune(p: PruneArgs, console: &Console) -> anyhow::Result<()> {
    let index = p.store.index()?;
    // A real run moves the old layout's keys first; a dry run lists those moves and then
    // sweeps as if they were done (what the real run's sweep would find).
    let mut moving = BTreeSet::new();
    if p.dry_run {
        let keys = index
            .legacy_keys()
            .await
            .context("listing keys of the old layout")?;
        if !keys.is_empty() {
            console.print(format_args!(
                "would move {} keys of the old layout to ws/{{ws}}/ first",
                keys.len()
            ));
        }
        for (old, key) in keys {
            console.print(format_args!("  would move {old} to {key}"));
            moving.insert(key.ws().clone());
        }
    } else {
        let moved = index
            .move_legacy()
            .await
            .context("moving keys of the old layout")?;
        if moved > 0 {
            console.print(format_args!(
                "moved {moved} keys of the old layout to ws/{{ws}}/"
            ));
        }
    }
    let targets = match &p.ws {
        Some(ws) => vec![Workspace::parse(ws)?],
        None => {
            let mut all: BTreeSet<Workspace> = index
                .workspaces()
                .await
                .context("listing workspaces")?
                .into_iter()
                .collect();
            all.extend(moving);
            all.into_iter().collect()
        }
    };
    let verb = if p.dry_run { "would delete" } else { "deleted" };
    let mut total = 0;
    for ws in targets {
        let sweep = index
            .sweep(&ws, p.dry_run)
            .await
            .with_context(|| format!("sweeping {ws}"))?;
        let counts = if p.dry_run {
            sweep.planned()
        } else {
            sweep.deleted.clone()
        };
        console.print(format_args!(
            "{ws}: listed {}; {verb} {}; {} unreadable (kept)",
            per_kind(&sweep.listed),
            per_kind(&counts),
            sweep.unknown
        ));
        for (key, reason) in &sweep.deletes {
            console.print(format_args!("  {verb} {key}: {reason}"));
        }
        if sweep.moved_looks > 0 {
            let verb = if p.dry_run { "would move" } else { "moved" };
            console.print(format_args!(
                "  {verb} {} looks from ws/{ws}/looked/ to looked/{ws}/ first",
                sweep.moved_looks
            ));
        }
        if sweep.backfilled > 0 {
            let verb = if p.dry_run { "would write" } else { "wrote" };
            console.print(format_args!(
                "  {verb} {} missing owner markers",
                sweep.backfilled
            ));
        }
        total += counts.values().sum::<usize>();
        if sweep.failed > 0 {
            console.print(format_args!(
                "  {} deletes failed; run again later",
                sweep.failed
            ));
        }
        if sweep.held > 0 {
            console.print(format_args!(
                "  {} deletes by age held: this machine's clock disagrees with the store's by more than PICKUP_MAX_SKEW",
                sweep.held
            ));
        }
    }
    console.print(format_args!("{verb} {total} keys"));
    Ok(())
}

/// `3 markers, 3 records, 0 dismissals, 3 owner markers, 1 looks`.
fn per_kind(counts: &std::collections::BTreeMap<crate::index::KeyKind, usize>) -> String {
    use crate::index::KeyKind;
    [
        KeyKind::Marker,
        KeyKind::Record,
        KeyKind::Dismissal,
        KeyKind::OwnerMarker,
        KeyKind::Look,
    ]
    .iter()
    .map(|k| format!("{} {}", counts.get(k).copied().unwrap_or(0), k.plural()))
    .collect::<Vec<_>>()
    .join(", ")
}
