//! Store requests made on this thread, as `pickup_store_requests_total` counts them: what the
//! live tests measure a watcher's cost in (a current-thread runtime's tasks included).

use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

pub(super) struct Requests(PrometheusHandle);

impl Requests {
    /// The requests of this kind (`list`, `get`, …) counted so far.
    pub(super) fn of(&self, op: &str) -> u64 {
        let series = format!("{}{{op=\"{op}\"}} ", crate::metrics::STORE_REQUESTS);
        self.0
            .render()
            .lines()
            .find_map(|line| line.strip_prefix(&series))
            .map_or(0, |n| n.trim().parse::<f64>().expect("a count") as u64)
    }
}

impl Requests {
    /// Every series of `metric` summed (a counter by its labels).
    pub(super) fn total(&self, metric: &str) -> u64 {
        self.0
            .render()
            .lines()
            .filter(|line| {
                line.strip_prefix(metric)
                    .is_some_and(|rest| rest.starts_with(['{', ' ']))
            })
            .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
            .sum::<f64>() as u64
    }
}

/// Run `run`, counting the store requests made on this thread meanwhile.
pub(super) fn counting<T>(run: impl FnOnce(&Requests) -> T) -> T {
    let recorder = PrometheusBuilder::new().build_recorder();
    let requests = Requests(recorder.handle());
    metrics::with_local_recorder(&recorder, || run(&requests))
}
