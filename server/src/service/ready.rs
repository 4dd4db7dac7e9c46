//! How the server stands, for `/readyz`: whether the store answers, what an operator should
//! know of this server's clock, how live pages are kept up to date.

use super::Pickup;

/// What `/readyz` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readiness {
    /// The store answers. `clock`: a line for operators about this server's clock against the
    /// store's, if anything; `live`: how live pages are kept up to date, as it follows
    /// "ready" (empty without live streams).
    Ready {
        clock: Option<String>,
        live: &'static str,
    },
    /// The store refused: an operator must fix the settings. `refusal` is in words with no
    /// endpoint or path in them (anyone who can reach the server reads it); `detail` is for
    /// the log.
    Refused {
        refusal: &'static str,
        detail: String,
    },
    /// The store does not answer; `detail` is for the log.
    Unanswered { detail: String },
}

impl Pickup {
    /// Whether the store answers (`/readyz`), and what an operator should know about this
    /// server's clock against the store's and its live pages.
    pub async fn ready(&self) -> Readiness {
        match self.index.ready().await {
            Ok(()) => Readiness::Ready {
                clock: self.index.clock_status().await.warning(),
                live: self.live_mode(),
            },
            Err(e) => match e.refusal() {
                Some(refusal) => Readiness::Refused {
                    refusal,
                    detail: e.to_string(),
                },
                None => Readiness::Unanswered {
                    detail: e.to_string(),
                },
            },
        }
    }

    /// How live pages are kept up to date, as `/readyz` says it after "ready".
    fn live_mode(&self) -> &'static str {
        use crate::live::Mode;
        match self.live.as_ref().map(|l| l.mode()) {
            None => "",
            Some(Mode::Polling) => "; live: polling the store (no PICKUP_BUS)",
            Some(Mode::Bus) => "; live: facts on the bus",
            Some(Mode::BusDown) => "; live: polling the store (the bus is down)",
        }
    }
}
