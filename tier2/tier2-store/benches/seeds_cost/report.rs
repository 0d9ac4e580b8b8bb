//! seeds_cost's report: the table, where the time goes, and the JSON.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::json;
use vwr_tier2::model::Touch;

use crate::common::{SCRIPT_COMMANDS, cpu_model, round2};
use crate::measure::{Cost, Stats};
use crate::sides::Set;

fn out_path() -> PathBuf {
    std::env::var("VWR_BENCH_OUT").map(PathBuf::from).unwrap_or_else(|_| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/bench/seeds-cost.json")
    })
}

const PHASES: [(&str, &str); 6] = [
    ("poll", "**poll**: status of a waiting user"),
    ("admission", "**admission**, steps of 500, per admitted user"),
    ("admission_small", "**admission**, steps of 5, per admitted user"),
    ("admission_cleanup", "vwr's deferred cleanup of admitted users' waiting heartbeats, per admitted user"),
    (
        "admission_collect",
        "vwr's judging of its admissions at the collect window (a later step's cleanup), per admitted user",
    ),
    (
        "line",
        "**line document build**: `line(event)`, per call (serves every waiting visitor of the event for a second)",
    ),
];

/// What to print where a side has no figure (the seeds have no line document).
const NONE: &str = "—";

/// What the run was: the heading of the table and the JSON's `config`.
pub struct Run {
    pub mode: String,
    pub waiting_timeout_ms: u64,
    pub touch: Touch,
    pub redis_version: String,
    pub waiting: u64,
    pub line: u64,
    pub ops: u64,
    pub line_calls: u64,
    pub admissions: u64,
    pub small: u64,
    pub rounds: u64,
    pub samples: u64,
    pub conc: usize,
    pub id_len: usize,
    pub rate_buckets: u64,
    pub threshold: u64,
}

/// Prints the table and where the time goes, and writes the JSON.
pub fn report(run: &Run, sets: &[Set], results: &BTreeMap<(&str, &str), Vec<Cost>>) {
    let Run {
        ref mode,
        waiting_timeout_ms,
        touch,
        ref redis_version,
        waiting,
        line,
        ops,
        line_calls,
        admissions,
        small,
        rounds,
        samples,
        conc,
        id_len,
        rate_buckets,
        threshold,
    } = *run;
    let stats = |set: &str, phase: &str| results.get(&(set, phase)).map(|v| Stats::of(v));
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let cpu = cpu_model();
    println!("\nMode of vwr: {mode}.");
    println!(
        "Redis time per operation, vwr against the seeds' scripts: {waiting} waiting ({line} before the admissions), \
         ids of {id_len} chars; Redis {redis_version}; {cpu}, {cores} cores; {rounds} rounds × {samples} samples \
         of {ops} polls / {admissions} + {small} admissions / {line_calls} line documents; {conc} clients. µs/op: script time (INFO commandstats), \
         lowest sample; server CPU: used_cpu_user+sys, lowest sample.\n"
    );
    println!(
        "| operation | seeds µs | vwr µs | vwr ÷ seeds (lowest) | vwr ÷ seeds (medians) | vwr as scripts µs | server CPU seeds | server CPU vwr |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let f1 = |x: Option<f64>| x.map_or(NONE.to_owned(), |x| format!("{x:.1}"));
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}×", a / b),
        _ => NONE.into(),
    };
    let mut table = serde_json::Map::new();
    for (phase, label) in PHASES {
        let (seeds, vwr, scr) = (stats("seeds", phase), stats("vwr", phase), stats("vwr_scripts", phase));
        if seeds.is_none() && vwr.is_none() && scr.is_none() {
            continue; // not run in this mode
        }
        println!(
            "| {label} | {} | {} | {} | {} | {} | {} | {} |",
            f1(seeds.as_ref().map(|s| s.best)),
            f1(vwr.as_ref().map(|s| s.best)),
            ratio(vwr.as_ref().map(|s| s.best), seeds.as_ref().map(|s| s.best)),
            ratio(vwr.as_ref().map(|s| s.median), seeds.as_ref().map(|s| s.median)),
            f1(scr.as_ref().map(|s| s.best)),
            f1(seeds.as_ref().map(|s| s.min_cpu)),
            f1(vwr.as_ref().map(|s| s.min_cpu)),
        );
        let mut entry = serde_json::Map::new();
        entry.insert("label".into(), json!(label));
        for (name, st) in [("seeds", &seeds), ("vwr", &vwr), ("vwr_scripts", &scr)] {
            if let Some(st) = st {
                entry.insert(name.into(), st.json());
            }
        }
        if let (Some(v), Some(sd)) = (&vwr, &seeds) {
            entry.insert("ratio_vwr_over_seeds".into(), json!(round2(v.best / sd.best)));
            entry.insert("ratio_of_medians".into(), json!(round2(v.median / sd.median)));
            entry.insert("ratio_server_cpu".into(), json!(round2(v.min_cpu / sd.min_cpu)));
        }
        table.insert(phase.into(), serde_json::Value::Object(entry));
    }
    // An admission's whole cost on vwr: the step, and what it leaves to later cleanups (lowest
    // samples added, medians added): the judging at the collect window, and with a waiting
    // timeout the admitted users' waiting heartbeats. The seeds leave nothing.
    let deferred: Vec<&str> = ["admission_cleanup", "admission_collect"]
        .into_iter()
        .filter(|p| stats("vwr", p).is_some())
        .collect();
    let what = if deferred.len() == 2 {
        "the collect judging and the heartbeat cleanup"
    } else {
        "the collect judging"
    };
    let mut totals = serde_json::Map::new();
    for (phase, label) in [("admission", "steps of 500"), ("admission_small", "steps of 5")] {
        let with_cleanup = |set: &str| -> Option<(f64, f64)> {
            let a = stats(set, phase)?;
            deferred.iter().try_fold((a.best, a.median), |(b, m), p| {
                let c = stats(set, p)?;
                Some((b + c.best, m + c.median))
            })
        };
        if deferred.is_empty() {
            continue;
        }
        let (Some(sd), Some((v, vm))) = (stats("seeds", phase), with_cleanup("vwr")) else { continue };
        let scr = with_cleanup("vwr_scripts").map(|(s, _)| s);
        println!(
            "| **admission** with vwr's deferred part ({what}), {label} | {:.1} | {v:.1} | {:.2}× | {:.2}× | {} | | |",
            sd.best,
            v / sd.best,
            vm / sd.median,
            f1(scr),
        );
        totals.insert(
            phase.into(),
            json!({ "deferred": deferred, "seeds": round2(sd.best), "vwr": round2(v), "vwr_scripts": scr.map(round2),
                    "ratio_vwr_over_seeds": round2(v / sd.best), "ratio_of_medians": round2(vm / sd.median) }),
        );
    }
    if !totals.is_empty() {
        table.insert("admission_with_cleanup".into(), serde_json::Value::Object(totals));
    }

    // Where the time goes: every command's calls (per script call) and µs (per operation), over
    // all samples; what the script command's µs holds beyond its commands is the call itself and
    // the Lua around the commands.
    println!(
        "\nWhere the time goes, per operation over all samples: script µs = its commands' µs + the call and \
         its Lua; each command as calls per script call / µs per operation:\n"
    );
    for (phase, _) in PHASES {
        for set in sets.iter() {
            let Some(st) = stats(set.name, phase) else { continue };
            let script: (f64, f64) = SCRIPT_COMMANDS
                .iter()
                .filter_map(|n| st.commands.get(*n))
                .fold((0.0, 0.0), |(c, u), (c2, u2)| (c + c2, u + u2));
            let nested: Vec<(&String, &(f64, f64))> =
                st.commands.iter().filter(|(name, _)| !SCRIPT_COMMANDS.contains(&name.as_str())).collect();
            let nested_usec: f64 = nested.iter().map(|(_, (_, u))| u).sum();
            let parts: Vec<String> = nested
                .iter()
                .map(|(name, (calls, usec))| format!("{name} {:.2}/{usec:.2}", calls / script.0.max(1e-9)))
                .collect();
            println!(
                "- {phase} {}: {:.2} = {nested_usec:.2} + {:.2}; {:.3} calls per operation; {}",
                set.name,
                script.1,
                script.1 - nested_usec,
                script.0,
                parts.join(", ")
            );
        }
    }

    let doc = json!({
        "bench": "seeds_cost",
        "machine": { "cpu": cpu, "cores": cores, "redis_version": redis_version },
        "config": {
            "mode": mode, "waiting_timeout_ms": waiting_timeout_ms, "touch": format!("{touch:?}"),
            "line_calls_per_round": line_calls,
            "waiting": waiting, "line": line, "ops_per_round": ops, "admissions_per_round": admissions,
            "small_admissions_per_round": small, "rounds": rounds, "samples_per_round": samples,
            "concurrency": conc, "user_id_len": id_len, "rate_buckets": rate_buckets, "threshold": threshold,
            "fill": "pipelined ZADD of the line and heartbeat sets; the same members on every side, the same heartbeats where the store keeps them (vwr: with a waiting timeout only); heartbeats spread over the last minute, those of the users the rounds admit ten minutes older",
            "figure": "script usec (INFO commandstats evalsha+eval+fcall) per operation (poll, admitted user, line document); lowest and median sample",
        },
        "phases": table,
    });
    let path = out_path();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    println!("\nwritten: {}", path.display());
}
