//! The Redis keys of tier 2, each shape built here and nowhere else; what each holds, who
//! writes it and how long it lives: docs/data.md.

use vwr_core::EventId;

/// The index of registered events, `vwr:events` (a set of event ids): what the worker steps.
/// The one key outside every event's slot, so no script touches it; the store updates it
/// beside the scripts (register, retire, unregister, and a check that finds its event retired).
pub const EVENTS_KEY: &str = "vwr:events";

/// The suffixes of an event's keys, in the order of `KEYS` in `lua/lib.lua`: every script is
/// given all of them, in this order, and binds them by position.
pub const EVENT_KEY_SUFFIXES: [&str; 13] =
    ["w", "a", "ws", "as", "meta", "jti", "rate", "n", "own", "held", "infl", "gh", "ghd"];

/// The keys of event `e`, `vwr:{e}:{suffix}` for each of [`EVENT_KEY_SUFFIXES`]: the braces make
/// the event id the hash tag, so all of an event's keys are on one Redis Cluster slot and one
/// script may touch them all (docs/invariants.md#8).
pub fn event_keys(e: &EventId) -> [String; 13] {
    EVENT_KEY_SUFFIXES.map(|suffix| format!("vwr:{{{e}}}:{suffix}"))
}

/// Tier 2's report minutes of event `e` in unix day `day` (minute / 1,440),
/// `vwr:{e}:report:{day}`: a hash of `{minute}:{field}` → count, added to by every instance
/// and expiring 90 days after its last addition — one hash a day, so none grows past a day's
/// minutes. Outside [`EVENT_KEY_SUFFIXES`]: no admission script touches it.
pub fn report_key(e: &EventId, day: u64) -> String {
    format!("vwr:{{{e}}}:report:{day}")
}

/// The days of `e` that have a report hash, `vwr:{e}:report:days` (a set, kept as long).
pub fn report_days_key(e: &EventId) -> String {
    format!("vwr:{{{e}}}:report:days")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stored keys never change shape: a new release must find the lines an older one wrote.
    #[test]
    fn keys_keep_their_stored_shape() {
        let e = EventId::parse("sale-1").unwrap();
        assert_eq!(
            event_keys(&e),
            [
                "vwr:{sale-1}:w",
                "vwr:{sale-1}:a",
                "vwr:{sale-1}:ws",
                "vwr:{sale-1}:as",
                "vwr:{sale-1}:meta",
                "vwr:{sale-1}:jti",
                "vwr:{sale-1}:rate",
                "vwr:{sale-1}:n",
                "vwr:{sale-1}:own",
                "vwr:{sale-1}:held",
                "vwr:{sale-1}:infl",
                "vwr:{sale-1}:gh",
                "vwr:{sale-1}:ghd",
            ]
        );
        assert_eq!(EVENTS_KEY, "vwr:events");
        assert_eq!(report_key(&e, 20_500), "vwr:{sale-1}:report:20500");
        assert_eq!(report_days_key(&e), "vwr:{sale-1}:report:days");
    }

    /// The Lua binds as many keys as it is given: one `KEYS[i]` line per key in its header, in
    /// order.
    #[test]
    fn the_lua_header_names_every_key() {
        let lib = include_str!("../../lua/lib.lua");
        let named: Vec<usize> = lib
            .lines()
            .filter_map(|l| l.strip_prefix("--   KEYS[")?.split_once(']')?.0.parse().ok())
            .collect();
        assert_eq!(named, (1..=EVENT_KEY_SUFFIXES.len()).collect::<Vec<_>>());
    }
}
