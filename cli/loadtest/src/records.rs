//! The per-visitor records of a distributed rehearsal (`rehearsal/locustfile.py`), as
//! `vwr loadtest analyze` reads them: one JSON object per line, `kind` `run` (a worker's
//! settings, first in its file) or `visitor` (one visitor's run, written when it ends). The
//! format is documented in docs/rehearsal.md#the-records.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The record format this `vwr` reads (`version` of a `run` line).
pub const RECORD_VERSION: u64 = 1;

/// Why reading the records failed.
#[derive(Debug, thiserror::Error)]
pub enum RecordsError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}:{line}: {why}")]
    Line { path: PathBuf, line: usize, why: String },
    #[error("{0}: no visitor records (*.jsonl files with `\"kind\":\"visitor\"` lines)")]
    Empty(PathBuf),
    #[error("records of several events ({0}): analyze one event's directory at a time")]
    Events(String),
    #[error(
        "workers ran with different settings ({0}): records of several rehearsals? Give each run a fresh directory"
    )]
    Settings(String),
}

/// A worker's settings (the env it ran with).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRecord {
    pub version: u64,
    #[serde(default)]
    pub worker: String,
    #[serde(default)]
    pub host: String,
    pub event: String,
    #[serde(default)]
    pub dwell_seconds: f64,
    #[serde(default)]
    pub abandon_rate: f64,
    #[serde(default)]
    pub no_show_rate: f64,
    #[serde(default)]
    pub threshold: u64,
}

/// One request a visitor made.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallRecord {
    /// The endpoint's name, as `vwr loadtest` names it (`tier1.assign`, `tier2.line`, …).
    pub endpoint: String,
    /// When it was sent (unix seconds).
    pub at: f64,
    pub ms: f64,
    /// The HTTP status; 0 for a network error.
    pub status: u16,
    #[serde(default)]
    pub x_cache: Option<String>,
    /// A 503 or 429 that came with `Retry-After`.
    #[serde(default)]
    pub retry_after: bool,
}

/// One visitor's run. Times are unix seconds.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VisitorRecord {
    pub visitor: String,
    pub arrived_at: f64,
    pub joined_at: Option<f64>,
    pub position: Option<u64>,
    pub tier1_admitted_at: Option<f64>,
    pub tier2_admitted_at: Option<f64>,
    pub tier2_idle_seconds: Option<f64>,
    pub estimate_seconds: Option<f64>,
    pub estimated_at: Option<f64>,
    pub first_check_at: Option<f64>,
    #[serde(default)]
    pub prequeue: bool,
    #[serde(default)]
    pub passed_edge: bool,
    #[serde(default)]
    pub status_polls: u64,
    #[serde(default)]
    pub checks: u64,
    #[serde(default)]
    pub line_reads: u64,
    #[serde(default)]
    pub max_active_seen: u64,
    /// `done`, `abandoned`, `noShow`, `refused`, `unfinished` or `lost` (why in `lostBy`).
    pub end: String,
    pub lost_by: Option<String>,
    pub place_lost: Option<String>,
    #[serde(default)]
    pub place_losses: BTreeMap<String, u64>,
    #[serde(default)]
    pub verdicts: BTreeMap<String, u64>,
    /// What the visitor judged on its way: `unexpected4xx`, `transientRefusals`, `edgeRefused`,
    /// `seatsRefused`, `rejoinedTier2`, `doubleAdmitted`, `overThreshold`.
    #[serde(default)]
    pub counts: BTreeMap<String, u64>,
    pub tier1_jti: Option<String>,
    pub tier2_jti: Option<String>,
    #[serde(default)]
    pub calls: Vec<CallRecord>,
    pub ended_at: Option<f64>,
}

/// Every record of a directory.
#[derive(Debug, Default)]
pub struct Records {
    pub runs: Vec<RunRecord>,
    pub visitors: Vec<VisitorRecord>,
}

#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Line {
    Run(RunRecord),
    Visitor(Box<VisitorRecord>),
}

impl Records {
    /// Reads every `*.jsonl` file of `dir` (the workers' files gathered in one place).
    pub fn read_dir(dir: &Path) -> Result<Self, RecordsError> {
        Self::read_dir_with(dir, |_, _| {})
    }

    /// [`Self::read_dir`], telling `progress` each file read and the visitors so far.
    pub fn read_dir_with(dir: &Path, mut progress: impl FnMut(&Path, usize)) -> Result<Self, RecordsError> {
        let io = |source| RecordsError::Io { path: dir.to_owned(), source };
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(io)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        files.sort();
        let mut records = Records::default();
        for path in &files {
            let text = std::fs::read_to_string(path)
                .map_err(|source| RecordsError::Io { path: path.clone(), source })?;
            records.add(path, &text)?;
            progress(path, records.visitors.len());
        }
        if records.visitors.is_empty() {
            return Err(RecordsError::Empty(dir.to_owned()));
        }
        let mut events: Vec<&str> = records.runs.iter().map(|r| r.event.as_str()).collect();
        events.sort_unstable();
        events.dedup();
        if events.len() > 1 {
            return Err(RecordsError::Events(events.join(", ")));
        }
        // One rehearsal: every worker with the same host and settings.
        let settings = |r: &RunRecord| {
            format!(
                "host {}, dwell {} s, abandon {}, no-show {}, threshold {}",
                r.host, r.dwell_seconds, r.abandon_rate, r.no_show_rate, r.threshold
            )
        };
        let mut seen: Vec<String> = records.runs.iter().map(settings).collect();
        seen.sort_unstable();
        seen.dedup();
        if seen.len() > 1 {
            return Err(RecordsError::Settings(seen.join(" / ")));
        }
        Ok(records)
    }

    /// The lines of one file. A last line cut short (a worker killed while writing) is left
    /// out; any other line that does not parse is an error.
    pub fn add(&mut self, path: &Path, text: &str) -> Result<(), RecordsError> {
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let err = |why: String| RecordsError::Line { path: path.to_owned(), line: i + 1, why };
            let parsed = match serde_json::from_str::<Line>(line) {
                Ok(l) => l,
                Err(e) if e.is_eof() && i + 1 == lines.len() => continue,
                Err(e) => return Err(err(e.to_string())),
            };
            match parsed {
                Line::Run(run) => {
                    if run.version != RECORD_VERSION {
                        return Err(err(format!(
                            "record version {} (this vwr reads version {RECORD_VERSION}): use the locustfile of the same release",
                            run.version
                        )));
                    }
                    self.runs.push(run);
                }
                Line::Visitor(v) => self.visitors.push(*v),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: &str = r#"{"kind":"run","version":1,"worker":"w1","host":"http://x","event":"e1","dwellSeconds":2,"abandonRate":0,"noShowRate":0,"threshold":10,"startedAt":1}"#;
    const VISITOR: &str = r#"{"kind":"visitor","visitor":"v1","arrivedAt":10.0,"joinedAt":10.1,"position":1,"tier1AdmittedAt":11,"tier2AdmittedAt":11.5,"tier2IdleSeconds":0.1,"estimateSeconds":1,"estimatedAt":10.1,"firstCheckAt":null,"end":"done","lostBy":null,"placeLost":null,"tier1Jti":"a","tier2Jti":"b","calls":[{"endpoint":"tier1.assign","at":10.0,"ms":3.5,"status":200,"xCache":null,"retryAfter":false}],"endedAt":14}"#;

    #[test]
    fn reads_runs_and_visitors_and_leaves_out_a_line_cut_short() {
        let mut r = Records::default();
        let text = format!("{RUN}\n{VISITOR}\n{{\"kind\":\"visitor\",\"visi");
        r.add(Path::new("w1.jsonl"), &text).unwrap();
        assert_eq!(r.runs.len(), 1);
        assert_eq!(r.visitors.len(), 1);
        assert_eq!(r.visitors[0].calls[0].endpoint, "tier1.assign");
        assert_eq!(r.visitors[0].tier1_admitted_at, Some(11.0));
    }

    #[test]
    fn refuses_a_broken_line_and_another_version_with_where() {
        let mut r = Records::default();
        let err = r.add(Path::new("w1.jsonl"), &format!("{{\"kind\":\"visitor\"}}\n{VISITOR}")).unwrap_err();
        assert!(err.to_string().starts_with("w1.jsonl:1:"), "{err}");
        let err = r.add(Path::new("w2.jsonl"), &RUN.replace("\"version\":1", "\"version\":2")).unwrap_err();
        assert!(err.to_string().contains("record version 2"), "{err}");
    }

    #[test]
    fn a_directory_of_several_events_or_runs_or_none_is_refused() {
        let dir = std::env::temp_dir().join(format!("vwr-records-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(matches!(Records::read_dir(&dir), Err(RecordsError::Empty(_))));
        std::fs::write(dir.join("a.jsonl"), format!("{RUN}\n{VISITOR}\n")).unwrap();
        assert_eq!(Records::read_dir(&dir).unwrap().visitors.len(), 1);
        std::fs::write(
            dir.join("b.jsonl"),
            format!("{}\n{VISITOR}\n", RUN.replace("\"dwellSeconds\":2", "\"dwellSeconds\":5")),
        )
        .unwrap();
        let err = Records::read_dir(&dir).unwrap_err();
        assert!(matches!(err, RecordsError::Settings(_)), "two rehearsals in one directory: {err}");
        std::fs::write(dir.join("b.jsonl"), format!("{RUN}\n{VISITOR}\n")).unwrap();
        assert_eq!(Records::read_dir(&dir).unwrap().visitors.len(), 2, "two workers of one run");
        std::fs::write(dir.join("b.jsonl"), format!("{}\n{VISITOR}\n", RUN.replace("e1", "e2"))).unwrap();
        assert!(matches!(Records::read_dir(&dir), Err(RecordsError::Events(_))));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
