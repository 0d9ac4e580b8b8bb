//! Answers as people read them (docs/cli.md#output): an event's figures as the `vwr watch`
//! snapshot, the audit one line per change, lists as tables, anything else as `key  value`
//! lines; times in UTC and the operator's zone. `--json` prints the API's JSON instead.

use comfy_table::{Cell, Table, presets};
use serde_json::Value;

use vwr_watch::zone;

/// The innermost cause of an error chain, the line a person needs ("Connection refused (os
/// error 111)", "IMDS is disabled…"): the outer ones only say that something failed.
pub fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut last = e;
    while let Some(inner) = last.source() {
        last = inner;
    }
    last.to_string()
}

/// A table with a header, no borders (easy to read and to `grep`).
pub fn table<const N: usize>(header: [&str; N]) -> Table {
    let mut t = Table::new();
    t.load_style(presets::NOTHING);
    t.set_header(header.iter().map(|h| Cell::new(*h)));
    t
}

/// Whether `key` names an instant (unix seconds): `…At`, `…Since`, `at`.
fn is_time_key(key: &str) -> bool {
    key == "at" || key.ends_with("At") || key.ends_with("Since")
}

/// A value in one short line: strings bare, times in both zones, objects as compact JSON.
pub fn scalar(key: &str, v: &Value, short_times: bool) -> String {
    match v {
        Value::Null => "—".to_owned(),
        Value::String(s) => s.clone(),
        Value::Number(n) if is_time_key(key) => match n.as_f64() {
            // 0 is "never" for the figures that use it (lastStepAt).
            Some(t) if t > 0.0 => {
                let secs = t as u64;
                if short_times { zone::short(secs) } else { zone::both(secs) }
            }
            _ => n.to_string(),
        },
        // A rate or a share: three decimals say it (0.0333333… reads 0.033).
        Value::Number(n) if n.is_f64() => n.as_f64().map_or_else(
            || n.to_string(),
            |f| {
                let s = format!("{f:.3}");
                let s = s.trim_end_matches('0').trim_end_matches('.');
                if s.is_empty() || s == "-" { "0".to_owned() } else { s.to_owned() }
            },
        ),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Array(_) | Value::Object(_) => clip(&v.to_string(), 80),
    }
}

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        format!("{}…", s.chars().take(max - 1).collect::<String>())
    }
}

/// `key  value` lines of an object, nested objects as `outer.inner`.
pub fn key_values(v: &Value) -> String {
    let mut rows = Vec::new();
    flatten("", v, &mut rows);
    let width = rows.iter().map(|(k, _)| k.chars().count()).max().unwrap_or(0).min(32);
    rows.iter().map(|(k, v)| format!("{k:<width$}  {v}")).collect::<Vec<_>>().join("\n")
}

fn flatten(prefix: &str, v: &Value, rows: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) => {
            for (k, inner) in m {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                match inner {
                    Value::Object(o) if !o.is_empty() && prefix.split('.').count() < 2 => {
                        flatten(&key, inner, rows)
                    }
                    _ => rows.push((key, scalar(k, inner, false))),
                }
            }
        }
        other => rows.push((prefix.to_owned(), scalar(prefix, other, false))),
    }
}

/// A list of objects as a table: one column per scalar field, in first-seen order.
pub fn list(items: &[Value]) -> String {
    if items.is_empty() {
        return "(none)".to_owned();
    }
    let mut columns: Vec<String> = Vec::new();
    for item in items {
        if let Value::Object(m) = item {
            for (k, v) in m {
                if !v.is_object() && !columns.contains(k) {
                    columns.push(k.clone());
                }
            }
        }
    }
    let mut t = Table::new();
    t.load_style(presets::NOTHING);
    t.set_header(columns.iter().map(Cell::new));
    for item in items {
        t.add_row(
            columns.iter().map(|c| Cell::new(item.get(c).map_or_else(String::new, |v| scalar(c, v, true)))),
        );
    }
    t.to_string()
}

/// The audit trail, one line per change: when, who, what, and each field that changed.
pub fn audit(entries: &[Value]) -> String {
    if entries.is_empty() {
        return "(no changes yet)".to_owned();
    }
    let mut lines = Vec::with_capacity(entries.len());
    for e in entries {
        let at = e.get("at").and_then(Value::as_u64).map_or_else(|| "—".to_owned(), zone::short);
        let actor = e.get("actor").and_then(Value::as_str).unwrap_or("?");
        let action = e.get("action").and_then(Value::as_str).unwrap_or("?");
        let seq = e.get("seq").and_then(Value::as_u64).map_or_else(String::new, |s| format!("#{s} "));
        let changes =
            changes(e.get("before").unwrap_or(&Value::Null), e.get("after").unwrap_or(&Value::Null));
        lines.push(format!("{at}  {seq}{actor}  {action}  {changes}"));
    }
    lines.join("\n")
}

/// `field: old → new; …` for the fields that differ between two states (nested objects by
/// `outer.inner`; a missing field and `null` are the same).
pub fn changes(before: &Value, after: &Value) -> String {
    if !before.is_object() && !after.is_object() {
        return if before == after {
            "no change".to_owned()
        } else {
            format!("{} → {}", brief("", before), brief("", after))
        };
    }
    let (mut b, mut a) = (Vec::new(), Vec::new());
    leaves("", before, &mut b);
    leaves("", after, &mut a);
    let get = |side: &[(String, Value)], k: &str| {
        side.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone()).unwrap_or(Value::Null)
    };
    let mut keys: Vec<&String> = b.iter().chain(a.iter()).map(|(k, _)| k).collect();
    keys.sort();
    keys.dedup();
    let diffs: Vec<String> = keys
        .into_iter()
        .filter_map(|k| {
            let (old, new) = (get(&b, k), get(&a, k));
            let leaf = k.rsplit('.').next().unwrap_or(k);
            (old != new).then(|| format!("{k}: {} → {}", brief(leaf, &old), brief(leaf, &new)))
        })
        .collect();
    if diffs.is_empty() { "no change".to_owned() } else { diffs.join("; ") }
}

/// The fields of a state, nested objects by `outer.inner` (one level).
fn leaves(prefix: &str, v: &Value, out: &mut Vec<(String, Value)>) {
    if let Value::Object(m) = v {
        for (k, inner) in m {
            let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
            if inner.is_object() && prefix.is_empty() {
                leaves(&key, inner, out);
            } else {
                out.push((key, inner.clone()));
            }
        }
    }
}

fn brief(key: &str, v: &Value) -> String {
    let s = scalar(key, v, true);
    clip(&s, 60)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    #[test]
    fn the_audit_is_one_line_per_change_naming_only_what_changed() {
        let trail = json!([
            {"seq": 1, "at": 1_800_000_000u64, "actor": "admin", "action": "activate",
             "before": null, "after": {"state": "open", "config": {"batchSize": 100}}},
            {"seq": 2, "at": 1_800_000_060u64, "actor": "iam:arn:aws:iam::1:user/lead", "action": "pause",
             "before": {"state": "open", "rev": 1, "message": null, "closeAt": null},
             "after": {"state": "paused", "rev": 2, "message": {"en": "Back at 20:15"}}}
        ]);
        let text = audit(trail.as_array().unwrap());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[0].starts_with("2027-01-15 08:00:00Z"), "{text}");
        assert!(
            lines[0].contains("#1 admin  activate  config.batchSize: — → 100; state: — → open"),
            "{text}"
        );
        assert!(
            lines[1].ends_with("pause  message.en: — → Back at 20:15; rev: 1 → 2; state: open → paused"),
            "{text}"
        );
        assert_eq!(audit(&[]), "(no changes yet)");
    }

    #[test]
    fn objects_and_lists_read_as_text_with_times_said() {
        let v = json!({"eventId": "e1", "threshold": 500, "expiresAt": 1_800_000_000u64, "lastStepAt": 0,
                       "rates": {"servedPerSecond": null, "windowSeconds": 60}});
        let text = key_values(&v);
        assert!(text.contains("expiresAt"), "{text}");
        assert!(text.contains("2027-01-15 08:00:00 UTC"), "{text}");
        assert!(
            text.contains("lastStepAt  0") || text.contains("lastStepAt") && text.contains(" 0\n"),
            "{text}"
        );
        assert!(text.contains("rates.windowSeconds"), "{text}");
        let rates =
            key_values(&json!({"admittedPerSecond": 0.033_333_333_333, "share": 0.5, "none": 0.0, "n": 7}));
        let lines: Vec<&str> = rates.lines().collect();
        assert_eq!(
            lines,
            [
                "admittedPerSecond  0.033",
                "n                  7",
                "none               0",
                "share              0.5"
            ]
        );
        let rows = list(&[
            json!({"id": "e1.a", "label": "monitor", "expiresAt": 1_800_000_000u64}),
            json!({"id": "e1.b", "revokedAt": 1_800_000_000u64}),
        ]);
        assert!(rows.lines().next().unwrap().contains("revokedAt"), "{rows}");
        assert_eq!(rows.lines().count(), 3, "{rows}");
    }
}
