//! The marker index's behaviour, written once per behaviour and run on every backend Pickup
//! supports, the way object_store tests its own backends (`src/integration.rs`: one function per
//! behaviour, called from each backend's test module).
//!
//! Each scenario is one `async fn(&Backend)` in the module of its concept (`dedupe.rs`,
//! `faults.rs`, …). [`scenarios!`] turns the list below into one test per scenario and backend,
//! named `{backend}::{scenario}` (`cargo test --test scenarios s3::dedupe`), so a failure names
//! both. The backends ([`common::backends`]): memory and the local file system always;
//! Azure Blob (Azurite) and S3 (moto) when `scripts/emulators.sh run -- …` has started them
//! (`make test-backends`); GCS when `PICKUP_TEST_GCS_URL` names a bucket. No GCS emulator works
//! with object_store, so every `gcs::*` test is `#[ignore]`d with that reason, as is a slow
//! scenario on the backends it is not meant for; run by `--ignored`, such a test fails if its
//! backend is absent. An Azure or S3 test whose emulator is absent (a plain `cargo test`) prints
//! `SKIPPED on backend …` and why; `make test-rust` filters those out (`make test-backends` runs
//! them) and says so.
//!
//! Each index is opened as `PICKUP_STORE` opens it (`Index::open(url, …)`), on a fresh root.
//! Scenarios that need to inject faults or count calls put [`common::fault::FaultStore`] between
//! the index and its store with `Index::through` ([`common::faulty`]): that works on every
//! backend (on the clouds it lists plainly, not in pages, since the layer has no paginated
//! listing). What a scenario inspects or plants in the store, it reads and writes through the
//! raw object store under the index ([`common::raw`]), by the layout DESIGN.md documents,
//! spelled out: a change of layout fails them.
//!
//! A write whose caller goes away, and shutdown's drain of it, are the service's, which is not
//! reachable from here: those are unit tests of the crate (`src/service/tests.rs`).

#[path = "../common/mod.rs"]
mod common;

mod budget;
mod clock_skew;
mod conditional;
mod dedupe;
mod dismissals;
mod expiry;
mod fail_closed;
mod faults;
mod grace;
mod janitor;
mod lifecycle;
mod listing;
mod looks;
mod marker_index;
mod mine;
mod ownership;
mod pins;
mod register;
mod stress;
mod support;
mod unreadable;

/// One `#[tokio::test]` per scenario and backend, in a module per backend. A test that cannot run
/// here is `#[ignore]`d with its reason, so cargo counts it as ignored (`make test` prints how
/// many and why), never as passed: every `gcs::*` test (no emulator), and a scenario marked
/// `memory only` on every other backend. `--ignored` runs them all the same, for real.
macro_rules! scenarios {
    (
        everywhere { $($name:ident => $scenario:path),* $(,)? }
        memory_only($why:literal) { $($slow:ident => $slow_scenario:path),* $(,)? }
    ) => {
        scenarios!(@on memory [$($name => $scenario),*] [$($slow => $slow_scenario),*]
            run: [] [] );
        scenarios!(@on file [$($name => $scenario),*] [$($slow => $slow_scenario),*]
            run: [] [#[ignore = $why]] );
        scenarios!(@on azure [$($name => $scenario),*] [$($slow => $slow_scenario),*]
            run: [] [#[ignore = $why]] );
        scenarios!(@on s3 [$($name => $scenario),*] [$($slow => $slow_scenario),*]
            run: [] [#[ignore = $why]] );
        scenarios!(@on gcs [$($name => $scenario),*] [$($slow => $slow_scenario),*]
            run: [#[ignore = "no GCS emulator works with object_store here (scripts/emulators.sh); with PICKUP_TEST_GCS_URL=gs://… `-- --ignored` runs it"]]
                 [#[ignore = "no GCS emulator works with object_store here (scripts/emulators.sh); with PICKUP_TEST_GCS_URL=gs://… `-- --ignored` runs it"]] );
    };
    (@on $backend:ident [$($name:ident => $scenario:path),*] [$($slow:ident => $slow_scenario:path),*]
        run: $all:tt $slow_all:tt) => {
        mod $backend {
            use super::*;
            $( scenarios!(@test $backend $name $scenario $all); )*
            $( scenarios!(@test $backend $slow $slow_scenario $slow_all); )*
        }
    };
    // An ignored test runs only when asked for (`--ignored`): then its backend must be here,
    // or it fails (a test that did not run must not pass).
    (@test $backend:ident $name:ident $scenario:path [$(#[$ignore:meta])?]) => {
        $(#[$ignore])?
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        #[allow(unreachable_code)] // the `return` after an ignored test's panic
        async fn $name() {
            let test = concat!(stringify!($backend), "::", stringify!($name));
            let Some(b) = crate::common::backends::backend(stringify!($backend), test) else {
                $( panic!("{test} was asked to run, but its backend is not here ({})", stringify!($ignore)); )?
                return;
            };
            let started = std::time::Instant::now();
            $scenario(&b).await;
            println!("{test}: ok ({:.2} s)", started.elapsed().as_secs_f64());
        }
    };
}

scenarios! {
    everywhere {
    // Writes.
    register_and_list => register::register_and_list,
    a_reader_prune_never_drops_a_concurrent_registration => register::reader_prune_race,
    taken_ids_are_a_conflict => register::taken_ids_are_a_conflict,
    // Reads: listing, dedupe, expiry, grace, dismissals, "Mine".
    early_stop_and_list_time => listing::early_stop_and_list_time,
    more_is_false_at_the_last_candidate => listing::more_is_false_at_the_last_candidate,
    dedupe_older_runs => dedupe::older_runs_are_superseded,
    expiry_by_name => expiry::by_name_without_a_resolve,
    finished_long_ago => expiry::finished_long_ago,
    grace_for_a_recordless_marker => grace::recordless_marker,
    dismissals_are_per_viewer => dismissals::per_viewer_and_cleaned_up,
    pins_are_at_the_top_for_their_viewer_alone => pins::at_the_top_for_their_viewer_alone,
    pins_outlast_keep_finished_and_end_with_the_record => pins::outlast_keep_finished_and_end_with_the_record,
    looks_are_per_viewer_and_pruned_with_the_workspace => looks::per_viewer_and_pruned_with_the_workspace,
    a_look_that_cannot_be_read_is_an_error => looks::errors_are_never_none,
    looks_first_kept_with_the_items_are_moved => looks::first_names_are_moved_by_the_janitor,
    mine_and_stalled => mine::filter_and_stalled,
    mine_in_a_busy_workspace => mine::busy_workspace_bounded_cost,
    // Records.
    conditional_update => conditional::update,
    only_the_owner_changes_an_item => ownership::only_the_owner,
    owner_markers_backfilled_and_removed => ownership::owner_markers,
    unreadable_record_is_unknown => unreadable::read_error,
    unreadable_records_do_not_hide_live_items => unreadable::do_not_hide_live_items,
    // Errors and faults (through the fault layer, on every backend).
    listing_errors_fail_closed => fail_closed::listing_errors,
    transient_faults_are_retried => faults::transient_faults_are_retried,
    a_lost_answer_is_settled => faults::lost_answer_is_settled,
    a_fault_past_the_bound_is_an_error => faults::past_the_bound,
    a_failed_delete_is_retried_later => faults::failed_delete_is_retried,
    // Clocks, the janitor, and every key's end.
    a_fast_clock_keeps_a_live_re_run => clock_skew::fast_producer_clock,
    a_fast_reader_clock_deletes_nothing_by_age => clock_skew::fast_reader_clock,
    janitor_sweeps_workspaces => janitor::sweeps_workspaces,
    // Issue 25.
    no_empty_page_while_live_items_exist => budget::no_empty_page_while_live_items_exist,
    }
    // 7,200 registrations, 720 reads and 120 sweeps: 45 s on memory (a debug build), many times
    // that through the file system or an emulator; every rule it exercises is a scenario above.
    memory_only("30 days of churn run on memory only: too slow elsewhere, and each rule it exercises is a scenario on every backend") {
        lifecycle_thirty_days => lifecycle::thirty_days_of_churn,
    }
}
