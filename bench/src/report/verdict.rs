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
