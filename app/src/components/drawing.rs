//! A widget's first page drawn on the server, before the wasm has arrived (public/drawing.js asks
//! for it, with the page and the viewer's last look: `contract::Drawing`). It is the widget's own
//! markup, made by the widget's own components, with its English labels and the marks of what
//! changed since the look; the widget replaces it once it has drawn its own page
//! (`Host::end_drawing`). What only the browser knows is left to it: the viewer's words for each
//! time (`data-ago`, `datetime`), and that the buttons answer nothing yet (public/drawing.js).

use super::card::{ms, CardView};
use super::frame::{Frame, PartialNote, ShowOlder, SinceBar};
use super::header::Header;
use crate::contract::{Card, Filter, RecentPage, Since};
use crate::labels::Labels;
use leptos::prelude::*;
use leptos::tachys::view::RenderHtml;
use std::sync::Arc;

/// The element ids' prefix of the page's first widget (`mount` numbers them from 1): the only
/// one a page draws ahead.
const ID_PREFIX: &str = "pickup1";

/// The HTML of the widget showing `page` for `filter` to a viewer who last looked at `looked`
/// (RFC 3339), its times counted back from `now_ms`; `None` when the page has no card, which is
/// not drawn ahead (the widget says so itself).
pub fn drawing(
    page: &RecentPage,
    filter: Filter,
    looked: Option<&str>,
    now_ms: f64,
) -> Option<String> {
    if page.cards.is_empty() {
        return None;
    }
    let owner = Owner::new();
    let html = owner.with(|| {
        let labels = Arc::new(Labels::default());
        // Shown as the widget shows them: no bidirectional controls.
        let cards = page.cards.iter().cloned().map(Card::shown).collect::<Vec<_>>();
        let (more, partial) = (page.more, page.partial);
        let looked = looked.and_then(ms);
        let since = move |c: &crate::contract::Card| looked.and_then(|at| Since::of(c, at, ms));
        let changes = cards.iter().filter(|c| since(c).is_some()).count();
        let card_labels = labels.clone();
        let card = move |card: crate::contract::Card| {
            let id = card.id.clone();
            view! {
                <CardView
                    id=id
                    since=Signal::stored(since(&card))
                    card=Signal::stored(card)
                    now=Signal::stored(now_ms)
                    labels=card_labels.clone()
                    times=None
                    id_prefix=ID_PREFIX.to_string()
                    on_open=|| true
                    on_pin=|_| {}
                    on_dismiss=|| {}
                />
            }
        };
        view! {
            <Frame labels=labels.clone() live=|| "connecting" drawn=true>
                <Header filter=RwSignal::new(filter) labels=labels.clone() on_refresh=|| {}/>
                <SinceBar changes=move || changes labels=labels.clone() on_mark=|_| {}/>
                <div class="pickup-body">
                    <ul class="pickup-list" aria-label=labels.list.clone()>
                        {cards.into_iter().map(card).collect_view()}
                    </ul>
                    {more.then(|| view! { <ShowOlder labels=labels.clone() pending=|| false on_click=|| {}/> })}
                    {partial.then(|| view! { <PartialNote labels=labels.clone()/> })}
                </div>
            </Frame>
        }
        .to_html()
    });
    drop(owner);
    Some(html)
}

#[cfg(test)]
mod tests {
    use super::drawing;
    use crate::contract::{Card, Filter, Owner, RecentPage, Status};

    fn card(id: &str, title: &str, url: Option<&str>) -> Card {
        Card {
            id: id.into(),
            key: id.into(),
            title: title.into(),
            status: Status::Running,
            progress: Some(0.4),
            url: url.map(Into::into),
            owner: Owner {
                sub: "alice".into(),
                name: "Alice".into(),
            },
            created_at: "2026-12-02T10:00:00Z".into(),
            updated_at: "2026-12-02T10:00:00Z".into(),
            ..Card::default()
        }
    }

    #[test]
    fn draws_the_cards_with_the_widget_markup() {
        let page = RecentPage {
            cards: vec![
                card("1_a", "Train <model>", Some("javascript:alert(1)")),
                card("2_b", "Night\u{202E}ly", Some("/runs/2")),
            ],
            more: true,
            partial: false,
            generated_at: "2026-12-02T10:05:00Z".into(),
        };
        let now = 1_796_205_900_000.0; // 2026-12-02T10:05:00Z
        let html = drawing(&page, Filter::Mine, None, now).expect("a page of cards is drawn");
        assert!(
            !html.contains('\u{202E}'),
            "no bidirectional control: {html}"
        );
        assert!(html.contains("data-pickup-drawn"), "{html}");
        assert!(html.contains(r#"data-live="connecting""#), "{html}");
        assert!(
            html.contains("Train &lt;model&gt;"),
            "text is escaped: {html}"
        );
        assert!(
            !html.contains("javascript:"),
            "a link the widget refuses is text: {html}"
        );
        assert!(html.contains(r#"href="/runs/2""#), "{html}");
        assert!(html.contains(r#"data-ago="-5 minute""#), "{html}");
        assert!(html.contains("pickup-more"), "{html}");
        assert!(html.contains(r#"aria-pressed="true""#), "{html}");
        assert!(
            !html.contains("pickup-since"),
            "nothing marked without a look: {html}"
        );
    }

    #[test]
    fn marks_what_changed_since_the_look_as_the_widget_does() {
        let mut done = card("1_a", "Done", None);
        done.status = Status::Succeeded;
        done.finished_at = Some("2026-12-02T10:04:00Z".into());
        let page = RecentPage {
            cards: vec![done, card("2_b", "Older", None)],
            more: false,
            partial: false,
            generated_at: "2026-12-02T10:05:00Z".into(),
        };
        let html = drawing(&page, Filter::All, Some("2026-12-02T10:02:00Z"), 0.0).unwrap();
        assert_eq!(
            html.matches(r#"data-since="finished""#).count(),
            1,
            "{html}"
        );
        assert!(html.contains("pickup-since-bar"), "{html}");
        assert!(html.contains("1 change since you looked"), "{html}");
    }

    #[test]
    fn an_empty_page_is_not_drawn() {
        let page = RecentPage {
            cards: vec![],
            more: false,
            partial: false,
            generated_at: String::new(),
        };
        assert_eq!(drawing(&page, Filter::All, None, 0.0), None);
    }
}
