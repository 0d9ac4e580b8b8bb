//! A row of the report and the rules every capacity row follows (docs/rehearsal.md#preflight).

use serde::Serialize;

/// Below this multiple of what the plan needs, a capacity row warns: under 20 % headroom.
pub const HEADROOM: f64 = 1.2;

/// A check's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Status {
    #[serde(rename = "ok")]
    Ok,
    #[serde(rename = "warn")]
    Warn,
    /// A blocking shortfall: `vwr preflight` exits 1.
    #[serde(rename = "fail")]
    Fail,
    /// The endpoint could not answer; never counted as `ok`.
    #[serde(rename = "not checked")]
    NotChecked,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "fail",
            Status::NotChecked => "not checked",
        }
    }
}

/// One check: what it read, what it saw, what the plan needs, the outcome and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    pub check: String,
    pub status: Status,
    /// The figure or setting seen, as printed ("" when not seen).
    pub seen: String,
    /// The figure seen as a number, where there is one.
    pub seen_value: Option<f64>,
    /// The plan's figure (none without a plan, or when the plan has none for this row).
    pub needed: Option<u64>,
    /// Why: the rule that decided, the source of the figure, or the endpoint's reason.
    pub note: String,
}

impl Row {
    pub(crate) fn new(check: impl Into<String>, status: Status) -> Self {
        Self {
            check: check.into(),
            status,
            seen: String::new(),
            seen_value: None,
            needed: None,
            note: String::new(),
        }
    }

    pub(crate) fn seen(mut self, s: impl Into<String>) -> Self {
        self.seen = s.into();
        self
    }

    /// A figure seen: printed with separators, kept as a number for `--json`.
    pub(crate) fn value(mut self, x: f64) -> Self {
        self.seen = figure(x);
        self.seen_value = Some(x);
        self
    }

    pub(crate) fn needed(mut self, n: Option<u64>) -> Self {
        self.needed = n;
        self
    }

    /// The need as printed ("" when there is none).
    pub fn needed_text(&self) -> String {
        self.needed.map(group).unwrap_or_default()
    }

    pub(crate) fn note(mut self, s: impl Into<String>) -> Self {
        self.note = s.into();
        self
    }
}

/// How many rows came out each way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub ok: usize,
    pub warn: usize,
    pub fail: usize,
    pub not_checked: usize,
}

/// `vwr preflight --json`: `{checks: [{check, status, seen, seenValue, needed, note}], summary:
/// {ok, warn, fail, notChecked}, blocking}`.
#[derive(Debug, Clone, Serialize)]
pub struct ReportJson<'a> {
    pub checks: &'a [Row],
    pub summary: Summary,
    pub blocking: bool,
}

/// Every row, in the order checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub checks: Vec<Row>,
}

impl Report {
    /// A `fail` anywhere: the stack cannot take the sale as planned.
    pub fn blocking(&self) -> bool {
        self.checks.iter().any(|r| r.status == Status::Fail)
    }

    /// `vwr preflight`'s exit code: 1 on a blocking shortfall — with `strict`, a row not
    /// checked too —, 2 when nothing at all could be checked (every row `not checked`: no green
    /// from an account nobody read), else 0 (`not checked` rows are not `ok` either: the
    /// summary counts them apart).
    pub fn exit_code(&self, strict: bool) -> u8 {
        let s = self.summary();
        if s.not_checked > 0 && s.ok + s.warn + s.fail == 0 {
            2
        } else {
            u8::from(self.blocking() || strict && s.not_checked > 0)
        }
    }

    pub fn summary(&self) -> Summary {
        let mut s = Summary::default();
        for r in &self.checks {
            match r.status {
                Status::Ok => s.ok += 1,
                Status::Warn => s.warn += 1,
                Status::Fail => s.fail += 1,
                Status::NotChecked => s.not_checked += 1,
            }
        }
        s
    }

    /// The rows with the summary and the exit decision, as `vwr preflight --json` prints them.
    pub fn json(&self) -> ReportJson<'_> {
        ReportJson { checks: &self.checks, summary: self.summary(), blocking: self.blocking() }
    }

    /// The row named `check`, if any.
    pub fn row(&self, check: &str) -> Option<&Row> {
        self.checks.iter().find(|r| r.check == check)
    }
}

/// A capacity seen against the plan's need: `fail` below it, `warn` under [`HEADROOM`] × it,
/// else `ok`. Without a need (no plan) what exists is `ok`.
pub fn capacity(seen: f64, needed: Option<u64>) -> Status {
    match needed {
        Some(n) if seen < n as f64 => Status::Fail,
        Some(n) if seen < n as f64 * HEADROOM => Status::Warn,
        _ => Status::Ok,
    }
}

/// A whole number with thousands separators, as `vwr plan` writes them.
pub(crate) fn group(x: u64) -> String {
    vwr_plan::group(x as f64)
}

/// A figure read as a float (quotas, throttle rates), written as people read it.
pub(crate) fn figure(x: f64) -> String {
    if x.fract() == 0.0 && x >= 0.0 && x < u64::MAX as f64 { group(x as u64) } else { format!("{x}") }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn capacity_fails_below_the_need_and_warns_under_the_headroom() {
        assert_eq!(capacity(999.0, Some(1_000)), Status::Fail);
        assert_eq!(capacity(1_000.0, Some(1_000)), Status::Warn, "exactly the need: no headroom");
        assert_eq!(capacity(1_199.0, Some(1_000)), Status::Warn);
        assert_eq!(capacity(1_200.0, Some(1_000)), Status::Ok);
        assert_eq!(capacity(0.0, None), Status::Ok, "without a plan, what exists is ok");
        assert_eq!(capacity(0.0, Some(0)), Status::Ok, "a need of 0 is met by 0");
    }

    fn report(statuses: &[Status]) -> Report {
        Report { checks: statuses.iter().map(|s| Row::new("c", *s)).collect() }
    }

    #[test]
    fn only_a_fail_blocks_and_not_checked_is_never_ok() {
        assert_eq!(report(&[Status::Ok, Status::Warn]).exit_code(false), 0);
        assert_eq!(report(&[Status::Ok, Status::Fail, Status::NotChecked]).exit_code(false), 1);
        let r = report(&[Status::NotChecked, Status::NotChecked, Status::Ok]);
        assert_eq!(r.exit_code(false), 0, "an unanswered check does not block");
        assert_eq!(r.summary(), Summary { ok: 1, warn: 0, fail: 0, not_checked: 2 });
        let json = serde_json::to_value(r.json()).unwrap();
        assert_eq!(json["checks"][0]["status"], "not checked");
        assert_eq!(json["summary"]["notChecked"], 2);
        assert_eq!(json["blocking"], false);
        assert_eq!(r.exit_code(true), 1, "--strict: a row not checked fails");
        // Nothing checked at all (no credentials, an endpoint that never answers): not a green
        // run (before: "0 ok, 0 warn, 0 fail, 20 not checked — not blocking", exit 0).
        let none = report(&[Status::NotChecked; 20]);
        assert_eq!((none.exit_code(false), none.exit_code(true)), (2, 2));
    }

    #[test]
    fn figures_are_grouped() {
        assert_eq!(group(0), "0");
        assert_eq!(group(1_000), "1,000");
        assert_eq!(figure(10_000.0), "10,000");
        assert_eq!(figure(12.5), "12.5");
    }
}
