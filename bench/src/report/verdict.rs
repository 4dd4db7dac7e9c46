//! A target, what was measured against it, and whether it is met: one line of the summary
//! table and one bullet in its section.

use std::fmt::Write as _;

pub struct Verdict {
    pub section: &'static str,
    pub target: String,
    pub measured: String,
    pub met: Met,
}

pub enum Met {
    Yes,
    /// Not met, and why, from the numbers.
    No(String),
    NotRun(String),
}

impl Met {
    fn word(&self) -> String {
        match self {
            Met::Yes => "**met**".into(),
            Met::No(why) => format!("**not met**: {why}"),
            Met::NotRun(why) => format!("not run: {why}"),
        }
    }
    pub fn short(&self) -> &'static str {
        match self {
            Met::Yes => "met",
            Met::No(_) => "not met",
            Met::NotRun(_) => "not run",
        }
    }
}

/// A section whose results file (`target/bench/{file}`) is absent or does not parse: says so,
/// and records each of its targets as not run.
pub fn section_not_run(
    out: &mut String,
    verdicts: &mut Vec<Verdict>,
    section: &'static str,
    file: &str,
    why: &str,
    targets: impl IntoIterator<Item = String>,
) {
    let _ = writeln!(out, "Not run (`target/bench/{file}` is {why}).\n");
    for t in targets {
        verdicts.push(Verdict::not_run(section, t, format!("{file} is {why}")));
    }
}

impl Verdict {
    pub fn not_run(section: &'static str, target: impl Into<String>, why: String) -> Self {
        Verdict {
            section,
            target: target.into(),
            measured: "—".into(),
            met: Met::NotRun(why),
        }
    }
}

/// The verdict's bullet under its section, and the verdict itself into the summary.
pub fn record(out: &mut String, verdicts: &mut Vec<Verdict>, v: Verdict) {
    let _ = writeln!(
        out,
        "- **Target:** {} — measured: {} — {}",
        v.target,
        v.measured,
        v.met.word()
    );
    verdicts.push(v);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_not_run_says_why_and_records_every_target() {
        let (mut out, mut verdicts) = (String::new(), Vec::new());
        let targets = ["a".to_string(), "b".to_string()];
        section_not_run(&mut out, &mut verdicts, "3", "http.json", "absent", targets);
        assert_eq!(out, "Not run (`target/bench/http.json` is absent).\n\n");
        assert_eq!(verdicts.len(), 2);
        assert!(verdicts.iter().all(|v| v.section == "3"
            && matches!(&v.met, Met::NotRun(why) if why == "http.json is absent")));
    }
}
