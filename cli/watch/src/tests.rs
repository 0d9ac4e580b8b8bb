#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

use super::*;

const T0: f64 = 1_790_000_000.0;

fn key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

fn code(k: KeyCode) -> KeyEvent {
    KeyEvent::new(k, KeyModifiers::NONE)
}

fn typed(app: &mut App, s: &str) {
    for c in s.chars() {
        assert_eq!(app.on_key(key(c)), None);
    }
}

fn screen(app: &App, w: u16, h: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| app.render(f)).unwrap();
    let buf = term.backend().buffer();
    let mut out = String::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

fn open_status() -> Value {
    json!({
        "eventId": "sale1", "active": true, "state": "open",
        "issued": 1200, "servingCounter": 1000, "highestPosition": 1200,
        "waiting": 200, "admitted": 950, "prequeueSize": 300,
        "config": {"batchSize": 50, "intervalSeconds": 5, "shards": 4, "tokenTtlSeconds": 600},
        "rates": {"windowSeconds": 60, "servedPerSecond": 10.0, "joinsPerSecond": 12.5},
        "seedCommitment": "3f2a9c0b1d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8",
        "seed": "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
        "openedAt": 1_789_999_000u64, "lastStepAt": 0, "createdAt": 0, "updatedAt": 0, "rev": 7
    })
}

fn app_with(v: &Value) -> App {
    let mut app = App::new("sale1");
    app.on_status(v, T0);
    app
}

#[test]
fn renders_an_open_event_with_figures() {
    let app = app_with(&open_status());
    let s = screen(&app, 100, 30);
    for needle in [
        "OPEN",
        "sale1",
        "1200",
        "1000",
        "950",
        "300",
        "5.0 %",
        "20s",
        "12.5 (60 s)",
        "served 10.0 (60 s)",
        "3f2a9c0b1d4e",
        "revealed",
        "p  pause",
    ] {
        assert!(s.contains(needle), "{needle:?} missing in\n{s}");
    }
    assert!(!s.contains("not revealed"), "{s}");
}

#[test]
fn renders_a_prequeue_countdown() {
    let v = json!({
        "eventId": "sale1", "active": true, "state": "prequeue",
        "issued": 0, "servingCounter": 0, "waiting": 0, "admitted": 0, "prequeueSize": 42,
        "prequeueAt": T0 as u64 - 60, "openAt": T0 as u64 + 302,
        "seedCommitment": "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789"
    });
    let app = app_with(&v);
    let s = screen(&app, 100, 30);
    assert!(s.contains("PREQUEUE"), "{s}");
    assert!(s.contains("in 5m 02s"), "{s}");
    assert!(s.contains("not revealed"), "{s}");
    assert!(s.contains("42"), "{s}");
    // nobody served yet: no no-show share, no wait estimate
    assert!(app.line_rows().iter().any(|r| r.label == "no-show share" && r.value == DASH));
}

#[test]
fn renders_a_scheduled_event_with_both_times() {
    let v = json!({"state": "scheduled", "prequeueAt": T0 as u64 + 3600, "openAt": T0 as u64 + 7200});
    let app = app_with(&v);
    let text = app.snapshot_text();
    assert!(text.contains("in 1h 00m 00s"), "{text}");
    assert!(text.contains("in 2h 00m 00s"), "{text}");
}

#[test]
fn renders_a_paused_event_with_its_message() {
    let mut v = open_status();
    v["state"] = json!("paused");
    v["message"] = json!({"en": "Back in 5 minutes", "ko": "5분 후에 다시"});
    let app = app_with(&v);
    let s = screen(&app, 100, 30);
    assert!(s.contains("PAUSED"), "{s}");
    assert!(s.contains("Back in 5 minutes"), "{s}");
    let text = app.snapshot_text();
    assert!(text.contains("5분 후에 다시"), "{text}");
}

#[test]
fn renders_a_closed_sold_out_event() {
    let mut v = open_status();
    v["state"] = json!("closed");
    v["closeReason"] = json!("sold_out");
    let app = app_with(&v);
    let s = screen(&app, 100, 30);
    assert!(s.contains("CLOSED"), "{s}");
    assert!(s.contains("sold_out"), "{s}");
}

#[test]
fn renders_tier2_from_the_status_and_prefers_the_tier2_api() {
    let mut v = open_status();
    let without = screen(&app_with(&v), 100, 30);
    assert!(without.contains("tier 2"), "{without}");
    assert!(!without.contains("active 80/100"), "{without}");

    v["tier2"] = json!({"eventId": "sale1", "registered": true, "threshold": 100, "lineOrder": "tier1",
        "waiting": 20, "active": 80, "held": 3, "pendingNotices": 0, "admittedLast60s": 60,
        "admittedPerSecond": 1.0});
    let mut app = app_with(&v);
    let s = screen(&app, 100, 30);
    assert!(s.contains("active 80/100 · waiting 20 · held 3"), "{s}");
    assert!(s.contains("the tier-1 status"), "{s}");

    app.on_tier2(&json!({"registered": true, "threshold": 200, "waiting": 7, "active": 150, "held": 0}));
    let s = screen(&app, 100, 30);
    assert!(s.contains("active 150/200 · waiting 7"), "{s}");
    assert!(s.contains("the tier-2 admin status"), "{s}");

    app.on_tier2_error("503 Service Unavailable: service_unavailable: redis down");
    let text = app.snapshot_text();
    assert!(text.contains("redis down"), "{text}");
    assert!(text.contains("active 150/200"), "the last tier-2 figures stay: {text}");
}

#[test]
fn renders_on_a_small_terminal_and_before_any_answer() {
    let app = App::new("sale1");
    let s = screen(&app, 100, 30);
    assert!(s.contains("waiting for the first answer"), "{s}");
    let mut app = app_with(&open_status());
    app.mode = Mode::Help;
    for (w, h) in [(1, 1), (20, 5), (80, 24), (40, 60)] {
        screen(&app, w, h);
    }
}

#[test]
fn help_opens_and_any_key_closes_it() {
    let mut app = app_with(&open_status());
    assert_eq!(app.on_key(key('?')), None);
    assert_eq!(app.mode(), &Mode::Help);
    assert!(screen(&app, 100, 30).contains("Any key closes this help"));
    assert_eq!(app.on_key(key('p')), None);
    assert_eq!(app.mode(), &Mode::Normal, "the key only closed the help");
}

fn held_target_arrivals_status() -> Value {
    let mut v = open_status();
    v["config"] = json!({"batchSize": 50, "intervalSeconds": 5, "shards": 4, "tokenTtlSeconds": 600,
        "mode": "targetArrivals", "targetArrivalsPerMinute": 600, "maxBatchSize": 5000,
        "reentryGraceSeconds": 300, "maxSessionSeconds": 1800});
    v["outflow"] = json!({"mode": "targetArrivals", "targetPerMinute": 600,
        "redeemedPerMinute": 540.0, "servedPerMinute": 613.6, "noShowShare": 0.12, "released": 7});
    v["heldBy"] = json!("health");
    v["holdReason"] = json!("origin 5xx");
    v["heldSince"] = json!(T0 as u64 - 302);
    v
}

#[test]
fn renders_a_standby_events_alarm_and_an_unreadable_one_loudly() {
    for (state, needle) in [
        ("ok", "cf-requests: OK"),
        ("alarm", "cf-requests: ALARM"),
        ("unreadable", "cf-requests: UNREADABLE, the event cannot open"),
    ] {
        let mut v = open_status();
        v["state"] = json!("standby");
        v["standbyAlarm"] = json!("cf-requests");
        v["standbyAlarmState"] = json!(state);
        let app = app_with(&v);
        let s = screen(&app, 120, 34);
        assert!(s.contains("standby on") && s.contains(needle), "{needle:?} missing in\n{s}");
    }
    let s = screen(&app_with(&open_status()), 120, 34);
    assert!(!s.contains("standby on"), "{s}");
}

#[test]
fn renders_a_held_target_arrivals_event() {
    let app = app_with(&held_target_arrivals_status());
    let s = screen(&app, 120, 34);
    for needle in [
        "OPEN",
        // T0 = 14:13:20Z, held 302 s before
        "HELD by health: origin 5xx since 14:08:18Z",
        "5m 02s",
        // the wrapped hold row pushes nothing out of the panel
        "3f2a9c0b1d4e… · revealed",
        "targetArrivals · target 600/min · at most 5000/step",
        "redeemed 540.0 · served 613.6 · 90 % of target",
        "released",
        "12.0 % (recent)",
        "h  release hold",
    ] {
        assert!(s.contains(needle), "{needle:?} missing in\n{s}");
    }
    assert!(!s.contains("whole sale"), "the status's noShowShare wins over 1 - admitted/serving: {s}");
    let st = app.status().unwrap();
    assert_eq!(st.mode(), Some("targetArrivals"));
    assert!((st.no_show_share().unwrap() - 0.12).abs() < 1e-12);
    assert!((st.overall_no_show_share().unwrap() - 0.05).abs() < 1e-12);
    assert_eq!(
        st.hold,
        Some(Hold { by: "health".into(), reason: Some("origin 5xx".into()), since: Some(T0 as u64 - 302) })
    );
    let text = app.snapshot_text();
    for needle in [
        "hold                HELD by health: origin 5xx since 14:08:18Z (5m 02s ago)",
        "mode                targetArrivals · target 600/min · at most 5000/step",
        "per minute          redeemed 540.0 · served 613.6 · 90 % of target",
        "released            7",
        "no-show share       12.0 % (recent)",
    ] {
        assert!(text.contains(needle), "{needle:?} missing in\n{text}");
    }

    // the longest reason wraps over several lines; the panel grows, the seed stays visible
    let mut v = held_target_arrivals_status();
    v["holdReason"] = json!("checkout errors ".repeat(12).trim_end());
    let s = screen(&app_with(&v), 100, 40);
    assert!(s.contains("3f2a9c0b1d4e… · revealed"), "{s}");

    // a fixed-mode event without a hold (and an older server without `outflow`)
    let app = app_with(&open_status());
    let s = screen(&app, 100, 30);
    assert!(!s.contains("HELD"), "{s}");
    assert!(s.contains("h  hold"), "{s}");
    let text = app.snapshot_text();
    assert!(text.contains("mode                fixed · 50 every 5s"), "{text}");
    assert!(text.contains("no-show share       5.0 % (whole sale)"), "{text}");
    assert!(text.contains("per minute          redeemed — · served —"), "{text}");
    assert!(!text.contains("\nhold "), "{text}");
    let mut v = open_status();
    v["config"]["batchSize"] = json!(0);
    assert!(app_with(&v).snapshot_text().contains("fixed · manual advances only"));
}

#[test]
fn h_holds_with_a_reason_and_releases_a_held_event() {
    // before any answer: nothing to toggle
    let mut app = App::new("sale1");
    assert_eq!(app.on_key(key('h')), None);
    assert_eq!(app.mode(), &Mode::Normal);
    assert!(app.snapshot_text().contains("no status yet"));

    // not held: h asks a reason, which is required
    let mut app = app_with(&open_status());
    assert_eq!(app.on_key(key('h')), None);
    assert!(matches!(app.mode(), Mode::Prompt { kind: PromptKind::HoldReason, .. }));
    assert!(screen(&app, 120, 30).contains("Hold the advancer"));
    app.on_key(code(KeyCode::Enter));
    assert!(matches!(app.mode(), Mode::Prompt { error: Some(e), .. } if e == "enter a reason"));
    typed(&mut app, &"x".repeat(MAX_HOLD_REASON + 1));
    app.on_key(code(KeyCode::Enter));
    assert!(matches!(app.mode(), Mode::Prompt { error: Some(e), .. } if e.contains("at most 200")));
    app.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    typed(&mut app, " origin 5xx ");
    app.on_key(code(KeyCode::Enter));
    let Mode::Confirm { question, .. } = app.mode() else { panic!("{:?}", app.mode()) };
    assert!(question.starts_with("Hold event sale1"), "{question}");
    assert!(question.contains("\"origin 5xx\"") && question.ends_with("y/n"), "{question}");
    let action = app.on_key(key('y')).unwrap();
    assert_eq!(action, Action::Health { ok: false, reason: Some("origin 5xx".into()) });
    assert_eq!(
        action.request("sale1").unwrap(),
        (
            Method::PUT,
            "/api/admin/vwr/health/sale1".into(),
            Some(json!({"ok": false, "reason": "origin 5xx"}))
        )
    );
    // one action at a time
    app.on_key(key('h'));
    assert_eq!(app.mode(), &Mode::Normal);
    assert!(app.snapshot_text().contains("wait for the answer to hold"));

    // the answer is the status: now held
    app.on_action_done(&action.label(), &held_target_arrivals_status(), T0 + 1.0);
    let text = app.snapshot_text();
    assert!(text.contains("hold: done: now open"), "{text}");
    assert!(text.contains("HELD by health: origin 5xx"), "{text}");

    // held: h asks to release it; n cancels
    app.on_key(key('h'));
    let Mode::Confirm { question, .. } = app.mode() else { panic!("{:?}", app.mode()) };
    assert_eq!(question, "Release the hold on event sale1 (held by health: origin 5xx)? y/n");
    assert!(screen(&app, 120, 30).contains("Release the hold on event sale1"));
    assert_eq!(app.on_key(key('n')), None);
    assert_eq!(app.mode(), &Mode::Normal);
    assert!(app.snapshot_text().contains("release the hold cancelled"));
    app.on_key(key('h'));
    let action = app.on_key(key('y')).unwrap();
    assert_eq!(action, Action::Health { ok: true, reason: None });
    assert_eq!(
        action.request("sale1").unwrap(),
        (Method::PUT, "/api/admin/vwr/health/sale1".into(), Some(json!({"ok": true})))
    );
    app.on_action_done(&action.label(), &open_status(), T0 + 2.0);
    let text = app.snapshot_text();
    assert!(text.contains("release the hold: done"), "{text}");
    assert!(!text.contains("HELD"), "{text}");
    // and h is the hold again, ? the help
    app.on_key(key('h'));
    assert!(matches!(app.mode(), Mode::Prompt { kind: PromptKind::HoldReason, .. }));
    app.on_key(code(KeyCode::Esc));
    app.on_key(key('?'));
    assert_eq!(app.mode(), &Mode::Help);
    assert!(screen(&app, 100, 30).contains("health gate"));
}

#[test]
fn odd_hold_and_outflow_fields_do_not_panic() {
    for v in [
        json!({"heldBy": "health"}),
        json!({"heldBy": "", "holdReason": "x", "heldSince": 5}),
        json!({"heldBy": 3, "outflow": [], "config": {"mode": 7}}),
        json!({"heldBy": "alarm", "heldSince": u64::MAX, "outflow": {"noShowShare": 7.5, "released": -1,
               "redeemedPerMinute": "x", "targetPerMinute": 0, "mode": "targetArrivals"}}),
        json!({"config": {"mode": "somethingNew"}, "outflow": {"noShowShare": -0.5}}),
    ] {
        let app = app_with(&v);
        screen(&app, 100, 30);
        screen(&app, 20, 6);
        let _ = app.snapshot_text();
    }
    assert_eq!(
        app_with(&json!({"heldBy": "health"})).status().unwrap().hold_text().as_deref(),
        Some("HELD by health")
    );
    assert_eq!(app_with(&json!({"heldBy": ""})).status().unwrap().hold, None);
    let s = app_with(&json!({"outflow": {"noShowShare": 7.5}}));
    assert_eq!(s.status().unwrap().no_show_share(), Some(1.0));
    assert!(app_with(&json!({"config": {"mode": "somethingNew"}})).snapshot_text().contains("somethingNew"));
}

#[test]
fn quit_keys() {
    let mut app = App::new("e");
    assert_eq!(app.on_key(key('q')), Some(Action::Quit));
    assert_eq!(app.on_key(code(KeyCode::Esc)), Some(Action::Quit));
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(app.on_key(ctrl_c), Some(Action::Quit));
    // in a prompt, q is text and Esc cancels
    app.on_key(key('m'));
    assert_eq!(app.on_key(key('q')), None);
    assert_eq!(app.on_key(code(KeyCode::Esc)), None);
    assert_eq!(app.mode(), &Mode::Normal);
}

#[test]
fn pause_asks_a_message_then_confirmation() {
    let mut app = app_with(&open_status());
    assert_eq!(app.on_key(key('p')), None);
    typed(&mut app, "Back soon");
    assert_eq!(app.on_key(code(KeyCode::Enter)), None);
    let Mode::Confirm { question, .. } = app.mode() else { panic!("{:?}", app.mode()) };
    assert!(question.starts_with("Pause event sale1"), "{question}");
    assert!(question.ends_with("y/n"), "{question}");
    assert!(screen(&app, 100, 30).contains("Pause event sale1"));
    let action = app.on_key(key('y')).unwrap();
    assert_eq!(action, Action::Pause { message: Some("Back soon".into()) });
    let (m, p, b) = action.request("sale1").unwrap();
    assert_eq!((m, p.as_str()), (Method::POST, "/api/admin/vwr/pause/sale1"));
    assert_eq!(b, Some(json!({"message": {"en": "Back soon"}})));
}

#[test]
fn pause_without_message_and_n_cancels() {
    let mut app = app_with(&open_status());
    app.on_key(key('p'));
    assert_eq!(app.on_key(code(KeyCode::Enter)), None);
    assert_eq!(app.on_key(key('x')), None, "other keys do not answer the question");
    assert!(matches!(app.mode(), Mode::Confirm { .. }));
    assert_eq!(app.on_key(key('n')), None);
    assert_eq!(app.mode(), &Mode::Normal);
    assert!(app.snapshot_text().contains("cancelled"));
    app.on_key(key('p'));
    app.on_key(code(KeyCode::Enter));
    let action = app.on_key(key('y')).unwrap();
    assert_eq!(action, Action::Pause { message: None });
    assert_eq!(action.request("e").unwrap().2, Some(json!({})));
}

#[test]
fn resume_needs_confirmation() {
    let mut app = app_with(&open_status());
    assert_eq!(app.on_key(key('r')), None);
    assert_eq!(app.on_key(code(KeyCode::Esc)), None, "Esc answers no");
    assert_eq!(app.mode(), &Mode::Normal);
    app.on_key(key('r'));
    let action = app.on_key(key('Y')).unwrap();
    assert_eq!(action, Action::Resume);
    assert_eq!(action.request("e").unwrap(), (Method::POST, "/api/admin/vwr/resume/e".into(), None));
}

#[test]
fn advance_defaults_to_the_batch_size_and_parses_numbers() {
    let mut app = app_with(&open_status());
    app.on_key(key('a'));
    assert!(screen(&app, 100, 30).contains("Enter = 50"));
    app.on_key(code(KeyCode::Enter));
    let Mode::Confirm { question, .. } = app.mode() else { panic!("{:?}", app.mode()) };
    assert!(question.contains("by 50"), "{question}");
    assert_eq!(app.on_key(key('y')), Some(Action::Advance { by: 50 }));

    app.on_action_done("advance by 50", &open_status(), T0 + 1.0);
    app.on_key(key('a'));
    typed(&mut app, "1,000");
    app.on_key(code(KeyCode::Enter));
    let action = app.on_key(key('y')).unwrap();
    assert_eq!(action, Action::Advance { by: 1000 });
    assert_eq!(action.request("e").unwrap().2, Some(json!({"by": 1000})));
}

#[test]
fn advance_refuses_bad_numbers_and_stays_in_the_prompt() {
    let mut app = app_with(&open_status());
    app.on_key(key('a'));
    typed(&mut app, "ten");
    app.on_key(code(KeyCode::Enter));
    let Mode::Prompt { error: Some(e), .. } = app.mode() else { panic!("{:?}", app.mode()) };
    assert!(e.contains("not a whole number"), "{e}");
    for _ in 0..3 {
        app.on_key(code(KeyCode::Backspace));
    }
    typed(&mut app, "0");
    app.on_key(code(KeyCode::Enter));
    let Mode::Prompt { error: Some(e), .. } = app.mode() else { panic!("{:?}", app.mode()) };
    assert!(e.contains("out of range"), "{e}");
    app.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    typed(&mut app, "20000000");
    app.on_key(code(KeyCode::Enter));
    assert!(matches!(app.mode(), Mode::Prompt { error: Some(_), .. }));
    app.on_key(code(KeyCode::Esc));
    assert_eq!(app.mode(), &Mode::Normal);

    // no batch size known (manual-only event): Enter alone asks for a number
    let mut v = open_status();
    v["config"]["batchSize"] = json!(0);
    let mut app = app_with(&v);
    app.on_key(key('a'));
    app.on_key(code(KeyCode::Enter));
    assert!(matches!(app.mode(), Mode::Prompt { error: Some(e), .. } if e == "enter a number"));
}

#[test]
fn close_asks_the_reason_then_a_message_then_confirmation() {
    let mut app = app_with(&open_status());
    app.on_key(key('c'));
    assert_eq!(app.mode(), &Mode::ChooseReason);
    assert!(screen(&app, 100, 30).contains("sold_out"));
    app.on_key(key('x'));
    assert_eq!(app.mode(), &Mode::ChooseReason, "only s, e or Esc answer");
    app.on_key(key('s'));
    typed(&mut app, "All gone");
    app.on_key(code(KeyCode::Enter));
    let Mode::Confirm { question, .. } = app.mode() else { panic!("{:?}", app.mode()) };
    assert!(question.contains("Close event sale1 (sold_out)"), "{question}");
    let action = app.on_key(key('y')).unwrap();
    assert_eq!(action, Action::Close { reason: CloseReason::SoldOut, message: Some("All gone".into()) });
    assert_eq!(
        action.request("e").unwrap(),
        (
            Method::POST,
            "/api/admin/vwr/close/e".into(),
            Some(json!({"reason": "sold_out", "message": {"en": "All gone"}}))
        )
    );
    app.on_action_failed("close", "409 Conflict: invalid_transition: no");

    app.on_key(key('c'));
    app.on_key(key('e'));
    app.on_key(code(KeyCode::Enter));
    let action = app.on_key(key('y')).unwrap();
    assert_eq!(action, Action::Close { reason: CloseReason::Ended, message: None });
    assert_eq!(action.request("e").unwrap().2, Some(json!({"reason": "ended"})));

    app.on_key(key('c'));
    app.on_key(code(KeyCode::Esc));
    assert_eq!(app.mode(), &Mode::Normal);
}

#[test]
fn message_asks_en_then_ko_and_empty_both_clears() {
    let mut app = app_with(&open_status());
    app.on_key(key('m'));
    typed(&mut app, "Hi");
    app.on_key(code(KeyCode::Enter));
    assert!(matches!(app.mode(), Mode::Prompt { kind: PromptKind::MessageKo { .. }, .. }));
    typed(&mut app, "안녕");
    app.on_key(code(KeyCode::Enter));
    let action = app.on_key(key('y')).unwrap();
    assert_eq!(action, Action::SetMessage { en: Some("Hi".into()), ko: Some("안녕".into()) });
    assert_eq!(
        action.request("e").unwrap(),
        (
            Method::PUT,
            "/api/admin/vwr/message/e".into(),
            Some(json!({"message": {"en": "Hi", "ko": "안녕"}}))
        )
    );
    app.on_action_done("set message", &json!({}), T0);

    app.on_key(key('m'));
    app.on_key(code(KeyCode::Enter));
    typed(&mut app, "  ");
    app.on_key(code(KeyCode::Enter));
    let Mode::Confirm { question, .. } = app.mode() else { panic!("{:?}", app.mode()) };
    assert!(question.starts_with("Clear the message"), "{question}");
    let action = app.on_key(key('y')).unwrap();
    assert_eq!(action, Action::SetMessage { en: None, ko: None });
    assert_eq!(action.request("e").unwrap().2, Some(json!({"message": null})));

    // only ko
    app.on_action_done("clear message", &json!({}), T0);
    app.on_key(key('m'));
    app.on_key(code(KeyCode::Enter));
    typed(&mut app, "네");
    app.on_key(code(KeyCode::Enter));
    let action = app.on_key(key('y')).unwrap();
    assert_eq!(action.request("e").unwrap().2, Some(json!({"message": {"ko": "네"}})));
}

#[test]
fn no_second_action_while_one_is_in_flight() {
    let mut app = app_with(&open_status());
    app.on_key(key('r'));
    assert_eq!(app.on_key(key('y')), Some(Action::Resume));
    app.on_key(key('p'));
    assert_eq!(app.mode(), &Mode::Normal);
    assert!(screen(&app, 100, 30).contains("waiting for the answer"));
    let mut answer = open_status();
    answer["state"] = json!("open");
    app.on_action_done("resume", &answer, T0 + 1.0);
    assert!(app.snapshot_text().contains("resume: done: now open"));
    app.on_key(key('p'));
    assert!(matches!(app.mode(), Mode::Prompt { .. }));
}

#[test]
fn action_errors_show_the_api_message() {
    let mut app = app_with(&open_status());
    app.on_action_failed("pause", "409 Conflict: invalid_transition: cannot pause a closed event");
    let s = screen(&app, 120, 30);
    assert!(s.contains("pause failed: 409 Conflict: invalid_transition: cannot pause a closed event"), "{s}");
}

fn counters(issued: u64, admitted: u64, serving: u64) -> Value {
    json!({"state": "open", "issued": issued, "admitted": admitted, "servingCounter": serving,
           "waiting": issued.saturating_sub(serving)})
}

#[test]
fn rates_from_successive_samples() {
    let mut app = App::new("e");
    assert_eq!(app.live(), None);
    app.on_status(&counters(100, 50, 60), T0);
    assert_eq!(app.live(), None, "one sample is no rate");
    // 20 joins/s, 10 admitted/s, 12 served/s for 15 s
    for i in 1..=15u64 {
        app.on_status(&counters(100 + 20 * i, 50 + 10 * i, 60 + 12 * i), T0 + i as f64);
    }
    let live = app.live().unwrap();
    assert!((live.joins_per_second - 20.0).abs() < 1e-9, "{live:?}");
    assert!((live.admitted_per_second - 10.0).abs() < 1e-9, "{live:?}");
    assert!((live.served_per_second - 12.0).abs() < 1e-9, "{live:?}");
    assert!((live.over - 10.0).abs() < 1e-9, "the 10-s window: {live:?}");
    // no servedPerSecond in the status: the wait estimate uses the live served rate
    let wait = app.wait_estimate().unwrap();
    assert!((wait - 160.0 / 12.0).abs() < 1e-9, "{wait}");
    // then the joins stop: the 10-s rate falls, the older samples no longer count
    for i in 16..=30u64 {
        app.on_status(&counters(400, 200 + 10 * (i - 15), 240 + 10 * (i - 15)), T0 + i as f64);
    }
    assert_eq!(app.live().unwrap().joins_per_second, 0.0);
    let joins = rate_series(app.samples(), |s| s.issued);
    assert_eq!(joins.len(), 30);
    assert_eq!(&joins[..15], &[20; 15]);
    assert_eq!(&joins[15..], &[0; 15]);
    let text = app.snapshot_text();
    assert!(text.contains("0.0 (10 s)"), "{text}");
    assert!(text.contains("10.0 (10 s) · served — (60 s)"), "{text}");
}

#[test]
fn history_is_bounded_and_resets_when_counters_go_back() {
    let mut app = App::new("e");
    for i in 0..1000u64 {
        app.on_status(&counters(i, i / 2, i), T0 + i as f64);
    }
    assert!(app.samples().len() <= (HISTORY_SECS + RATE_WINDOW_SECS) as usize + 1);
    app.on_status(&counters(5, 0, 0), T0 + 1000.0);
    assert_eq!(app.samples().len(), 1, "a recreated event starts a new history");
}

#[test]
fn wait_estimate_and_no_show() {
    let app = app_with(&open_status());
    assert_eq!(app.wait_estimate(), Some(20.0));
    let s = app.status().unwrap();
    assert!((s.no_show_share().unwrap() - 0.05).abs() < 1e-12);
    let app = app_with(&json!({"state": "open", "waiting": 10, "servingCounter": 0, "admitted": 0}));
    assert_eq!(app.wait_estimate(), None);
    assert_eq!(app.status().unwrap().no_show_share(), None);
}

#[test]
fn bad_or_partial_answers_do_not_panic_and_keep_the_figures() {
    let mut app = app_with(&open_status());
    for bad in [json!(null), json!([1, 2, 3]), json!("oops"), json!(42)] {
        app.on_status(&bad, T0 + 1.0);
        let text = app.snapshot_text();
        assert!(text.contains("poll failed"), "{text}");
        assert!(text.contains("1200"), "the last figures stay: {text}");
        screen(&app, 100, 30);
    }
    app.on_poll_error("could not reach http://127.0.0.1:1/: connection refused", T0 + 2.0);
    assert!(screen(&app, 120, 30).contains("connection refused"));
    // a good poll clears the poll error
    app.on_status(&open_status(), T0 + 3.0);
    assert!(!app.snapshot_text().contains("poll failed"));

    for partial in [
        json!({}),
        json!({"state": 5, "issued": "many", "message": "not an object", "rates": null, "tier2": []}),
        json!({"issued": -1, "servingCounter": 1.5, "rates": {"servedPerSecond": "x"}, "config": 3}),
        json!({"state": "weird", "message": {"en": 1, "ko": null}, "openAt": "soon", "seed": 7}),
        json!({"active": false}),
        json!({"state": "prequeue", "openAt": 0}),
        json!({"state": "closed", "closeReason": "sold_out", "closeAt": u64::MAX}),
    ] {
        let mut app = App::new("e");
        app.on_status(&partial, T0);
        app.on_tier2(&json!({"threshold": "x", "active": -3}));
        app.on_tier2(&json!(null));
        screen(&app, 100, 30);
        screen(&app, 30, 10);
        let _ = app.snapshot_text();
    }
    let app = app_with(&json!({"active": false}));
    assert_eq!(app.status().unwrap().state(), Some("inactive"));
}

#[test]
fn watch_args_parse() {
    use clap::{CommandFactory, Parser};
    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: WatchArgs,
    }
    Cli::command().debug_assert();
    let cli = Cli::try_parse_from(["vwr", "sale1", "--interval", "500ms", "--once"]).unwrap();
    assert_eq!(cli.args.event_id, "sale1");
    assert_eq!(cli.args.interval, Duration::from_millis(500));
    assert!(cli.args.once);
    let cli = Cli::try_parse_from(["vwr", "e"]).unwrap();
    assert_eq!(cli.args.interval, Duration::from_secs(1));
}

#[test]
fn interval_parsing() {
    assert_eq!(parse_interval("1"), Ok(Duration::from_secs(1)));
    assert_eq!(parse_interval("2s"), Ok(Duration::from_secs(2)));
    assert_eq!(parse_interval("500ms"), Ok(Duration::from_millis(500)));
    assert_eq!(parse_interval("0.5"), Ok(Duration::from_millis(500)));
    assert!(parse_interval("0").is_err());
    assert!(parse_interval("fast").is_err());
}

#[test]
fn time_formatting() {
    assert_eq!(fmt_utc(0.0), "1970-01-01 00:00:00Z");
    assert_eq!(fmt_utc(951_782_400.0), "2000-02-29 00:00:00Z");
    assert_eq!(fmt_utc(1_790_000_000.0), "2026-09-21 14:13:20Z");
    assert_eq!(fmt_duration(3723.0), "1h 02m 03s");
    assert_eq!(fmt_duration(59.6), "1m 00s");
    assert_eq!(fmt_duration(-5.0), "0s");
}
