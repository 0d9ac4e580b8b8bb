//! The `vwr` command finds its stack one way (docs/cli.md#addressing-a-stack), against the real
//! `vwr dev` binary: the address `vwr dev` records, contexts of the config file, flags after
//! the subcommand, text or `--json` answers, errors that name the URL, times with their zone.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

/// `vwr ARGS` with only the given environment for addressing (the caller's is scrubbed).
fn vwr(dev_dir: &Path, config: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vwr"))
        .args(args)
        .env("VWR_DEV_DIR", dev_dir)
        .env("VWR_CONFIG", config)
        .env("RUST_LOG", "warn")
        .env_remove("VWR_ADMIN_URL")
        .env_remove("VWR_ADMIN_KEY")
        .env_remove("VWR_CONTEXT")
        .env_remove("VWR_TIER2_ADMIN_URL")
        .env_remove("VWR_SIGV4")
        .env_remove("VWR_TZ")
        .output()
        .unwrap()
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "exit {:?}: {}", out.status, String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
async fn a_stack_is_found_by_dev_state_context_and_flags_wherever_they_stand() {
    let server = common::start("addressing", &["--store", "memory"], &[]).await;
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(server.dir.join("dev.json")).unwrap()).unwrap();
    assert_eq!(state["url"], server.base.as_str(), "vwr dev records its address");
    // `--key=…`: a generated key may begin with `-`.
    let key = format!("--key={}", state["adminKey"].as_str().unwrap());
    let config = server.dir.join("config").join("vwr.toml");

    // No flag, no variable, no context: the address and key `vwr dev` recorded.
    let v: Value =
        serde_json::from_str(&ok(&vwr(&server.dir, &config, &["admin", "activate", "e1", "--json"])))
            .unwrap();
    assert_eq!(v["state"], "open");

    // Text by default: the figures, and the audit one line per change.
    let text = ok(&vwr(&server.dir, &config, &["admin", "status", "e1"]));
    assert!(text.contains("state               open"), "{text}");
    let audit = ok(&vwr(&server.dir, &config, &["admin", "audit", "e1"]));
    assert_eq!(audit.lines().count(), 1, "{audit}");
    assert!(audit.contains("activate") && audit.contains("state: — → open"), "{audit}");

    // A context from the config file, used from a directory without `vwr dev`'s state.
    let elsewhere = server.dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    ok(&vwr(&elsewhere, &config, &["context", "set", "local", "--url", &server.base]));
    assert!(std::fs::read_to_string(&config).unwrap().contains("[contexts.local]"));
    let v: Value = serde_json::from_str(&ok(&vwr(
        &elsewhere,
        &config,
        &["admin", "status", "e1", "--context", "local", &key, "--json"],
    )))
    .unwrap();
    assert_eq!(v["eventId"], "e1");
    // The first context is the current one: no --context needed; flags after the subcommand.
    let v: Value =
        serde_json::from_str(&ok(&vwr(&elsewhere, &config, &["admin", "status", "e1", &key, "--json"])))
            .unwrap();
    assert_eq!(v["state"], "open");
    let list = ok(&vwr(&elsewhere, &config, &["context", "list"]));
    assert!(list.lines().any(|l| l.contains('*') && l.contains("local")), "{list}");

    // An address that does not answer is named, with where it came from.
    let out = vwr(&elsewhere, &config, &["admin", "status", "e1", "--url", "http://127.0.0.1:1", &key]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("http://127.0.0.1:1/api/admin/vwr/status/e1") && err.contains("came from --url"),
        "{err}"
    );
    // A wrong key: the URL and the status.
    let out = vwr(&elsewhere, &config, &["admin", "status", "e1", "--key", "wrong-wrong-wrong-wrong"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("{}/api/admin/vwr/status/e1: 401", server.base)), "{err}");
    // An unknown context is bad input: exit 2.
    let out = vwr(&elsewhere, &config, &["admin", "status", "e1", "--context", "prod"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));

    // A Seoul sale at 20:00 KST, a month from now, lands at 11:00 UTC and is said back in both
    // zones.
    let seoul = jiff::tz::TimeZone::get("Asia/Seoul").unwrap();
    let day = jiff::Timestamp::now()
        .checked_add(jiff::SignedDuration::from_hours(24 * 30))
        .unwrap()
        .to_zoned(seoul)
        .date();
    let (pre, open) = (format!("{day}T19:00:00+09:00"), format!("{day}T20:00:00+09:00"));
    let secs = |t: &str| t.parse::<jiff::Timestamp>().unwrap().as_second() as u64;
    let out = vwr(
        &server.dir,
        &config,
        &[
            "--tz",
            "Asia/Seoul",
            "admin",
            "schedule",
            "s1",
            "--prequeue-at",
            &pre,
            "--open-at",
            &open,
            "--json",
        ],
    );
    let v: Value = serde_json::from_str(&ok(&out)).unwrap();
    assert_eq!((v["prequeueAt"].as_u64(), v["openAt"].as_u64()), (Some(secs(&pre)), Some(secs(&open))));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains(&format!("{day} 11:00:00 UTC = {day} 20:00:00 KST (Asia/Seoul)")), "{said}");
    // A time without a zone: exit 2, and nothing scheduled.
    let out = vwr(
        &server.dir,
        &config,
        &["admin", "schedule", "s2", "--prequeue-at", "+1m", "--open-at", &format!("{day} 20:00:00")],
    );
    assert_eq!(out.status.code(), Some(2));
    let out = vwr(&server.dir, &config, &["admin", "status", "s2"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("404"), "{}", String::from_utf8_lossy(&out.stderr));
}
