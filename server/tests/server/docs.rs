//! docs/ARCHITECTURE.md names modules, types, functions, files and settings: each must exist,
//! so the page cannot drift from the code unnoticed. A name in backticks is checked when it
//! looks like code (`Index::recent`, `Replica`, `index/write.rs`, `PICKUP_BUS`); prose in
//! backticks (with spaces, or a key pattern like `markers/{ws}/{id}`) is not.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn sources(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push((p.clone(), std::fs::read_to_string(&p).unwrap()));
        }
    }
}

fn word_at(text: &str, at: usize, len: usize) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let before = text[..at].chars().next_back().is_none_or(|c| !ident(c));
    let after = text[at + len..].chars().next().is_none_or(|c| !ident(c));
    before && after
}

/// `name` is defined in the code: an item, an enum variant, a module file or folder.
fn defined(name: &str, code: &[(PathBuf, String)]) -> bool {
    let kinds = [
        "fn ", "struct ", "enum ", "trait ", "mod ", "type ", "const ", "static ",
    ];
    code.iter().any(|(path, text)| {
        let stem = path.file_stem().and_then(|s| s.to_str());
        let folder = path
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|s| s.to_str());
        stem == Some(name)
            || (stem == Some("mod") && folder == Some(name))
            || kinds.iter().any(|k| {
                let pat = format!("{k}{name}");
                text.match_indices(&pat)
                    .any(|(i, _)| word_at(text, i + k.len(), name.len()))
            })
            || text.lines().any(|l| {
                // A field (a struct's, or a JSON field's in the model).
                let t = l.trim_start();
                let t = t.strip_prefix("pub ").unwrap_or(t);
                t.strip_prefix(name)
                    .is_some_and(|rest| rest.starts_with(':'))
            })
            || text.lines().any(|l| {
                let t = l.trim_start();
                t.len() < l.len()
                    && t.strip_prefix(name).is_some_and(|rest| {
                        rest.is_empty() || rest.starts_with([',', '(', '{', ' '])
                    })
                    && name.chars().next().is_some_and(char::is_uppercase)
            })
    })
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

#[test]
fn architecture_names_only_what_exists() {
    let doc = std::fs::read_to_string(root().join("docs/ARCHITECTURE.md")).unwrap();
    let mut code = Vec::new();
    for dir in ["server/src", "app/src", "bench/src"] {
        sources(&root().join(dir), &mut code);
    }
    let all_code: String = code.iter().map(|(_, t)| t.as_str()).collect();
    let mut missing = Vec::new();
    let mut checked = 0;
    for (i, span) in doc.split('`').enumerate() {
        if i % 2 == 0 || span.contains(' ') || span.contains('{') || span.contains('=') {
            continue;
        }
        for token in span.split(|c: char| !(c.is_alphanumeric() || "_:/.".contains(c))) {
            let token = token.trim_matches(|c| c == '.' || c == ':');
            if token.is_empty() || token.starts_with("http") {
                continue;
            }
            checked += 1;
            let ok = if token.starts_with('/') {
                // A route: served by the code.
                all_code.contains(&format!("\"{token}"))
            } else if token.contains('/')
                || token.ends_with(".rs")
                || token.ends_with(".js")
                || token.ends_with(".md")
            {
                exists_as_path(token)
            } else {
                token.split("::").all(|seg| {
                    if seg.contains('_')
                        && seg
                            .chars()
                            .all(|c| c.is_uppercase() || c == '_' || c.is_ascii_digit())
                    {
                        // A setting or a constant: named in the code.
                        all_code.contains(seg)
                    } else if seg.chars().all(|c| c.is_uppercase()) {
                        true // an HTTP method, an acronym
                    } else {
                        defined(seg, &code)
                    }
                })
            };
            if !ok {
                missing.push(token.to_string());
            }
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
