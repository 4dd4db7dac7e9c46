//! `<pickup-recent>` as hosts see it: its attributes, its other properties, the events it
//! dispatches, its CSS parts and custom properties. `public/pickup.d.ts` (TypeScript hosts)
//! and `public/custom-elements.json` (editors, Storybook) are generated from these lists by
//! `app/tests/element_types.rs`, and `public/contract.js` hands the attribute names to
//! `pickup-element.js`, so a new option is written here once.

use super::names::DomEvent;

/// An attribute, reflected by a property of the same name (React and Vue set properties).
pub struct Attribute {
    pub name: &'static str,
    /// As TypeScript writes the attribute's value (`'all' | 'mine'`).
    pub ty: &'static str,
    /// As TypeScript writes what a host may set the property to (`number | string`).
    pub set_as: &'static str,
    pub description: &'static str,
}

/// In the order `mount()` takes them; `workspace` is the only one a widget needs.
pub const ATTRIBUTES: [Attribute; 8] = [
    Attribute {
        name: "workspace",
        ty: "string",
        set_as: "string",
        description: "The workspace whose items the widget shows (required).",
    },
    Attribute {
        name: "server",
        ty: "string",
        set_as: "string",
        description: "Pickup's origin; default: this page's.",
    },
    Attribute {
        name: "cap",
        ty: "number",
        set_as: "number | string",
        description: "Cards on the first page, 1..50 (default 8).",
    },
    Attribute {
        name: "refresh",
        ty: "number",
        set_as: "number | string",
        description: "Seconds between polls when the stream is not live, 1..86400 (default 15).",
    },
    Attribute {
        name: "locale",
        ty: "string",
        set_as: "string",
        description: "A BCP 47 tag for relative times; default: the browser's.",
    },
    Attribute {
        name: "filter",
        ty: "'all' | 'mine'",
        set_as: "PickupFilter",
        description: "Whose items are shown first (default all).",
    },
    Attribute {
        name: "notify",
        ty: "boolean",
        set_as: "boolean",
        description:
            "Shows the bell: this browser may notify the viewer when their own items finish.",
    },
    Attribute {
        name: "exclude",
        ty: "string",
        set_as: "string",
        description: "An item's id left out (the page that is that item's own); the widget still shows cap others.",
    },
];

/// What a host gave for `notify` (the element's attribute or property, `data-pickup-notify`,
/// `mount()`'s option), as JavaScript holds it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Notify<'a> {
    /// Absent: no attribute, or `null` or `undefined`.
    Absent,
    Bool(bool),
    Text(&'a str),
    /// Any other value (a number, an object).
    Other,
}

impl Notify<'_> {
    /// The one rule of `notify`, a boolean attribute: present and not "false" shows the bell.
    /// `pickup-element.js` keeps it for the property; app/tests/cases/notify.json holds the
    /// cases both answer alike.
    pub fn is_on(self) -> bool {
        match self {
            Notify::Absent => false,
            Notify::Bool(on) => on,
            Notify::Text(text) => text != "false",
            Notify::Other => true,
        }
    }
}

/// The `refresh` property, read, is the `refresh()` method (it says so in the typings).
pub const REFRESH_PROPERTY: &str =
    "Set as a property it sets the attribute; read, it is the refresh() method.";

/// A property with no attribute (or, for `token`, an attribute the property wins over).
pub struct Property {
    pub name: &'static str,
    pub ty: &'static str,
    pub description: &'static str,
}

pub const PROPERTIES: [Property; 3] = [
    Property {
        name: "token",
        ty: "string",
        description: "The viewer's token; a new one is used at once.",
    },
    Property {
        name: "getToken",
        ty: "(() => string | Promise<string>) | null",
        description:
            "Called for the first token when none is given, ahead of expiry and after a 401.",
    },
    Property {
        name: "labels",
        ty: "PickupLabels | null",
        description: "Every word the widget shows; English by default.",
    },
];

/// What an event's `detail` holds, as its TypeScript interface is named and written.
pub struct Detail {
    pub interface: &'static str,
    pub fields: &'static str,
}

impl DomEvent {
    pub fn detail(self) -> Detail {
        let (interface, fields) = match self {
            DomEvent::Open => (
                "PickupOpenDetail",
                "id: string; key: string; url: string | null",
            ),
            DomEvent::Dismiss => ("PickupDismissDetail", "id: string"),
            DomEvent::Error => ("PickupErrorDetail", "code: string; message: string"),
            DomEvent::Finished => (
                "PickupFinishedDetail",
                "id: string; key: string; title: string; url: string | null; status: string; owner: { sub: string; name: string }; finished_at: string | null",
            ),
        };
        Detail { interface, fields }
    }

    pub fn description(self) -> &'static str {
        match self {
            DomEvent::Open => "The viewer opens a card's link; cancelable.",
            DomEvent::Dismiss => "The viewer dismisses a card.",
            DomEvent::Error => "A fetch, dismissal or token renewal failed.",
            DomEvent::Finished => {
                "One of the viewer's own items reached a final status; once per element and item."
            }
        }
    }
}

/// The `::part()` names (the components' `part` attributes) and what each is.
pub const PARTS: [(&str, &str); 13] = [
    ("card", "One card."),
    ("title", "A card's title (a link or text)."),
    ("badge", "A card's status badge."),
    ("progress", "A card's progress bar."),
    ("header", "The title, toggle and refresh row."),
    ("toggle", "The Mine and Everyone buttons."),
    ("dismiss", "A card's dismiss button."),
    ("pin", "A card's pin button (pressed while pinned)."),
    ("empty", "The message of an empty workspace."),
    ("error", "An error or sign-in message."),
    (
        "since",
        "A card's \"New\" or \"Finished since you looked\" mark.",
    ),
    ("mark-seen", "The header's Mark seen button."),
    ("bell", "The header's notifications button."),
];

/// The custom properties `style/pickup.css` reads, by which a host restyles the widget.
pub const CSS_PROPERTIES: [&str; 16] = [
    "--pickup-font",
    "--pickup-bg",
    "--pickup-surface",
    "--pickup-fg",
    "--pickup-muted",
    "--pickup-border",
    "--pickup-accent",
    "--pickup-focus",
    "--pickup-radius",
    "--pickup-gap",
    "--pickup-queued",
    "--pickup-running",
    "--pickup-stalled",
    "--pickup-succeeded",
    "--pickup-failed",
    "--pickup-cancelled",
];
