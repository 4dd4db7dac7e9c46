//! The docs name modules, types, methods, files and settings: each must exist, so a page
//! cannot drift from the code unnoticed.
//!
//! - docs/ARCHITECTURE.md: every name in backticks that looks like code. A path
//!   (`index/write.rs`) exists; `Type::method` is a method (or an associated item) in an `impl`
//!   of that type, `Enum::Variant` a variant of that enum, `module::item` an item of that
//!   module: as pairs, not each segment found somewhere alone. Prose in backticks (with
//!   spaces, or a key pattern like `markers/{ws}/{id}`) is not checked.
//! - Every doc page, the README and every comment in the sources: a path into the tree
//!   (`server/src/…`, `app/src/…`, `public/…`, `docs/….md`, …) exists, and a pointer to a page's
//!   section (`README.md, "Embedding"`) names a heading that page has.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn files(dir: &Path, exts: &[&str], out: &mut Vec<(PathBuf, String)>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_dir() {
            if !["node_modules", "target", "dist", "test-results", ".git"].contains(&name) {
                files(&p, exts, out);
            }
        } else if exts.iter().any(|x| name.ends_with(x)) {
            out.push((p.clone(), std::fs::read_to_string(&p).unwrap_or_default()));
        }
    }
}

fn rust_code() -> Vec<(PathBuf, String)> {
    let mut code = Vec::new();
    for dir in ["server/src", "app/src", "bench/src"] {
        files(&root().join(dir), &[".rs"], &mut code);
    }
    code
}

fn ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn word_at(text: &str, at: usize, len: usize) -> bool {
    let before = text[..at].chars().next_back().is_none_or(|c| !ident(c));
    let after = text[at + len..].chars().next().is_none_or(|c| !ident(c));
    before && after
}

/// Whether `text` holds `{keyword}{name}` as a whole word (`fn recent`, `struct Index`).
fn declares(text: &str, keyword: &str, name: &str) -> bool {
    let pat = format!("{keyword}{name}");
    text.match_indices(&pat)
        .any(|(i, _)| word_at(text, i + keyword.len(), name.len()))
}

const ITEM_KINDS: [&str; 8] = [
    "fn ", "struct ", "enum ", "trait ", "mod ", "type ", "const ", "static ",
];

/// `name` is defined in `text`: an item, a field, an enum variant, a macro-made item.
fn defines(text: &str, name: &str) -> bool {
    ITEM_KINDS.iter().any(|k| declares(text, k, name))
        || text.lines().any(|l| {
            let t = l.trim_start();
            let t = t.strip_prefix("pub ").unwrap_or(t);
            // A field, or a variant (`Unknown,`, `Page(RecentPage),`, `Busy {`).
            t.strip_prefix(name).is_some_and(|rest| {
                rest.starts_with(':')
                    || (t.len() < l.len()
                        && name.starts_with(char::is_uppercase)
                        && (rest.is_empty() || rest.starts_with([',', '(', '{', ' '])))
            })
        })
}

/// `name` is defined somewhere: an item, or a module (a file or a folder).
fn defined(name: &str, code: &[(PathBuf, String)]) -> bool {
    code.iter()
        .any(|(path, text)| module_name(path).as_deref() == Some(name) || defines(text, name))
}

/// The module a file is: its stem, or its folder's name for a `mod.rs`.
fn module_name(path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_str()?;
    if stem == "mod" || stem == "lib" {
        Some(path.parent()?.file_name()?.to_str()?.to_string())
    } else {
        Some(stem.to_string())
    }
}

/// The bodies of every `impl … Type` block (inherent or of a trait), brace-matched.
fn impl_blocks<'a>(text: &'a str, ty: &str) -> Vec<&'a str> {
    let mut blocks = Vec::new();
    for (at, _) in text.match_indices("impl") {
        if !word_at(text, at, 4) {
            continue;
        }
        let Some(open) = text[at..].find('{').map(|o| at + o) else {
            continue;
        };
        let head = &text[at..open];
        // `impl<T> Trait for Type<T> where …`: the type is the last path before `where`.
        let head = head.split(" where").next().unwrap_or(head);
        let target = head.rsplit(" for ").next().unwrap_or(head);
        let target = target.trim_start_matches("impl").trim();
        let target = if target.starts_with('<') {
            target.split_once('>').map_or(target, |(_, t)| t).trim()
        } else {
            target
        };
        let base = target.split('<').next().unwrap_or(target).trim();
        if base.rsplit("::").next() != Some(ty) {
            continue;
        }
        let mut depth = 0;
        for (i, c) in text[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        blocks.push(&text[open..open + i]);
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    blocks
}

/// The body of `enum Name { … }`, brace-matched.
fn enum_bodies<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    let pat = format!("enum {name}");
    text.match_indices(&pat)
        .filter(|(i, _)| word_at(text, i + 5, name.len()))
        .filter_map(|(i, _)| {
            let open = i + text[i..].find('{')?;
            let close = open + text[open..].find("\n}")?;
            Some(&text[open..close])
        })
        .collect()
}

/// `A::b` holds as a pair: a method or associated item of type `A`, a variant of enum `A`,
/// or an item of module `a` (a file or folder of that name, or an inline `mod a`).
fn pair_holds(a: &str, b: &str, code: &[(PathBuf, String)]) -> bool {
    let b = b.trim_end_matches("()");
    if a.starts_with(char::is_uppercase) {
        code.iter().any(|(_, text)| {
            impl_blocks(text, a).iter().any(|block| {
                ["fn ", "const ", "type "]
                    .iter()
                    .any(|k| declares(block, k, b))
            }) || enum_bodies(text, a).iter().any(|body| defines(body, b))
        })
    } else {
        code.iter().any(|(path, text)| {
            let in_module = path.components().any(|c| c.as_os_str() == a)
                || module_name(path).as_deref() == Some(a);
            (in_module && (defines(text, b) || module_name(path).as_deref() == Some(b)))
                || (declares(text, "mod ", a) && text.contains(&format!("fn {b}")))
        })
    }
}

/// A path from the root, or the end of one under `server/src` or `app/src` (the page names
/// `write.rs` in the paragraph about `index/`).
fn exists_as_path(token: &str) -> bool {
    let token = token.trim_end_matches('/');
    fn ends_with(dir: &Path, token: &str) -> bool {
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                let p = e.path();
                p.ends_with(token) || (p.is_dir() && ends_with(&p, token))
            })
    }
    root().join(token).exists()
        || ["server/src", "app/src"]
            .iter()
            .any(|base| ends_with(&root().join(base), token))
}

/// Why the code name `token` of the architecture page does not hold, if it does not.
fn code_name_fails(token: &str, code: &[(PathBuf, String)], all_code: &str) -> Option<String> {
    if token.starts_with('/') {
        // A route: served by the code (a route constant or a literal).
        let served = all_code.contains(&format!("\"{token}"));
        return (!served).then(|| format!("{token}: no route"));
    }
    if token.contains('/') || [".rs", ".js", ".md"].iter().any(|x| token.ends_with(x)) {
        return (!exists_as_path(token)).then(|| format!("{token}: no such file"));
    }
    let segments: Vec<&str> = token.split("::").collect();
    let setting = |s: &str| {
        s.contains('_')
            && s.chars()
                .all(|c| c.is_uppercase() || c == '_' || c.is_ascii_digit())
    };
    for seg in &segments {
        let ok = if setting(seg) {
            all_code.contains(seg) // a setting or a constant: named in the code
        } else if seg.chars().all(|c| c.is_uppercase()) {
            true // an HTTP method, an acronym
        } else {
            defined(seg, code)
        };
        if !ok {
            return Some(format!("{token}: {seg} is defined nowhere"));
        }
    }
    for pair in segments.windows(2) {
        if !setting(pair[1]) && !pair_holds(pair[0], pair[1], code) {
            return Some(format!("{token}: {} has no {}", pair[0], pair[1]));
        }
    }
    None
}

#[test]
fn architecture_names_only_what_exists() {
    let doc = std::fs::read_to_string(root().join("docs/ARCHITECTURE.md")).unwrap();
    let code = rust_code();
    let all_code: String = code.iter().map(|(_, t)| t.as_str()).collect();
    let mut missing = Vec::new();
    let mut checked = 0;
    for (i, span) in doc.split('`').enumerate() {
        if i % 2 == 0 || span.contains(' ') || span.contains('{') || span.contains('=') {
            continue;
        }
        // `wiring::app(config)`: the call's name.
        let span = span.split('(').next().unwrap_or(span);
        for token in span.split(|c: char| !(c.is_alphanumeric() || "_:/.".contains(c))) {
            let token = token.trim_matches(|c| c == '.' || c == ':');
            if token.is_empty() || token.starts_with("http") {
                continue;
            }
            checked += 1;
            missing.extend(code_name_fails(token, &code, &all_code));
        }
    }
    assert!(
        checked > 50,
        "only {checked} names were checked: is the page there?"
    );
    assert!(
        missing.is_empty(),
        "docs/ARCHITECTURE.md names what does not exist: {missing:?}"
    );
}

/// The pair check itself: a method of another type, a variant of another enum, an item of
/// another module are refused, though each name exists alone.
#[test]
fn a_pair_is_checked_as_a_pair() {
    let code = rust_code();
    let all: String = code.iter().map(|(_, t)| t.as_str()).collect();
    for (token, holds) in [
        ("ErrorCode::http_status", true),
        ("ErrorCode::Busy", true),
        ("Status::is_finished", true),
        ("contract::Cap", true),
        ("Status::http_status", false),
        ("ErrorCode::Running", false),
        ("Cap::is_finished", false),
        ("labels::Cap", false),
    ] {
        assert_eq!(
            code_name_fails(token, &code, &all).is_none(),
            holds,
            "{token}"
        );
    }
}

/// Where the tree's own paths begin: a token starting so is a path that must exist.
const TREE: [&str; 10] = [
    "server/src/",
    "server/tests/",
    "app/src/",
    "app/tests/",
    "bench/",
    "public/",
    "docs/",
    "end2end/",
    "scripts/",
    "style/",
];

/// Every path into the tree and every pointer to a page's section, in the docs, the README
/// and the sources' comments, names what is there.
#[test]
fn no_doc_or_comment_points_to_what_moved() {
    let mut texts = Vec::new();
    for dir in [
        "docs", "server", "app", "bench", "public", "scripts", "end2end", "style",
    ] {
        files(
            &root().join(dir),
            &[
                ".rs", ".md", ".js", ".mjs", ".ts", ".sh", ".py", ".css", ".html", ".json",
            ],
            &mut texts,
        );
    }
    for file in ["README.md", "Makefile", "index.html", "Trunk.toml"] {
        let path = root().join(file);
        texts.push((
            path.clone(),
            std::fs::read_to_string(&path).unwrap_or_default(),
        ));
    }
    // What the build and the tests write (dist/, node_modules/, screenshots/) is not in the
    // tree: a path under one of .gitignore's folders is not checked.
    let ignored: Vec<String> = std::fs::read_to_string(root().join(".gitignore"))
        .unwrap_or_default()
        .lines()
        .map(|l| l.trim_matches('/').to_string())
        .filter(|l| !l.is_empty() && !l.contains('*'))
        .collect();
    let mut broken = Vec::new();
    for (path, text) in &texts {
        let shown = path
            .strip_prefix(root())
            .unwrap_or(path)
            .display()
            .to_string();
        // This file's own examples, and npm's lock, are not pointers.
        if shown.ends_with("package-lock.json") || shown.ends_with("tests/server/docs.rs") {
            continue;
        }
        for start in TREE {
            for (at, _) in text.match_indices(start) {
                if at > 0
                    && (ident(text[..at].chars().next_back().unwrap())
                        || text[..at].ends_with(['/', '.', '-', '$']))
                {
                    continue; // part of a longer path, or of a URL
                }
                let token: String = text[at..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || "_-./*".contains(*c))
                    .collect();
                let token = token.trim_end_matches(['.', '/']);
                if token.contains('*') || token.len() <= start.len() {
                    continue; // a glob, or the folder alone
                }
                if ignored
                    .iter()
                    .any(|i| token == i || token.starts_with(&format!("{i}/")))
                {
                    continue;
                }
                if !root().join(token).exists() {
                    broken.push(format!("{shown}: {token}"));
                }
            }
        }
        // `PAGE.md, "Section"` / `PAGE.md "Section"`: the page has that heading.
        for (at, _) in text
            .match_indices(".md, \"")
            .chain(text.match_indices(".md \""))
        {
            let name_start = text[..at]
                .rfind(|c: char| !(c.is_alphanumeric() || "_-/".contains(c)))
                .map_or(0, |i| i + 1);
            let page = &text[name_start..at + 3];
            let quoted = &text[at..];
            let Some(open) = quoted.find('"') else {
                continue;
            };
            let Some(len) = quoted[open + 1..].find('"') else {
                continue;
            };
            let section = quoted[open + 1..open + 1 + len]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            let target = ["", "docs/"]
                .iter()
                .map(|base| root().join(format!("{base}{page}")))
                .find(|p| p.exists());
            let Some(target) = target else {
                broken.push(format!("{shown}: {page} (no such page)"));
                continue;
            };
            let headings = std::fs::read_to_string(&target).unwrap_or_default();
            let has = headings
                .lines()
                .any(|l| l.starts_with('#') && l.trim_start_matches('#').trim() == section);
            let section = &section;
            if !has {
                broken.push(format!("{shown}: {page}, \"{section}\" (no such heading)"));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "pointers to what is not there:\n{}",
        broken.join("\n")
    );
}
