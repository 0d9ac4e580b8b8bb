//! What counts as plain text in what an operator writes for visitors and staff to read (page
//! titles and messages, the operator's message, pass labels, health reasons): no control
//! characters (a message may break lines) and nothing invisible that changes how the text
//! reads — bidirectional overrides and isolates (U+202E turns "gpj.exe" around), zero-width
//! spaces and marks, the byte-order mark, soft hyphens, line and paragraph separators, Hangul
//! fillers (docs/invariants.md#28). The zero-width joiner and tag characters stay: emoji need
//! them (a family, the flag of Scotland); docs/openapi.yaml's `PlainText` pattern is this list.
//! Written by hand: the list is short and fixed, and a Unicode-properties crate for one
//! predicate would be more code to trust than the ranges below.

/// Invisible or reordering characters refused in plain text, as inclusive ranges.
const HIDDEN: [(char, char); 16] = [
    ('\u{00AD}', '\u{00AD}'),
    ('\u{034F}', '\u{034F}'),
    ('\u{061C}', '\u{061C}'),
    ('\u{115F}', '\u{115F}'),
    ('\u{1160}', '\u{1160}'),
    ('\u{180E}', '\u{180E}'),
    ('\u{200B}', '\u{200B}'),
    ('\u{200C}', '\u{200C}'),
    ('\u{200E}', '\u{200F}'),
    ('\u{2028}', '\u{202E}'),
    ('\u{2060}', '\u{2064}'),
    ('\u{2066}', '\u{206F}'),
    ('\u{3164}', '\u{3164}'),
    ('\u{FEFF}', '\u{FEFF}'),
    ('\u{FFA0}', '\u{FFA0}'),
    ('\u{FFF9}', '\u{FFFB}'),
];

fn hidden(c: char) -> bool {
    HIDDEN.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c))
}

/// `text` holds no control character (but `\n` where `newlines`) and nothing [`hidden`].
pub fn is_plain(text: &str, newlines: bool) -> bool {
    !text.chars().any(|c| (c.is_control() && !(newlines && c == '\n')) || hidden(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invisible_and_reordering_characters_are_not_plain_text() {
        // The review's five, and their kin.
        for c in [
            '\u{202E}', '\u{200B}', '\u{FEFF}', '\u{00AD}', '\u{2028}', '\u{2029}', '\u{2066}', '\u{200F}',
            '\u{3164}', '\u{7}',
        ] {
            assert!(!is_plain(&format!("Sale{c}night"), true), "U+{:04X}", u32::from(c));
        }
        assert!(is_plain("Summer tour 2026 · 여름 투어 · サマーツアー · 夏季巡演", false));
        assert!(is_plain("family 👨\u{200D}👩\u{200D}👧", false), "emoji joiners stay");
        assert!(
            is_plain("\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}", false),
            "a subdivision flag"
        );
        assert!(is_plain("line one\nline two", true));
        assert!(!is_plain("line one\nline two", false));
        assert!(!is_plain("tab\there", true));
    }

    #[test]
    fn the_api_documents_the_same_characters() {
        // docs/openapi.yaml's PlainText patterns name each range, as `\uXXXX` or `\uXXXX-\uYYYY`.
        let doc = include_str!("../../../../docs/openapi.yaml");
        let one_line = "pattern: '^[^\\u0000-\\u001F\\u007F-\\u009F\\u00AD";
        let pattern = doc.lines().find(|l| l.trim_start().starts_with(one_line)).unwrap();
        for (lo, hi) in HIDDEN {
            let part = if lo == hi {
                format!("\\u{:04X}", u32::from(lo))
            } else {
                format!("\\u{:04X}-\\u{:04X}", u32::from(lo), u32::from(hi))
            };
            assert!(pattern.contains(&part), "{part} missing in {pattern}");
        }
    }
}
