//! The widget's numeric options, from pages we do not control: `data-pickup-cap`,
//! `data-pickup-refresh`, the home page's fragment (`#cap=…&refresh=…`) and `mount()`'s
//! `{cap, refresh}`. One rule for all of them, and nothing a page writes can panic the widget:
//!
//! - absent or empty: the default, silently;
//! - a number from 0 to [`NONSENSE_ABOVE`]: clamped into the option's range (the cap by the
//!   contract's rule, [`Cap::of_number`]; refresh [`MIN_REFRESH_SECS`]..=[`MAX_REFRESH_SECS`]
//!   seconds), with a warning if that changed it;
//! - anything else (not a number, NaN, infinite, negative, beyond [`NONSENSE_ABOVE`]): the
//!   default, with a warning.
//!
//! The browser shell (`mount.rs`) prints the warnings with `console.warn`.

pub use crate::contract::cap::NONSENSE_ABOVE;
use crate::contract::{Cap, DEFAULT_CAP, MAX_CAP, MIN_CAP};
use std::time::Duration;

pub const DEFAULT_REFRESH_SECS: f64 = 15.0;
pub const MIN_REFRESH_SECS: f64 = 1.0;
pub const MAX_REFRESH_SECS: f64 = 86_400.0;

/// What a page gave for one option.
#[derive(Clone, Debug, PartialEq)]
pub enum Given {
    Absent,
    Text(String),
    Number(f64),
    /// A value of another type (`mount()` options are any JavaScript value): its `typeof`.
    Other(String),
}

impl Given {
    /// An attribute's or a fragment parameter's value.
    pub fn text(value: Option<String>) -> Given {
        value.map_or(Given::Absent, Given::Text)
    }
}

/// The options the widget runs with, and what was wrong with what the page gave.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    pub cap: u32,
    pub refresh: Duration,
    pub warnings: Vec<String>,
}

pub fn options(cap: Given, refresh: Given) -> Options {
    let mut warnings = Vec::new();
    let cap = read(
        "cap",
        &cap,
        (MIN_CAP as f64, MAX_CAP as f64),
        DEFAULT_CAP as f64,
        |n| Cap::of_number(n).map(|c| c.get() as f64),
        &mut warnings,
    );
    let refresh = read(
        "refresh",
        &refresh,
        (MIN_REFRESH_SECS, MAX_REFRESH_SECS),
        DEFAULT_REFRESH_SECS,
        |s| {
            (0.0..=NONSENSE_ABOVE)
                .contains(&s)
                .then(|| s.clamp(MIN_REFRESH_SECS, MAX_REFRESH_SECS))
        },
        &mut warnings,
    );
    Options {
        // Both are in range by now: the casts cannot saturate, the Duration cannot panic.
        cap: cap as u32,
        refresh: Duration::from_secs_f64(refresh),
        warnings,
    }
}

/// The option's value from what the page gave: `rule` judges a number (none: no number for
/// this option); `(min, max)` and `default` are for the warnings' words.
fn read(
    name: &str,
    given: &Given,
    (min, max): (f64, f64),
    default: f64,
    rule: fn(f64) -> Option<f64>,
    warnings: &mut Vec<String>,
) -> f64 {
    let (shown, number) = match given {
        Given::Absent => return default,
        Given::Text(t) if t.trim().is_empty() => return default,
        // No `{:?}`: the widget's build formats Debug as nothing (-Zfmt-debug=none).
        Given::Text(t) => (format!("\"{t}\""), number(t.trim())),
        Given::Number(n) => (show(*n), Some(*n)),
        Given::Other(o) => (o.clone(), None),
    };
    match number.and_then(|n| Some((n, rule(n)?))) {
        Some((n, used)) => {
            if used != n {
                let (lo, hi, now) = (show(min), show(max), show(used));
                warnings.push(format!(
                    "pickup: {name} {shown} is outside {lo}..={hi}: using {now}"
                ));
            }
            used
        }
        _ => {
            let (lo, hi, fallback) = (show(min), show(max), show(default));
            warnings.push(format!(
                "pickup: {name} {shown} is not a number from {lo} to {hi}: using the default, {fallback}"
            ));
            default
        }
    }
}

/// A decimal number, as Rust's `str::parse::<f64>` reads it.
#[cfg(not(target_arch = "wasm32"))]
fn number(t: &str) -> Option<f64> {
    t.parse().ok()
}

/// In the widget the browser reads it (`Number()`): Rust's float parser would bring 14 KB of
/// tables and code into the wasm. Only the characters of a decimal number reach `Number()`, which
/// reads those as Rust does (`1.`, `.5`, `+5`, `1e5`); what it would read and Rust would not
/// (`0x10`, `Infinity`, `1_0`) is no number, and `inf` and `NaN`, numbers to Rust, end in the same
/// warning either way.
#[cfg(target_arch = "wasm32")]
fn number(t: &str) -> Option<f64> {
    let decimal = |b: u8| b.is_ascii_digit() || b"+-.eE".contains(&b);
    if t.is_empty() || !t.bytes().all(decimal) {
        return None;
    }
    let n = js_sys::Number::from(wasm_bindgen::JsValue::from_str(t)).value_of();
    (!n.is_nan()).then_some(n)
}

/// A number as the warnings show it: Rust's `Display`, or `{:e}` from 1e15 on. In the widget
/// the browser formats fractions and huge numbers (`Number.prototype.toString`, the same
/// shortest digits), so the wasm carries no float formatting of its own: whole numbers, which
/// are most of what warnings show, are formatted as integers.
fn show(n: f64) -> String {
    if n.is_nan() {
        "NaN".to_string()
    } else if n.is_infinite() {
        if n > 0.0 { "inf" } else { "-inf" }.to_string()
    } else if n.fract() == 0.0 && n.abs() < 1e15 {
        // Exact: |n| < 2^53. `-0` shows as `0`, as Rust's `{}` shows it `-0`: keep the sign.
        let whole = (n as i64).to_string();
        if n == 0.0 && n.is_sign_negative() {
            format!("-{whole}")
        } else {
            whole
        }
    } else {
        show_fraction(n)
    }
}

#[cfg(target_arch = "wasm32")]
fn show_fraction(n: f64) -> String {
    // JavaScript's shortest round-trip digits: `2.5`, `1.5e+21`, and from 1e15 to 1e21 the
    // digits padded with zeros (`150000000000000000000`), which Rust shows as `1.5e20`.
    let js = String::from(
        js_sys::Number::from(n)
            .to_string_with_radix(10)
            .unwrap_or_default(),
    );
    if n.abs() < 1e15 || js.contains('e') {
        return js.replace("e+", "e");
    }
    let (sign, digits) = js.split_at(usize::from(js.starts_with('-')));
    let significant = digits.trim_end_matches('0');
    let (first, rest) = significant.split_at(1);
    let point = if rest.is_empty() { "" } else { "." };
    format!("{sign}{first}{point}{rest}e{}", digits.len() - 1)
}

#[cfg(not(target_arch = "wasm32"))]
fn show_fraction(n: f64) -> String {
    if n.abs() >= 1e15 {
        format!("{n:e}")
    } else {
        n.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cap(g: Given) -> (u32, usize) {
        let o = options(g, Given::Absent);
        (o.cap, o.warnings.len())
    }

    fn refresh(g: Given) -> (Duration, usize) {
        let o = options(Given::Absent, g);
        (o.refresh, o.warnings.len())
    }

    fn text(s: &str) -> Given {
        Given::Text(s.into())
    }

    #[test]
    fn absent_and_empty_are_the_default_silently() {
        let o = options(Given::Absent, text("  "));
        assert_eq!(
            o,
            Options {
                cap: DEFAULT_CAP,
                refresh: Duration::from_secs(15),
                warnings: vec![]
            }
        );
    }

    #[test]
    fn valid_values_are_used_or_clamped() {
        assert_eq!(cap(text("5")), (5, 0));
        assert_eq!(cap(Given::Number(50.0)), (50, 0));
        assert_eq!(cap(text("100")), (MAX_CAP, 1));
        assert_eq!(cap(text("0")), (1, 1));
        assert_eq!(cap(text("2.6")), (3, 1));
        assert_eq!(refresh(text(" 2 ")), (Duration::from_secs(2), 0));
        assert_eq!(refresh(Given::Number(0.1)), (Duration::from_secs(1), 1));
        assert_eq!(refresh(text("1e6")), (Duration::from_secs(86_400), 1));
    }

    #[test]
    fn nonsense_falls_back_to_the_default_with_a_warning() {
        for bad in [
            text("-5"),
            text("abc"),
            text("NaN"),
            text("inf"),
            text("-inf"),
            text("1e308"),
            text("0x10"),
            Given::Number(f64::NAN),
            Given::Number(f64::INFINITY),
            Given::Number(-1.0),
            Given::Number(1e10),
            Given::Number(f64::MAX),
            Given::Other("boolean".into()),
        ] {
            assert_eq!(cap(bad.clone()), (DEFAULT_CAP, 1), "{bad:?}");
            assert_eq!(
                refresh(bad.clone()),
                (Duration::from_secs(15), 1),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn a_warning_says_what_was_given_and_what_is_used() {
        let o = options(text("-5"), Given::Number(1e308));
        assert_eq!(
            o.warnings,
            [
                "pickup: cap \"-5\" is not a number from 1 to 50: using the default, 8",
                "pickup: refresh 1e308 is not a number from 1 to 86400: using the default, 15",
            ]
        );
    }

    #[test]
    fn no_number_panics() {
        let mut n = f64::MIN_POSITIVE;
        while n.is_finite() {
            for v in [n, -n, 1.0 / n] {
                let o = options(Given::Number(v), Given::Number(v));
                assert!((1..=MAX_CAP).contains(&o.cap));
                assert!(o.refresh >= Duration::from_secs(1));
                assert!(o.refresh <= Duration::from_secs(86_400));
            }
            n *= 3.7;
        }
    }
}
