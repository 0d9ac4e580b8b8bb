//! The waiting page of an event in the site's colours and words (docs/brand.md): what
//! `PUT /api/admin/vwr/page/{eventId}` sets and `GET /vwr/page/{eventId}` answers. Checked
//! here, before anything is stored: https links only, bounded text, and colours a buyer can
//! read (WCAG 2.x AA contrast).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The languages the page speaks (`static/assets/i18n/`).
pub const PAGE_LANGUAGES: [&str; 5] = ["en", "ko", "ja", "zh-Hans", "zh-Hant"];
/// Longest title, in characters.
pub const MAX_PAGE_TITLE_CHARS: usize = 80;
/// Longest message, in characters.
pub const MAX_PAGE_MESSAGE_CHARS: usize = 300;
/// Longest URL, in characters.
pub const MAX_PAGE_URL_CHARS: usize = 512;
/// WCAG 2.x AA: text on its background (1.4.3, normal text).
pub const MIN_TEXT_CONTRAST: f64 = 4.5;
/// WCAG 2.x AA: the accent (buttons, the progress bar, focus rings) against the background
/// (1.4.11, non-text contrast).
pub const MIN_ACCENT_CONTRAST: f64 = 3.0;

/// The page's colours, `#rrggbb` each.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageColors {
    pub accent: String,
    pub background: String,
    pub text: String,
}

/// Where the page links to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageLinks {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terms: Option<String>,
}

/// An event's page settings, as set and as served.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PageSettings {
    /// Language → title.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub title: BTreeMap<String, String>,
    /// Language → message.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub message: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logo_url: Option<String>,
    #[serde(
        default,
        deserialize_with = "vwr_core::http::opt_object",
        skip_serializing_if = "Option::is_none"
    )]
    pub colors: Option<PageColors>,
    #[serde(
        default,
        deserialize_with = "vwr_core::http::opt_object",
        skip_serializing_if = "Option::is_none"
    )]
    pub links: Option<PageLinks>,
    /// The languages offered, in this order; empty: all of [`PAGE_LANGUAGES`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub languages: Vec<String>,
    /// Shown when the browser's languages match none offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_language: Option<String>,
}

/// Why page settings are refused (400 `invalid_page`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageError {
    #[error("{field}: {lang:?} is not a language of the page ({langs})", langs = PAGE_LANGUAGES.join(", "))]
    UnknownLanguage { field: &'static str, lang: String },
    #[error("{field}: at most {max} characters of plain text, not empty")]
    BadText { field: String, max: usize },
    #[error(
        "{field} must be an https:// URL of at most {MAX_PAGE_URL_CHARS} characters, its host in ASCII (xn-- for other scripts) with no user@ before it, without spaces or quotes"
    )]
    NotHttps { field: &'static str },
    #[error("colors.{field} must be #rrggbb")]
    BadColor { field: &'static str },
    /// `ratio`: the contrast found, written with two decimals.
    #[error("colors: {what} contrast is {ratio}:1, below WCAG AA ({min}:1): pick a darker or lighter colour")]
    LowContrast { what: &'static str, ratio: String, min: &'static str },
    #[error("languages: each at most once, at least one")]
    BadLanguages,
    #[error("defaultLanguage must be one of languages")]
    BadDefault,
}

fn check_lang(field: &'static str, lang: &str) -> Result<(), PageError> {
    if PAGE_LANGUAGES.contains(&lang) {
        Ok(())
    } else {
        Err(PageError::UnknownLanguage { field, lang: lang.into() })
    }
}

fn check_text(field: String, text: &str, max: usize) -> Result<(), PageError> {
    let n = text.chars().count();
    if n == 0 || n > max || !super::text::is_plain(text, true) {
        return Err(PageError::BadText { field, max });
    }
    Ok(())
}

/// An `https://` URL with a host, no whitespace, quotes or angle brackets (it goes into an
/// attribute and a CSS-free `<img src>`). The host is ASCII letters, digits, dots and hyphens
/// with an optional port: no `user@` before it (`https://cdn.example.com@evil.example/` goes
/// to evil.example) and no look-alike letters from another script (an internationalised name
/// is written in its `xn--` form).
fn check_url(field: &'static str, url: &str) -> Result<(), PageError> {
    let rest = url.strip_prefix("https://").ok_or(PageError::NotHttps { field })?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let (host, port) = authority.split_once(':').unwrap_or((authority, "80"));
    let host_ok = !host.is_empty()
        && host.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        && !host.starts_with(['.', '-'])
        && !port.is_empty()
        && port.len() <= 5
        && port.chars().all(|c| c.is_ascii_digit());
    let clean = !url.chars().any(|c| c.is_whitespace() || c.is_control() || "\"'<>\\`".contains(c))
        && super::text::is_plain(url, false);
    if !host_ok || !clean || url.chars().count() > MAX_PAGE_URL_CHARS {
        return Err(PageError::NotHttps { field });
    }
    Ok(())
}

/// `#rrggbb` as [r, g, b].
fn rgb(field: &'static str, c: &str) -> Result<[u8; 3], PageError> {
    let hex = c.strip_prefix('#').filter(|h| h.len() == 6).ok_or(PageError::BadColor { field })?;
    let byte = |i: usize| {
        u8::from_str_radix(hex.get(i..i + 2).unwrap_or("zz"), 16).map_err(|_| PageError::BadColor { field })
    };
    Ok([byte(0)?, byte(2)?, byte(4)?])
}

/// WCAG 2.x relative luminance of an sRGB colour.
fn luminance([r, g, b]: [u8; 3]) -> f64 {
    let lin = |c: u8| {
        let c = f64::from(c) / 255.0;
        if c <= 0.039_28 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) }
    };
    0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
}

/// WCAG 2.x contrast ratio of two colours, 1 to 21.
pub fn contrast(a: [u8; 3], b: [u8; 3]) -> f64 {
    let (la, lb) = (luminance(a), luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

/// `a` moved `p` % of the way to `b`, per channel, rounded as the page rounds
/// (`static/assets/brand.js` `mix`).
fn mix(a: [u8; 3], b: [u8; 3], p: u16) -> [u8; 3] {
    let ch = |i: usize| {
        let v = (u16::from(a[i]) * (100 - p) + u16::from(b[i]) * p + 50) / 100;
        u8::try_from(v).unwrap_or(u8::MAX)
    };
    [ch(0), ch(1), ch(2)]
}

/// A pair of colours the page draws: what, foreground, background, the least contrast, and
/// that least contrast as the error shows it.
type DrawnPair = (&'static str, [u8; 3], [u8; 3], f64, &'static str);

/// Every colour the waiting page draws for an event's colours, in both colour schemes
/// (docs/brand.md#colours): the same derivation as `static/assets/brand.js` `palette`, checked
/// against shared vectors (`static/test/palette-vectors.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Palette {
    pub bg: [u8; 3],
    pub card: [u8; 3],
    pub text: [u8; 3],
    pub muted: [u8; 3],
    pub track: [u8; 3],
    pub accent: [u8; 3],
    pub link: [u8; 3],
    /// `color-scheme` of the page: dark when the background is darker than the text.
    pub dark: bool,
}

impl Palette {
    /// The palette of `c`: the card is the background; muted text 30 % of the way to the
    /// background, or the text where that reads below 4.5:1; the track (bar and banner) 12, 8
    /// or 4 % of the way to the text, the first where the text keeps 4.5:1 and the accent 3:1,
    /// else the background; links in the accent at 4.5:1, else in the text.
    pub fn of(c: &PageColors) -> Result<Palette, PageError> {
        let (accent, bg, text) =
            (rgb("accent", &c.accent)?, rgb("background", &c.background)?, rgb("text", &c.text)?);
        let mut muted = mix(text, bg, 30);
        if contrast(muted, bg) < MIN_TEXT_CONTRAST {
            muted = text;
        }
        let track = [12, 8, 4]
            .into_iter()
            .map(|p| mix(bg, text, p))
            .find(|t| contrast(text, *t) >= MIN_TEXT_CONTRAST && contrast(accent, *t) >= MIN_ACCENT_CONTRAST)
            .unwrap_or(bg);
        let link = if contrast(accent, bg) >= MIN_TEXT_CONTRAST { accent } else { text };
        Ok(Palette { bg, card: bg, text, muted, track, accent, link, dark: luminance(bg) < luminance(text) })
    }

    /// Each pair the page draws: what, foreground, background, the least contrast, as shown.
    fn pairs(&self) -> [DrawnPair; 7] {
        [
            ("text on background", self.text, self.bg, MIN_TEXT_CONTRAST, "4.5"),
            ("accent on background", self.accent, self.bg, MIN_ACCENT_CONTRAST, "3"),
            ("text on the card", self.text, self.card, MIN_TEXT_CONTRAST, "4.5"),
            ("muted text on the card", self.muted, self.card, MIN_TEXT_CONTRAST, "4.5"),
            ("links on the card", self.link, self.card, MIN_TEXT_CONTRAST, "4.5"),
            ("text on the banner", self.text, self.track, MIN_TEXT_CONTRAST, "4.5"),
            ("progress bar on its track", self.accent, self.track, MIN_ACCENT_CONTRAST, "3"),
        ]
    }
}

impl PageSettings {
    /// Checks every field (docs/brand.md); the first problem found.
    pub fn validate(&self) -> Result<(), PageError> {
        for (field, map, max) in
            [("title", &self.title, MAX_PAGE_TITLE_CHARS), ("message", &self.message, MAX_PAGE_MESSAGE_CHARS)]
        {
            for (lang, text) in map {
                check_lang(field, lang)?;
                check_text(format!("{field}.{lang}"), text, max)?;
            }
        }
        if let Some(u) = &self.logo_url {
            check_url("logoUrl", u)?;
        }
        if let Some(l) = &self.links {
            if let Some(u) = &l.help {
                check_url("links.help", u)?;
            }
            if let Some(u) = &l.terms {
                check_url("links.terms", u)?;
            }
        }
        if let Some(c) = &self.colors {
            // Every pair as drawn, in both colour schemes (the palette replaces both).
            for (what, a, b, min, shown) in Palette::of(c)?.pairs() {
                let ratio = contrast(a, b);
                if ratio < min {
                    return Err(PageError::LowContrast { what, ratio: format!("{ratio:.2}"), min: shown });
                }
            }
        }
        for (i, l) in self.languages.iter().enumerate() {
            check_lang("languages", l)?;
            if self.languages[..i].contains(l) {
                return Err(PageError::BadLanguages);
            }
        }
        if let Some(d) = &self.default_language {
            check_lang("defaultLanguage", d)?;
            if !self.languages.is_empty() && !self.languages.contains(d) {
                return Err(PageError::BadDefault);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn colors(accent: &str, background: &str, text: &str) -> PageSettings {
        PageSettings {
            colors: Some(PageColors {
                accent: accent.into(),
                background: background.into(),
                text: text.into(),
            }),
            ..Default::default()
        }
    }

    #[test]
    fn contrast_is_the_wcag_ratio() {
        assert!((contrast([0, 0, 0], [255, 255, 255]) - 21.0).abs() < 1e-9);
        assert!((contrast([255, 255, 255], [255, 255, 255]) - 1.0).abs() < 1e-9);
        // #767676 on white is the classic AA edge: 4.54:1.
        let r = contrast([0x76, 0x76, 0x76], [255, 255, 255]);
        assert!((4.53..4.55).contains(&r), "{r}");
    }

    #[test]
    fn low_contrast_is_refused_and_readable_colours_pass() {
        assert_eq!(colors("#0b5fff", "#ffffff", "#1a1a1a").validate(), Ok(()));
        assert_eq!(colors("#0b5fff", "#ffffff", "#767676").validate(), Ok(()));
        assert!(matches!(
            colors("#0b5fff", "#ffffff", "#777777").validate(),
            Err(PageError::LowContrast { what: "text on background", .. })
        ));
        assert!(matches!(
            colors("#ffff00", "#ffffff", "#000000").validate(),
            Err(PageError::LowContrast { what: "accent on background", .. })
        ));
        assert_eq!(
            colors("#0b5fff", "white", "#000000").validate(),
            Err(PageError::BadColor { field: "background" })
        );
        assert_eq!(
            colors("#0b5fff", "#fffffg", "#000000").validate(),
            Err(PageError::BadColor { field: "background" })
        );
    }

    /// `#rrggbb` of a palette colour, as brand.js writes it.
    fn hex([r, g, b]: [u8; 3]) -> String {
        format!("#{r:02x}{g:02x}{b:02x}")
    }

    #[test]
    fn the_palette_is_the_pages_own_derivation() {
        // The vectors brand.js is tested against too (static/test/brand.test.mjs).
        let vectors: serde_json::Value =
            serde_json::from_str(include_str!("../../../../static/test/palette-vectors.json")).unwrap();
        for v in vectors.as_array().unwrap() {
            let c: PageColors = serde_json::from_value(v["colors"].clone()).unwrap();
            let p = Palette::of(&c).unwrap();
            let want = &v["palette"];
            for (name, got) in [
                ("bg", p.bg),
                ("card", p.card),
                ("text", p.text),
                ("muted", p.muted),
                ("track", p.track),
                ("accent", p.accent),
                ("link", p.link),
            ] {
                assert_eq!(hex(got), want[name].as_str().unwrap(), "{name} of {c:?}");
            }
            assert_eq!(if p.dark { "dark" } else { "light" }, want["scheme"], "{c:?}");
        }
    }

    #[test]
    fn a_dark_brand_and_the_docs_example_are_readable_on_every_surface() {
        // The review's two palettes (docs/brand.md's example, a dark brand): before the page
        // drew them on its own card and track, at 1.07:1 and 1.00:1.
        for (accent, bg, text) in [("#0b5fff", "#ffffff", "#1a1a1a"), ("#ffcc00", "#000000", "#ffffff")] {
            let c = PageColors { accent: accent.into(), background: bg.into(), text: text.into() };
            let p = Palette::of(&c).unwrap();
            for (what, a, b, min, _) in p.pairs() {
                assert!(contrast(a, b) >= min, "{what} of {c:?}: {:.2}", contrast(a, b));
            }
        }
    }

    proptest::proptest! {
        /// Whatever three colours pass the check, every pair the page draws is readable.
        #[test]
        fn every_accepted_palette_is_readable_as_drawn(a in proptest::array::uniform3(0u8..), b in proptest::array::uniform3(0u8..), t in proptest::array::uniform3(0u8..)) {
            let c = PageColors { accent: hex(a), background: hex(b), text: hex(t) };
            let settings = PageSettings { colors: Some(c.clone()), ..Default::default() };
            if settings.validate().is_ok() {
                let p = Palette::of(&c).unwrap();
                for (what, fg, bg, min, _) in p.pairs() {
                    proptest::prop_assert!(contrast(fg, bg) >= min, "{} of {:?}", what, c);
                }
                proptest::prop_assert_eq!(p.dark, luminance(b) < luminance(t));
            }
        }
    }

    #[test]
    fn hidden_characters_userinfo_and_lookalike_hosts_are_refused() {
        // The review's findings: each passed the checks before.
        for c in ['\u{202E}', '\u{200B}', '\u{FEFF}', '\u{00AD}', '\u{2028}'] {
            let title = PageSettings {
                title: BTreeMap::from([("en".into(), format!("Tour{c}2026"))]),
                ..Default::default()
            };
            assert!(
                matches!(title.validate(), Err(PageError::BadText { .. })),
                "U+{:04X} in a title",
                u32::from(c)
            );
            let message = PageSettings {
                message: BTreeMap::from([("ko".into(), format!("안내{c}"))]),
                ..Default::default()
            };
            assert!(
                matches!(message.validate(), Err(PageError::BadText { .. })),
                "U+{:04X} in a message",
                u32::from(c)
            );
        }
        let logo = |u: &str| PageSettings { logo_url: Some(u.into()), ..Default::default() }.validate();
        for bad in [
            "https://cdn.example.com@evil.example/logo.png",
            "https://user:pw@cdn.example.com/logo.png",
            "https://cdn.exаmple.com/logo.png",
            "https://例え.jp/logo.png",
            "https://cdn.example.com:/x",
            "https://cdn.example.com:99999999/x",
            "https://.example.com/x",
            "https://cdn.example.com/\u{202E}gnp.exe",
        ] {
            assert_eq!(logo(bad), Err(PageError::NotHttps { field: "logoUrl" }), "{bad}");
        }
        for good in [
            "https://cdn.example.com/logo.png",
            "https://xn--r8jz45g.jp/logo.png",
            "https://cdn.example.com:8443/a?b=c#d",
            "https://cdn.example.com/path/@2x.png",
        ] {
            assert_eq!(logo(good), Ok(()), "{good}");
        }
    }

    #[test]
    fn urls_text_and_languages_are_checked() {
        let ok = PageSettings {
            title: BTreeMap::from([("en".into(), "Concert".into()), ("ja".into(), "コンサート".into())]),
            logo_url: Some("https://cdn.example.com/logo.svg".into()),
            links: Some(PageLinks { help: Some("https://example.com/help".into()), terms: None }),
            languages: vec!["ja".into(), "en".into()],
            default_language: Some("ja".into()),
            ..Default::default()
        };
        assert_eq!(ok.validate(), Ok(()));
        for bad in [
            "http://cdn.example.com/l.png",
            "https://",
            "javascript:alert(1)",
            "https://a.com/x\"onerror=1",
            "https://a b.com/",
        ] {
            let s = PageSettings { logo_url: Some(bad.into()), ..ok.clone() };
            assert_eq!(s.validate(), Err(PageError::NotHttps { field: "logoUrl" }), "{bad}");
        }
        let long = PageSettings { title: BTreeMap::from([("en".into(), "x".repeat(81))]), ..ok.clone() };
        assert!(matches!(long.validate(), Err(PageError::BadText { .. })));
        let fr = PageSettings { message: BTreeMap::from([("fr".into(), "Bonjour".into())]), ..ok.clone() };
        assert!(matches!(fr.validate(), Err(PageError::UnknownLanguage { .. })));
        let twice = PageSettings { languages: vec!["en".into(), "en".into()], ..ok.clone() };
        assert_eq!(twice.validate(), Err(PageError::BadLanguages));
        let default = PageSettings { default_language: Some("ko".into()), ..ok };
        assert_eq!(default.validate(), Err(PageError::BadDefault));
    }
}
