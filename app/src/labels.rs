//! Every word the widget shows, replaceable by the host page (`labels` in `mount()` options,
//! `data-pickup-labels` as JSON), English by default. Relative times are not here: the browser's
//! `Intl.RelativeTimeFormat` words them in the viewer's locale (see `relative`).
//!
//! `{title}` and `{titles}` in a label are replaced by the card's title, or the new cards'
//! titles; a label may leave them out.

/// Declares the labels once: the struct, its English defaults, and setting one by name.
macro_rules! labels {
    ($($name:ident = $english:literal,)*) => {
        /// The widget's words. Field names are the keys hosts use.
        #[derive(Clone, Debug, PartialEq)]
        pub struct Labels {
            $(pub $name: String,)*
        }

        impl Default for Labels {
            fn default() -> Self {
                Labels { $($name: $english.to_string(),)* }
            }
        }

        impl Labels {
            /// Every label's key, in the order they are declared (the typings list them).
            pub const KEYS: &'static [&'static str] = &[$(stringify!($name),)*];

            /// Set the label `key`; a key the widget does not know is an error that names it.
            pub fn set(&mut self, key: &str, value: String) -> Result<(), String> {
                match key {
                    $(stringify!($name) => self.$name = value,)*
                    _ => return Err(format!("pickup: there is no label \"{key}\": it is ignored")),
                }
                Ok(())
            }
        }
    };
}

labels! {
    title = "Pick up where you left off",
    mine = "Mine",
    everyone = "Everyone",
    whose_items = "Whose items",
    refresh = "Refresh",
    list = "Recent items",
    loading = "Loading recent items…",
    empty = "Nothing in flight. Runs, uploads and jobs of this workspace will appear here as they start.",
    forbidden = "You are not a member of this workspace, so its items are not shown. Ask one of its members to invite you.",
    unauthenticated = "Your sign-in for this widget is missing or has expired. Reload the page to sign in again.",
    load_failed = "Couldn't load recent items:",
    try_again = "Try again",
    stale = "Couldn't refresh; showing the last cards. Retrying…",
    show_older = "Show older",
    older_failed = "Couldn't load older items.",
    partial = "Some items could not be read just now.",
    new_items = "New: {titles}",
    dismiss = "Dismiss {title}",
    pin = "Pin {title}",
    unpin = "Unpin {title}",
    progress = "Progress of {title}",
    queued = "queued",
    running = "running",
    succeeded = "succeeded",
    failed = "failed",
    cancelled = "cancelled",
    stalled = "stalled",
    unknown = "unknown",
    since_new = "New",
    since_finished = "Finished since you looked",
    one_change = "1 change since you looked",
    changes = "{count} changes since you looked",
    mark_seen = "Mark seen",
    bell_off = "Notify me when my items finish",
    bell_on = "Notifying you when your items finish",
    bell_denied = "Notifications are blocked for this site in your browser's settings",
}

impl Labels {
    /// The badge's words for a card's badge (`Card::badge`).
    pub fn badge(&self, badge: &str) -> &str {
        match badge {
            "queued" => &self.queued,
            "running" => &self.running,
            "succeeded" => &self.succeeded,
            "failed" => &self.failed,
            "cancelled" => &self.cancelled,
            "stalled" => &self.stalled,
            _ => &self.unknown,
        }
    }

    /// Labels from what a host gave: each `(key, value)` sets one; a value that is not text or
    /// a key the widget does not know becomes a warning, and the rest still apply.
    pub fn with(
        mut self,
        given: impl IntoIterator<Item = (String, Option<String>)>,
        warnings: &mut Vec<String>,
    ) -> Self {
        for (key, value) in given {
            let result = match value {
                Some(v) => self.set(&key, v),
                None => Err(format!(
                    "pickup: label \"{key}\" is not text: it is ignored"
                )),
            };
            if let Err(w) = result {
                warnings.push(w);
            }
        }
        self
    }
}

/// `template` with `{title}` (or `{titles}`) replaced.
pub fn fill(template: &str, title: &str) -> String {
    template
        .replace("{titles}", title)
        .replace("{title}", title)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_by_default_and_each_key_replaceable() {
        let mut warnings = Vec::new();
        let l = Labels::default().with(
            [
                ("mine".to_string(), Some("Meine".to_string())),
                (
                    "dismiss".to_string(),
                    Some("{title} ausblenden".to_string()),
                ),
            ],
            &mut warnings,
        );
        assert_eq!(l.mine, "Meine");
        assert_eq!(l.everyone, "Everyone");
        assert_eq!(fill(&l.dismiss, "Lauf"), "Lauf ausblenden");
        assert!(warnings.is_empty());
    }

    #[test]
    fn unknown_keys_and_non_text_values_are_warnings_not_failures() {
        let mut warnings = Vec::new();
        let l = Labels::default().with(
            [
                ("mien".to_string(), Some("x".to_string())),
                ("refresh".to_string(), None),
                ("title".to_string(), Some("Weiter".to_string())),
            ],
            &mut warnings,
        );
        assert_eq!(l.title, "Weiter");
        assert_eq!(l.refresh, "Refresh");
        assert_eq!(
            warnings,
            [
                "pickup: there is no label \"mien\": it is ignored",
                "pickup: label \"refresh\" is not text: it is ignored",
            ]
        );
    }

    #[test]
    fn badges_use_their_labels() {
        let mut l = Labels::default();
        l.set("failed", "fehlgeschlagen".into()).unwrap();
        assert_eq!(l.badge("failed"), "fehlgeschlagen");
        assert_eq!(l.badge("stalled"), "stalled");
        assert_eq!(l.badge("something new"), "unknown");
    }
}
