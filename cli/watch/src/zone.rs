//! Instants as the operator reads them: in UTC and in the operator's zone (`--tz`, an IANA
//! name; the machine's by default), so a sale set for the wrong hour shows (docs/cli.md#times).

use std::sync::OnceLock;

use jiff::Timestamp;
use jiff::tz::TimeZone;

static ZONE: OnceLock<TimeZone> = OnceLock::new();

/// A `--tz` that names no zone.
#[derive(Debug, thiserror::Error)]
#[error("--tz {name:?}: {source} (give an IANA name such as Asia/Seoul, Europe/Berlin or UTC)")]
pub struct ZoneError {
    pub name: String,
    pub source: jiff::Error,
}

/// The zone named by `--tz`: an IANA name (`Asia/Seoul`, `Europe/Berlin`, `UTC`).
pub fn parse(name: &str) -> Result<TimeZone, ZoneError> {
    TimeZone::get(name.trim()).map_err(|source| ZoneError { name: name.to_owned(), source })
}

/// Sets the operator's zone for this process (once, at start-up).
pub fn set(tz: TimeZone) {
    let _ = ZONE.set(tz);
}

/// The operator's zone: `--tz`, else the machine's (UTC in unit tests, so they read the same
/// on every machine).
pub fn operator() -> TimeZone {
    ZONE.get().cloned().unwrap_or_else(|| if cfg!(test) { TimeZone::UTC } else { TimeZone::system() })
}

fn timestamp(t: u64) -> Option<Timestamp> {
    i64::try_from(t).ok().and_then(|s| Timestamp::from_second(s).ok())
}

/// Whether `tz` is UTC (then one zone is said, not two).
fn is_utc(ts: Timestamp, tz: &TimeZone) -> bool {
    matches!(tz.iana_name(), Some("UTC" | "Etc/UTC" | "Etc/Universal" | "Universal" | "Zulu"))
        || (tz.iana_name().is_none() && tz.to_offset(ts) == jiff::tz::Offset::UTC)
}

/// `t` (unix seconds) in UTC and in the operator's zone, e.g. `2026-12-01 11:00:00 UTC =
/// 2026-12-01 20:00:00 KST (Asia/Seoul)`.
pub fn both(t: u64) -> String {
    both_in(t, &operator())
}

/// [`both`] in the zone `tz`.
pub fn both_in(t: u64, tz: &TimeZone) -> String {
    let Some(ts) = timestamp(t) else {
        return format!("{t} (unix seconds)");
    };
    let utc = ts.strftime("%Y-%m-%d %H:%M:%S UTC").to_string();
    if is_utc(ts, tz) {
        return utc;
    }
    let local = ts.to_zoned(tz.clone()).strftime("%Y-%m-%d %H:%M:%S %Z").to_string();
    match tz.iana_name() {
        Some(name) => format!("{utc} = {local} ({name})"),
        None => format!("{utc} = {local}"),
    }
}

/// The short form for lines of a list: `2026-12-01 11:00:05Z (20:00:05 KST)`.
pub fn short(t: u64) -> String {
    short_in(t, &operator())
}

/// [`short`] in the zone `tz`.
pub fn short_in(t: u64, tz: &TimeZone) -> String {
    let Some(ts) = timestamp(t) else {
        return t.to_string();
    };
    let utc = ts.strftime("%Y-%m-%d %H:%M:%SZ").to_string();
    if is_utc(ts, tz) {
        return utc;
    }
    let zoned = ts.to_zoned(tz.clone());
    let day = if zoned.date() == ts.to_zoned(TimeZone::UTC).date() { "" } else { "%Y-%m-%d " };
    format!("{utc} ({})", zoned.strftime(&format!("{day}%H:%M:%S %Z")))
}

/// The time of day for a countdown: `11:00:00Z (20:00:00 KST)`.
pub fn clock(t: u64) -> String {
    let Some(ts) = timestamp(t) else {
        return t.to_string();
    };
    let tz = operator();
    let utc = ts.strftime("%H:%M:%SZ").to_string();
    if is_utc(ts, &tz) { utc } else { format!("{utc} ({})", ts.to_zoned(tz).strftime("%H:%M:%S %Z")) }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn an_instant_is_said_in_utc_and_in_the_operators_zone() {
        let seoul = parse("Asia/Seoul").unwrap();
        // 2027-01-15 08:00:00 UTC is 17:00 in Seoul.
        assert_eq!(
            both_in(1_800_000_000, &seoul),
            "2027-01-15 08:00:00 UTC = 2027-01-15 17:00:00 KST (Asia/Seoul)"
        );
        assert_eq!(both_in(1_800_000_000, &TimeZone::UTC), "2027-01-15 08:00:00 UTC");
        assert_eq!(short_in(1_800_000_000, &seoul), "2027-01-15 08:00:00Z (17:00:00 KST)");
        let la = parse("America/Los_Angeles").unwrap();
        assert_eq!(short_in(1_800_000_000, &la), "2027-01-15 08:00:00Z (00:00:00 PST)");
        let honolulu = parse("Pacific/Honolulu").unwrap();
        assert_eq!(short_in(1_800_000_000, &honolulu), "2027-01-15 08:00:00Z (2027-01-14 22:00:00 HST)");
        assert!(parse("Mars/Olympus").unwrap_err().to_string().contains("IANA name"));
    }
}
