//! The widget's state: its signals, in one `Copy` struct, and what they mean together (the
//! cards shown, what the body shows, a page accepted).

use crate::components::live;
use crate::components::stream::Liveness;
use crate::contract::{ApiError, Card, ErrorCode, Filter, RecentPage};
use crate::labels::fill;
use crate::older;
use leptos::prelude::*;

/// What a widget's body shows.
#[derive(Clone, PartialEq)]
pub enum Shown {
    Loading,
    Forbidden,
    Unauthenticated,
    Failed(ApiError),
    Empty,
    List,
}

/// A widget's signals. Each mounted widget has its own; being `Copy`, the state goes into every
/// closure that needs it.
#[derive(Clone, Copy)]
pub struct State {
    pub filter: RwSignal<Filter>,
    /// Bumped to fetch now: by the timer, the refresh button, the page becoming visible.
    pub tick: RwSignal<u64>,
    pub failures: RwSignal<u32>,
    pub last_good: RwSignal<Option<RecentPage>>,
    pub error: RwSignal<Option<ApiError>>,
    pub now: RwSignal<f64>,
    /// Hidden at once when the viewer dismisses, before the server confirms. A list, not a hash
    /// set: a viewer dismisses a few cards, and std's hashing costs the widget kilobytes.
    pub dismissed: RwSignal<Vec<String>>,
    pub announcement: RwSignal<String>,
    /// "Show older": the cards of the older pages asked for, below the first page, which keeps
    /// refreshing (see `older`). `older_more` is `None` until the viewer asks, then the `more`
    /// of the last older page.
    pub older: RwSignal<Vec<Card>>,
    pub older_more: RwSignal<Option<bool>>,
    pub older_failed: RwSignal<bool>,
    pub older_pending: RwSignal<bool>,
    /// What takes focus once the cards are drawn, a selector within the widget (the first
    /// older card after "Show older"); `after_page` is one that waits for the next page (a
    /// pin's button, whose card that page moves).
    pub focus_next: RwSignal<Option<String>>,
    pub after_page: StoredValue<Option<String>>,
    /// Live when the server streams; polling whenever the stream is not up.
    pub liveness: RwSignal<Liveness>,
    /// Pages the stream has given. A fetch answered after a stream page that came while it was
    /// on its way may be older than that page (its snapshot can predate it), so it is dropped:
    /// the stream brings every change after its own page anyway.
    pub stream_pages: StoredValue<u64>,
    /// An item's id the widget leaves out, and the cap it shows besides (its pages are asked
    /// for with one card more).
    pub exclude: StoredValue<Option<(String, u32)>>,
    /// The cards shown: the first page, then the older pages asked for, less the dismissed.
    pub visible: Memo<Vec<Card>>,
    /// Whether the viewer's last look has answered (or failed, or a second page came): the
    /// first page's cards wait for it (`since.rs`).
    pub look_answered: RwSignal<bool>,
    /// What the body shows. Only a change of this redraws it; within the list, each card is
    /// its item's (keyed by id), so a page that arrives changes cards in place.
    pub shown: Memo<Shown>,
}

impl State {
    pub fn new(filter: Filter, exclude: Option<(String, u32)>) -> Self {
        let last_good = RwSignal::new(None::<RecentPage>);
        let error = RwSignal::new(None::<ApiError>);
        let dismissed = RwSignal::new(Vec::<String>::new());
        let older = RwSignal::new(Vec::<Card>::new());
        let look_answered = RwSignal::new(false);
        let visible = Memo::new(move |_| {
            let hidden = dismissed.get();
            let first = last_good.with(|p| p.as_ref().map(|p| p.cards.clone()).unwrap_or_default());
            older.with(|older| {
                first
                    .into_iter()
                    .chain(older.iter().cloned())
                    .filter(|c| !hidden.contains(&c.id))
                    .collect::<Vec<_>>()
            })
        });
        let shown = Memo::new(
            move |_| match (last_good.with(Option::is_some), error.get()) {
                (false, None) => Shown::Loading,
                (false, Some(e)) if e.error == ErrorCode::Forbidden => Shown::Forbidden,
                (_, Some(e)) if e.error == ErrorCode::Unauthenticated => Shown::Unauthenticated,
                (false, Some(e)) => Shown::Failed(e),
                (true, stale) if stale.is_none() && visible.with(Vec::is_empty) => Shown::Empty,
                (true, _) if !look_answered.get() => Shown::Loading,
                (true, _) => Shown::List,
            },
        );
        Self {
            filter: RwSignal::new(filter),
            tick: RwSignal::new(0),
            failures: RwSignal::new(0),
            last_good,
            error,
            now: RwSignal::new(js_sys::Date::now()),
            dismissed,
            announcement: RwSignal::new(String::new()),
            older,
            older_more: RwSignal::new(None),
            older_failed: RwSignal::new(false),
            older_pending: RwSignal::new(false),
            focus_next: RwSignal::new(None),
            after_page: StoredValue::new(None),
            liveness: RwSignal::new(Liveness::Connecting),
            stream_pages: StoredValue::new(0),
            look_answered,
            exclude: StoredValue::new(exclude),
            visible,
            shown,
        }
    }

    /// `page` less the item left out, with the widget's own cap.
    fn excluding(self, page: RecentPage) -> RecentPage {
        match self.exclude.get_value() {
            Some((id, cap)) => page.without(&id, cap),
            None => page,
        }
    }

    /// Fetch now.
    pub fn bump(self) {
        self.tick.try_update(|t| *t += 1);
    }

    /// Back to the first page alone, as before the viewer asked for older ones.
    pub fn reset_older(self) {
        self.older.set(Vec::new());
        self.older_more.set(None);
        self.older_failed.set(false);
    }

    /// The first page's cards, as they are now.
    fn first_cards(self) -> Vec<Card> {
        self.last_good
            .get_untracked()
            .map(|p| p.cards)
            .unwrap_or_default()
    }

    /// A page from a fetch or from the stream; `new_items` words the announcement of its new
    /// cards.
    pub fn accept(self, page: RecentPage, new_items: &str) {
        if self.now.try_set(js_sys::Date::now()).is_some() {
            return; // a page that came after the widget was unmounted
        }
        let page = self.excluding(page);
        if let Some(focus) = self.after_page.try_update_value(Option::take).flatten() {
            self.focus_next.set(Some(focus));
        }
        let fresh = live::new_titles(self.last_good.get_untracked().as_ref(), &page);
        if !fresh.is_empty() {
            self.announcement.set(fill(new_items, &fresh.join(", ")));
        }
        if !page.more {
            // Nothing lies beyond the first page any more.
            self.reset_older();
        } else if self.older_more.get_untracked().is_some() {
            let before = self.first_cards();
            self.older
                .update(|o| *o = older::refreshed(std::mem::take(o), &before, &page.cards));
        }
        // A page after the first shows the cards whether the look has answered or not (it may
        // never): the first waits for it.
        if self.last_good.get_untracked().is_some() {
            self.look_answered.set(true);
        }
        self.last_good.set(Some(page));
        self.error.set(None);
        self.failures.set(0);
    }

    /// An older page "Show older" asked for: its cards go below the others.
    pub fn accept_older(self, page: RecentPage) {
        let page = self.excluding(page);
        let first = self.first_cards();
        // Focus goes to the first of the older cards, once its card is drawn.
        let shown = self.visible.get_untracked();
        let first_new = page
            .cards
            .iter()
            .find(|c| !shown.iter().any(|s| s.id == c.id))
            .map(|c| on_card(&c.id, ":is(a.pickup-card-title, .pickup-dismiss)"));
        self.older
            .update(|o| *o = older::below(&first, std::mem::take(o).into_iter().chain(page.cards)));
        self.older_more.set(Some(page.more));
        self.focus_next.set(first_new);
        self.older_failed.set(false);
    }

    /// Focus goes where `focus_next` says, in `widget`, a frame after it says so: once the list
    /// has been drawn, and its cards moved (a moved element has lost focus).
    pub fn keep_focus(self, widget: web_sys::HtmlElement) {
        Effect::new(move |_| {
            use wasm_bindgen::JsCast;
            let Some(selector) = self.focus_next.get() else {
                return;
            };
            let widget = widget.clone();
            request_animation_frame(move || {
                let target = widget.query_selector(&selector).ok().flatten();
                if let Some(el) = target.and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok()) {
                    let _ = el.focus();
                }
            });
            self.focus_next.set(None);
        });
    }

    /// Where the older pages continue: after the last card of all, hidden ones included.
    pub fn cursor(self) -> Option<String> {
        let last_first = self.last_good.with(|p| {
            p.as_ref()
                .and_then(|p| p.cards.last().map(|c| c.id.clone()))
        });
        self.older
            .with(|o| o.last().map(|c| c.id.clone()))
            .or(last_first)
    }

    /// Whether there are older cards to ask for.
    pub fn more(self) -> bool {
        self.older_more
            .get()
            .unwrap_or_else(|| self.last_good.with(|p| p.as_ref().is_some_and(|p| p.more)))
    }

    /// Whether some of the page's items could not be read.
    pub fn partial(self) -> bool {
        self.last_good
            .with(|p| p.as_ref().is_some_and(|p| p.partial))
    }
}

/// A selector of what `within` (`a.pickup-card-title`, `.pickup-pin`) names in the card of `id`.
pub fn on_card(id: &str, within: &str) -> String {
    format!("li[data-id=\"{id}\"] {within}")
}
