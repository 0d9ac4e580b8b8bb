//! The visitors' copy of the waiting page's rules (`vwr_loadtest::page`) against the vectors of
//! static/test/page-rules.json, which the page's own test and the rehearsal's run too.
#![allow(clippy::expect_used, clippy::panic)]

use serde_json::Value;
use vwr_loadtest::page::{
    Look, Refusal, backoff_seconds, first_line_read, hint_of, jitter_seconds, line_doc_rate, line_hint,
    line_read_delay, next_line_read, open_spread, place_from_marks, poll_for_wait, refusal,
    retry_after_seconds, retry_after_wait, status_look, wait_seconds,
};

const VECTORS: &str = include_str!("../../../static/test/page-rules.json");

/// The sections this test runs: every one of the file.
const SECTIONS: [&str; 15] = [
    "verdicts",
    "statusPacing",
    "openSpread",
    "hints",
    "waits",
    "pollForWait",
    "backoff",
    "jitter",
    "retryAfterWait",
    "retryAfter",
    "marks",
    "lineDelay",
    "nextRead",
    "firstLineRead",
    "lineReadDelay",
];

fn vectors() -> Value {
    serde_json::from_str(VECTORS).expect("static/test/page-rules.json is JSON")
}

fn num(c: &Value, key: &str) -> f64 {
    c[key].as_f64().unwrap_or_else(|| panic!("{key} of {c}"))
}

fn int(c: &Value, key: &str) -> u64 {
    c[key].as_u64().unwrap_or_else(|| panic!("{key} of {c}"))
}

fn near(got: f64, want: f64) -> Result<(), String> {
    if (got - want).abs() < 1e-9 { Ok(()) } else { Err(format!("got {got}, want {want}")) }
}

/// Runs `f` on every case of `section`; fails with all the cases that disagree.
fn run(section: &str, f: impl Fn(&Value) -> Result<(), String>) {
    let all = vectors();
    let cases = all[section]["cases"].as_array().unwrap_or_else(|| panic!("no section {section}"));
    assert!(!cases.is_empty(), "{section}: no cases");
    let failures: Vec<String> = cases
        .iter()
        .enumerate()
        .filter_map(|(i, c)| f(c).err().map(|e| format!("{section}[{i}] {c}: {e}")))
        .collect();
    assert!(
        failures.is_empty(),
        "{} case(s) disagree with the page:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_section_of_the_file_is_run() {
    let all = vectors();
    let mut keys: Vec<&str> = all.as_object().expect("an object").keys().map(String::as_str).collect();
    keys.retain(|k| *k != "about");
    keys.sort_unstable();
    let mut ours = SECTIONS.to_vec();
    ours.sort_unstable();
    assert_eq!(keys, ours);
}

#[test]
fn a_refused_check_forgets_the_ticket_only_on_a_verdict() {
    run("verdicts", |c| {
        let then = match refusal(&c["body"]) {
            Refusal::Rejoin(_) => "rejoin",
            Refusal::End(_) => "end",
            Refusal::Backoff => "backoff",
        };
        if then == c["then"] { Ok(()) } else { Err(format!("got {then}")) }
    });
}

#[test]
fn the_status_document_is_read_at_the_pace_of_each_state() {
    run("statusPacing", |c| {
        let got = status_look(&c["doc"], int(c, "position"), c["rate"].as_f64());
        match (got, c["then"].as_str()) {
            (Look::Status(s), Some("status")) => near(s, num(c, "seconds")),
            (Look::Check, Some("check")) | (Look::End(_), Some("end")) | (Look::Backoff, Some("backoff")) => {
                Ok(())
            }
            (got, _) => Err(format!("got {got:?}")),
        }
    });
    run("openSpread", |c| near(open_spread(num(c, "random")), num(c, "seconds")));
    run("hints", |c| near(hint_of(c), num(c, "seconds")));
    run("waits", |c| near(wait_seconds(int(c, "place"), c["rate"].as_f64()), num(c, "seconds")));
    run("pollForWait", |c| near(poll_for_wait(num(c, "wait")), num(c, "seconds")));
}

#[test]
fn refusals_are_backed_off_jittered_and_at_the_servers_retry_after() {
    run("backoff", |c| {
        let errors = u32::try_from(int(c, "errors")).expect("a count");
        near(backoff_seconds(errors), num(c, "seconds"))
    });
    run("jitter", |c| near(jitter_seconds(num(c, "seconds"), num(c, "random")), num(c, "delay")));
    run("retryAfterWait", |c| near(retry_after_wait(num(c, "after"), num(c, "random")), num(c, "seconds")));
    run("retryAfter", |c| {
        let got = retry_after_seconds(c["header"].as_str(), num(c, "nowMs"));
        if got == c["seconds"].as_u64() { Ok(()) } else { Err(format!("got {got:?}")) }
    });
}

#[test]
fn the_booking_line_is_read_from_its_marks_at_its_pace() {
    run("marks", |c| {
        let marks: Vec<(u64, u64)> = c["marks"]
            .as_array()
            .expect("marks")
            .iter()
            .map(|m| (m[0].as_u64().expect("a place"), m[1].as_u64().expect("a score")))
            .collect();
        let got = place_from_marks(&marks, int(c, "score"));
        if got == int(c, "place") { Ok(()) } else { Err(format!("got {got}")) }
    });
    run("lineDelay", |c| {
        near(line_hint(int(c, "place"), int(c, "threshold"), c["rate"].as_f64()), num(c, "seconds"))
    });
    run("nextRead", |c| {
        let got = next_line_read(
            int(c, "place"),
            int(c, "threshold"),
            c["docRate"].as_f64(),
            c["observed"].as_f64(),
        );
        near(got, num(c, "seconds"))
    });
    run("firstLineRead", |c| near(first_line_read(&c["answer"]), num(c, "seconds")));
    run("lineReadDelay", |c| {
        let doc = &c["doc"];
        let hint = next_line_read(int(c, "place"), int(doc, "threshold"), line_doc_rate(doc), None);
        near(line_read_delay(hint, num(c, "random")), num(c, "seconds"))
    });
}
