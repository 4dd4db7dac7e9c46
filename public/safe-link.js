// When a card's title is a link: the server's rule for a record's `url` (check_url in
// server/src/index/core/record.rs), applied again because a renderer must not trust the store,
// and parsed by the browser's own URL parser, which is what follows the link. Its twin is
// `safe_href` in app/src/components/card.rs; end2end/tests/safe-links.spec.ts holds both to it.
// Bundled into home.js and pickup.js by scripts/site.mjs.

// Rust's `char::is_whitespace` (Unicode White_Space), which `str::trim` trims: not JS's `\s`,
// which differs by U+0085 and U+FEFF.
const WS = "\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const TRIM = new RegExp(`^[${WS}]+|[${WS}]+$`, "g");
// Whitespace, control characters (Cc), the bidirectional controls, and the backslash, which
// the URL parser reads as '/' (`/\evil.example` is `//evil.example`, another host).
const REFUSED = new RegExp(`[${WS}\\p{Cc}\\u202a-\\u202e\\u2066-\\u2069\\u200e\\u200f\\u061c\\\\]`, "u");
const MAX_BYTES = 2048;

/** The link for a stored `url`, or null when the card must show its title as text. */
export function safeHref(url) {
  const u = typeof url === "string" ? url.replace(TRIM, "") : "";
  if (u === "" || new TextEncoder().encode(u).length > MAX_BYTES || REFUSED.test(u)) return null;
  if (u.startsWith("/")) return u.startsWith("//") ? null : u;
  try {
    const parsed = new URL(u);
    return (parsed.protocol === "http:" || parsed.protocol === "https:") && parsed.hostname !== "" ? u : null;
  } catch {
    return null;
  }
}
