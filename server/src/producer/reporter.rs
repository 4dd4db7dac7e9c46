//! Keeps the server told about one wrapped command: registers its item (again and again, with
//! back-off, while the server does not answer), sends the newest progress at most once per
//! period and a heartbeat once per heartbeat period, and finishes the item when the command
//! ends, trying for a bounded time. It never holds the command up: the command runs in its own
//! process and this runs beside it; every failure is a warning on standard error.

use crate::producer::adopt::adoptable;
use crate::producer::client::{Client, ClientError};
use crate::producer::console::Console;
use crate::producer::outcome::{titled, Outcome};
use crate::producer::progress::Throttle;
use app::contract::{Filter, ItemUpdate, NewItem, Status};
use backon::BackoffBuilder;
use chrono::{DateTime, Utc};
use std::time::Duration;
use tokio::sync::{oneshot, watch};
use tokio::time::Instant;

/// The item a command is: its workspace, and the item as registered (its key, and how it is
/// shown); every write says it again.
#[derive(Debug, Clone)]
pub(crate) struct Item {
    pub ws: String,
    pub new: NewItem,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    pub heartbeat: Duration,
    /// At most one progress update per this.
    pub progress_every: Duration,
    /// How long the wrapper keeps trying to finish the item after the command ended.
    pub finish_timeout: Duration,
}

/// How reporting ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Finish {
    /// The item with this id has its final status.
    Finished(String),
    /// The server did not answer in time, or refused: the item is not finished (or was never
    /// registered). The warning has been printed.
    Unfinished,
}

/// Retry delays: from a quarter of a second (the server may be restarting) up to half a
/// minute between tries while it stays down.
fn delays() -> impl Iterator<Item = Duration> + Send {
    backon::ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(250))
        .with_max_delay(Duration::from_secs(30))
        .without_max_times()
        .with_jitter()
        .build()
}

pub(super) struct Reporter {
    client: Client,
    /// Where its words go.
    console: Console,
    item: Item,
    timing: Timing,
    id: Option<String>,
    /// When a registration that got no answer (or is waiting for one) was first sent (this
    /// machine's clock): the next try looks for the item it may have made before registering
    /// again ([`adoptable`]).
    unanswered_since: Option<DateTime<Utc>>,
    progress: Option<f64>,
    /// The progress the server has, once it has the item.
    sent_progress: Option<Option<f64>>,
    throttle: Throttle,
    /// The last write the server answered: a running item's update is its heartbeat.
    last_write: Option<Instant>,
    /// When to register a new run of the key, carrying the progress, because the server's TTL
    /// deletes a run by its name however it heartbeats: half-way to that, as the server said
    /// (`Pickup-Expires-In`).
    renew_at: Option<Instant>,
    delays: Box<dyn Iterator<Item = Duration> + Send>,
    retry_at: Option<Instant>,
    /// In a run of failures, announced once.
    failing: bool,
    /// Refused for good (a bad token, a removed item): nothing more is sent.
    refused: bool,
}

impl Reporter {
    pub(super) fn new(client: Client, item: Item, timing: Timing, console: Console) -> Self {
        Reporter {
            client,
            console,
            item,
            timing,
            id: None,
            unanswered_since: None,
            progress: None,
            sent_progress: None,
            throttle: Throttle::new(timing.progress_every),
            last_write: None,
            renew_at: None,
            delays: Box::new(delays()),
            retry_at: None,
            failing: false,
            refused: false,
        }
    }

    /// Reports until `ended` says how the command ended, then finishes the item.
    pub(super) async fn run(
        mut self,
        mut progress: watch::Receiver<Option<f64>>,
        mut ended: oneshot::Receiver<Outcome>,
    ) -> Finish {
        let mut progress_open = true;
        let finish_timeout = self.timing.finish_timeout;
        let (outcome, deadline) = loop {
            let wake = self.next_wake(Instant::now());
            tokio::select! {
                biased;
                o = &mut ended => break (o.ok(), Instant::now() + finish_timeout),
                changed = progress.changed(), if progress_open => match changed {
                    Ok(()) => self.progress = *progress.borrow_and_update(),
                    Err(_) => progress_open = false,
                },
                _ = sleep_until(wake), if wake.is_some() => {
                    let step = self.step();
                    tokio::pin!(step);
                    tokio::select! {
                        biased;
                        () = &mut step => {}
                        o = &mut ended => {
                            // The command ended during a request: the request may finish (so a
                            // registration is never cut off half-way by this side), within the
                            // finish timeout, which it counts against.
                            let deadline = Instant::now() + finish_timeout;
                            let _ = tokio::time::timeout_at(deadline, &mut step).await;
                            break (o.ok(), deadline);
                        }
                    }
                }
            }
        };
        self.progress = *progress.borrow();
        match outcome {
            Some(outcome) => self.finish(&outcome, deadline).await,
            // The wrapper is leaving without an outcome (it cannot: it always sends one).
            None => Finish::Unfinished,
        }
    }

    /// When something is due: a retry, the registration, a throttled progress, a heartbeat.
    fn next_wake(&self, now: Instant) -> Option<Instant> {
        if self.refused {
            return None;
        }
        if let Some(at) = self.retry_at {
            return Some(at);
        }
        if self.id.is_none() {
            return Some(now);
        }
        let heartbeat = match self.last_write {
            Some(at) => at + self.timing.heartbeat,
            None => now,
        };
        let progress =
            (self.sent_progress != Some(self.progress)).then(|| self.throttle.next_at(now));
        let due = progress.map_or(heartbeat, |p: Instant| p.min(heartbeat));
        Some(self.renew_at.map_or(due, |r| r.min(due)))
    }

    async fn step(&mut self) {
        self.retry_at = None;
        let progress = self.progress;
        let renew = self.renew_at.is_some_and(|at| at <= Instant::now());
        let result = match self.id.clone() {
            None => self
                .register(Status::Running, self.item.new.title.clone())
                .await
                .map(|(id, fresh)| {
                    self.id = Some(id);
                    fresh
                }),
            Some(old) if renew => {
                match self
                    .register(Status::Running, self.item.new.title.clone())
                    .await
                {
                    Ok((id, fresh)) => {
                        self.id = Some(id);
                        // The new run supersedes the old one anyway; removing it now only
                        // spares readers the step, so a failure here is no matter.
                        let _ = self.client.remove(&self.item.ws, &old).await;
                        Ok(fresh)
                    }
                    Err(e) => Err(e),
                }
            }
            Some(id) => self
                .update(&id, Status::Running, self.item.new.title.clone())
                .await
                .map(|()| true),
        };
        match result {
            Ok(current) => {
                let now = Instant::now();
                if current {
                    self.last_write = Some(now);
                    self.sent_progress = Some(progress);
                    // Only a write that carried a progress starts the throttle's period: the
                    // first progress reported after a registration without one goes at once.
                    if progress.is_some() {
                        self.throttle.sent(now);
                    }
                } else {
                    // An adopted item: the server's copy may be behind, so update at once.
                    self.last_write = None;
                    self.sent_progress = None;
                }
                self.answered();
            }
            Err(e) => self.failed(e, false),
        }
    }

    /// Registers the item, or adopts the one an unanswered registration made; with `true`
    /// when the server has just been told `status` and the current progress.
    async fn register(
        &mut self,
        status: Status,
        title: String,
    ) -> Result<(String, bool), ClientError> {
        if let Some(since) = self.unanswered_since {
            let mine = self.client.recent(&self.item.ws, Filter::Mine).await?;
            let listed = self.client.recent(&self.item.ws, Filter::All).await?;
            if let Some(id) = adoptable(&mine, &listed, &self.item.new.key, since) {
                self.unanswered_since = None;
                // Its time left comes with the update that follows at once.
                self.renew_at = None;
                return Ok((id, false));
            }
        }
        let new = NewItem {
            title,
            status: Some(status),
            progress: self.progress,
            ..self.item.new.clone()
        };
        // Unanswered until an answer says otherwise, so a try that is dropped mid-way (the
        // finish timeout ran out during it) counts as one that may have been applied.
        let first = self.unanswered_since.is_none();
        self.unanswered_since.get_or_insert_with(Utc::now);
        match self.client.register_expiring(&self.item.ws, &new).await {
            Ok((record, expires_in)) => {
                self.unanswered_since = None;
                // A new run: its own time left.
                self.renew_at = None;
                self.renew_within(expires_in);
                Ok((record.id, true))
            }
            Err(e) => {
                if first && !e.may_have_applied() {
                    self.unanswered_since = None;
                }
                Err(e)
            }
        }
    }

    async fn update(&mut self, id: &str, status: Status, title: String) -> Result<(), ClientError> {
        let up = ItemUpdate {
            progress: self.progress,
            ..self.item.new.again(title, status)
        };
        let (_, expires_in) = self
            .client
            .update_expiring(&self.item.ws, id, &up, None)
            .await?;
        self.renew_within(expires_in);
        Ok(())
    }

    /// Renew half-way to the TTL, so a renewal that fails has the other half to be retried in.
    /// Never later than said before: each heartbeat's answer has less time left, and taking
    /// half of it every time would put the renewal off until the TTL.
    fn renew_within(&mut self, expires_in: Option<Duration>) {
        if let Some(left) = expires_in {
            let at = Instant::now() + left / 2;
            self.renew_at = Some(self.renew_at.map_or(at, |was| was.min(at)));
        }
    }

    fn answered(&mut self) {
        if self.failing {
            self.console.say(format_args!(
                "pickup run: {} answers again; item {} is up to date",
                self.client.server(),
                self.id.as_deref().unwrap_or("?")
            ));
        }
        self.failing = false;
        self.delays = Box::new(delays());
    }

    /// Announces the first failure of a run of them (and every refusal), and schedules the
    /// next try. `finishing`: the command has ended.
    fn failed(&mut self, e: ClientError, finishing: bool) {
        let what = match &self.id {
            None => "register the item".to_string(),
            Some(id) => format!("update item {id}"),
        };
        // While the command runs, a refusal that may heal (a 400 from a server whose clock
        // was stepped, a 409 or 412 of a race) is tried again like a fault: only a token the
        // server will not accept (401, 403) or an item someone removed (404) ends reporting.
        let may_heal = !finishing && !matches!(e.status(), Some(401 | 403 | 404));
        if !e.is_transient() && !may_heal {
            self.refused = true;
            let hint = if e.status() == Some(404) {
                " (it was removed)"
            } else {
                ""
            };
            let then = match (finishing, &self.id) {
                (false, _) => "the command runs on, unreported",
                (true, None) => "the run goes unreported",
                (true, Some(_)) => "the item is left as it is",
            };
            self.console
                .say(format_args!("pickup run: cannot {what}{hint}: {e}; {then}"));
            return;
        }
        if !self.failing {
            let then = if finishing {
                format!(
                    "trying again for up to {}",
                    humantime::format_duration(self.timing.finish_timeout)
                )
            } else if e.is_transient() {
                "the command runs on, and the wrapper keeps trying".to_string()
            } else {
                "the command runs on, and the wrapper tries again with back-off, in case the server heals".to_string()
            };
            self.console
                .say(format_args!("pickup run: cannot {what}: {e}; {then}"));
            self.failing = true;
        }
        let delay = self.delays.next().unwrap_or(Duration::from_secs(30));
        self.retry_at = Some(Instant::now() + delay);
    }

    /// Sends the final status, trying until `deadline` (the finish timeout after the command
    /// ended).
    async fn finish(&mut self, outcome: &Outcome, deadline: Instant) -> Finish {
        let title = titled(&self.item.new.title, outcome.note.as_deref());
        loop {
            if self.refused {
                return Finish::Unfinished;
            }
            let attempt = async {
                match self.id.clone() {
                    None => match self.register(outcome.status, title.clone()).await? {
                        (id, true) => Ok(id),
                        // Adopted: it still says running.
                        (id, false) => {
                            self.id = Some(id.clone());
                            self.update(&id, outcome.status, title.clone()).await?;
                            Ok(id)
                        }
                    },
                    Some(id) => {
                        self.update(&id, outcome.status, title.clone()).await?;
                        Ok(id)
                    }
                }
            };
            let result: Result<String, ClientError> =
                match tokio::time::timeout_at(deadline, attempt).await {
                    Ok(r) => r,
                    Err(_) => return self.unfinished("no answer in time"),
                };
            match result {
                Ok(id) => {
                    if self.failing {
                        self.console.say(format_args!(
                            "pickup run: {} answers again; item {id} is {}",
                            self.client.server(),
                            outcome.status.as_str()
                        ));
                    }
                    return Finish::Finished(id);
                }
                Err(e) => {
                    let detail = e.to_string();
                    self.failed(e, true);
                    match self.retry_at {
                        Some(at) if at < deadline => tokio::time::sleep_until(at).await,
                        Some(_) => return self.unfinished(&detail),
                        None => return Finish::Unfinished,
                    }
                }
            }
        }
    }

    fn unfinished(&self, why: &str) -> Finish {
        let state = match &self.id {
            Some(id) => {
                format!("item {id} stays running (shown as stalled once its heartbeat is old)")
            }
            None => "the item was never registered".to_string(),
        };
        self.console.say(format_args!(
            "pickup run: gave up finishing the item after {} ({why}); {state}",
            humantime::format_duration(self.timing.finish_timeout)
        ));
        Finish::Unfinished
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
