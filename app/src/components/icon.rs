//! The widget's icons: inline SVG, drawn in the button's own colour (`currentColor`, by the
//! stylesheet's `.pickup-icon`) and hidden from assistive technology, so that a button's name is
//! its label alone. A glyph would draw as an empty box where the page's fonts lack it (an emoji
//! on a Linux desktop without an emoji font, "↻" in a font without arrows).

use leptos::prelude::*;

/// The icons' strokes, on a 24 × 24 grid.
pub const DISMISS: &str = "M6 6l12 12M18 6 6 18";
pub const REFRESH: &str = "M20 12a8 8 0 1 1-2.3-5.7M20 4v5h-5";
/// A pushpin: its head, its body and its point.
pub const PIN: &str = "M9 4h6M10 4v6l-3 4h10l-3-4V4M12 14v7";
#[cfg(feature = "csr")]
pub const BELL: &str = "M6 16v-5a6 6 0 0 1 12 0v5l2 2H4zM10 21h4";
/// The bell, struck through: off, or blocked.
#[cfg(feature = "csr")]
pub const BELL_OFF: &str = "M6 16v-5a6 6 0 0 1 12 0v5l2 2H4zM10 21h4M3 3l18 18";

/// An icon of strokes `d` (a path's `d`, which may change).
pub fn icon(d: impl leptos::attr::AttributeValue) -> impl IntoView {
    view! {
        <svg class="pickup-icon" viewBox="0 0 24 24" aria-hidden="true">
            <path d=d></path>
        </svg>
    }
}
