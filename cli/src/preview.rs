//! `vwr preview {eventId} --out DIR`: screenshots of the waiting page in every state and
//! language (docs/brand.md#previews), from `vwr dev`'s preview mode
//! (`/vwr/{eventId}?preview=STATE&lang=L`) with the local Chromium's own `--screenshot` — no
//! browser driver to install: one headless Chromium per shot, a progress line per shot.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::dev::site::{PREVIEW_STATES, languages};
use vwr_loadtest::client::{ClientError, HttpClient};

/// Where Chromium is looked for when neither `--chromium` nor `VWR_CHROMIUM` says.
const CHROMIUM_NAMES: &[&str] = &["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"];
/// How long one shot may take before its browser is stopped.
const SHOT_TIMEOUT: Duration = Duration::from_secs(20);
/// Virtual time the page runs before the shot: enough for the first answers and the turn.
const SETTLE_MS: u32 = 5_000;

/// Why `vwr preview` (or one shot of it) fails; the message is what `vwr` prints.
#[derive(Debug, thiserror::Error)]
pub enum PreviewError {
    #[error("event id {id:?}: {source}")]
    EventId { id: String, source: vwr_core::ids::EventIdError },
    #[error("--width and --height must be between 100 and 4000")]
    Size,
    /// A state or language the page does not have: what, the name asked, the known ones.
    #[error("unknown {what} {asked:?}: one of {known}")]
    Unknown { what: &'static str, asked: String, known: String },
    #[error("no Chromium at {}", .0.display())]
    NoChromiumAt(PathBuf),
    #[error("no Chromium found ({names} on PATH): install it or pass --chromium", names = CHROMIUM_NAMES.join(", "))]
    NoChromium,
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error("{url} answered {status}: is this vwr dev?")]
    NotDev { url: String, status: http::StatusCode },
    #[error("no vwr dev at {base} ({source}): start `vwr dev` or pass --url")]
    NoDev { base: String, source: ClientError },
    #[error("{}: {source}", path.display())]
    Folder { path: PathBuf, source: std::io::Error },
    #[error("{failed} of {total} shots failed: {names}")]
    ShotsFailed { failed: usize, total: usize, names: String },
    // One shot (printed on its progress line; the run goes on with the next).
    #[error("Chromium took more than {}s", SHOT_TIMEOUT.as_secs())]
    ShotTimeout,
    #[error("could not run {}: {source}", browser.display())]
    Run { browser: PathBuf, source: std::io::Error },
    /// Chromium wrote no picture: its exit status and the last lines it said.
    #[error("no screenshot ({status}): {tail}")]
    NoScreenshot { status: std::process::ExitStatus, tail: String },
}

/// Arguments of `vwr preview`.
#[derive(Debug, clap::Args)]
pub struct PreviewArgs {
    /// The event whose page is shown (its page document, when it has one, is applied).
    pub event_id: String,
    /// Folder for the screenshots (`{state}-{lang}.png`); made if missing.
    #[arg(long)]
    pub out: PathBuf,
    /// `vwr dev`'s address: the global `--url` (docs/cli.md#addressing-a-stack), resolved by
    /// `vwr`.
    #[arg(skip)]
    pub url: String,
    /// States to show, comma-separated (default: all: prequeue, waiting, turn, paused, closed).
    #[arg(long, value_delimiter = ',')]
    pub states: Vec<String>,
    /// Languages, comma-separated (default: all the page speaks).
    #[arg(long, value_delimiter = ',')]
    pub langs: Vec<String>,
    /// The Chromium binary (default: chromium, chromium-browser or google-chrome on PATH).
    #[arg(long, env = "VWR_CHROMIUM")]
    pub chromium: Option<PathBuf>,
    /// Viewport width and height in CSS pixels.
    #[arg(long, default_value_t = 360)]
    pub width: u32,
    #[arg(long, default_value_t = 780)]
    pub height: u32,
    /// Run Chromium without its sandbox (as root, where Chromium refuses its sandbox, this is
    /// done without asking, with a note); the page shown is then not sandboxed, so use it only
    /// with a `vwr dev` you trust.
    #[arg(long)]
    pub no_sandbox: bool,
}

/// The shots of `args`: (state, language), every state in every language, in that order.
pub fn shots(args: &PreviewArgs) -> Result<Vec<(String, String)>, PreviewError> {
    vwr_core::EventId::parse(&args.event_id)
        .map_err(|source| PreviewError::EventId { id: args.event_id.clone(), source })?;
    if !(100..=4000).contains(&args.width) || !(100..=4000).contains(&args.height) {
        return Err(PreviewError::Size);
    }
    let all_langs: Vec<&str> = languages().collect();
    let states = pick(&args.states, PREVIEW_STATES, "state")?;
    let langs = pick(&args.langs, &all_langs, "language")?;
    Ok(states.iter().flat_map(|s| langs.iter().map(move |l| (s.clone(), l.clone()))).collect())
}

fn pick(asked: &[String], known: &[&str], what: &'static str) -> Result<Vec<String>, PreviewError> {
    if asked.is_empty() {
        return Ok(known.iter().map(|s| (*s).to_owned()).collect());
    }
    asked
        .iter()
        .map(|a| {
            if known.contains(&a.as_str()) {
                Ok(a.clone())
            } else {
                Err(PreviewError::Unknown { what, asked: a.clone(), known: known.join(", ") })
            }
        })
        .collect()
}

/// The Chromium to run: the one named, else the first of [`CHROMIUM_NAMES`] on `PATH`.
fn chromium(named: Option<&Path>) -> Result<PathBuf, PreviewError> {
    if let Some(p) = named {
        return if p.is_file() { Ok(p.to_owned()) } else { Err(PreviewError::NoChromiumAt(p.to_owned())) };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .flat_map(|dir| CHROMIUM_NAMES.iter().map(move |n| dir.join(n)))
        .find(|p| p.is_file())
        .ok_or(PreviewError::NoChromium)
}

/// The fontconfig language (`fc-list :lang=…`) whose fonts a page language needs, for the
/// languages written in CJK characters; `None` for the others.
fn cjk_font_lang(lang: &str) -> Option<&'static str> {
    match lang {
        "ja" => Some("ja"),
        "ko" => Some("ko"),
        "zh-Hans" => Some("zh-cn"),
        "zh-Hant" => Some("zh-tw"),
        l if l == "zh" || l.starts_with("zh-") => Some("zh"),
        _ => None,
    }
}

/// What `fc-list :lang=L family` said of one fontconfig language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fonts {
    Installed,
    Missing,
    /// `fc-list` could not be run: fontconfig is not installed (nor, most likely, the fonts).
    NoFcList,
}

/// The stderr warning for shots in CJK languages without a font to draw them (docs/brand.md#previews):
/// Chromium then draws boxes ("tofu") in their place. `fonts` answers for one fontconfig language.
fn cjk_font_warning(shots: &[(String, String)], mut fonts: impl FnMut(&str) -> Fonts) -> Option<String> {
    let mut needed: Vec<(&str, &'static str)> =
        shots.iter().filter_map(|(_, lang)| Some((lang.as_str(), cjk_font_lang(lang)?))).collect();
    needed.sort_unstable();
    needed.dedup();
    let mut missing = Vec::new();
    let mut no_fc_list = false;
    for (lang, fc) in needed {
        match fonts(fc) {
            Fonts::Installed => {}
            Fonts::Missing => missing.push(lang),
            Fonts::NoFcList => {
                no_fc_list = true;
                missing.push(lang);
            }
        }
    }
    if missing.is_empty() {
        return None;
    }
    let why = if no_fc_list {
        "fc-list not found, so no CJK font either"
    } else {
        "fc-list finds no font for them"
    };
    Some(format!(
        "warning: no CJK font installed ({why}): the {} shots will show boxes instead of text. Install one, e.g. on Debian or Ubuntu: apt-get install fonts-noto-cjk",
        missing.join(", ")
    ))
}

/// Asks fontconfig whether a font covers the language (`fc-list :lang=L family`).
fn fc_list(fc_lang: &str) -> Fonts {
    match std::process::Command::new("fc-list").arg(format!(":lang={fc_lang}")).arg("family").output() {
        Ok(out) if out.status.success() && !out.stdout.iter().all(u8::is_ascii_whitespace) => {
            Fonts::Installed
        }
        Ok(_) => Fonts::Missing,
        Err(_) => Fonts::NoFcList,
    }
}

/// The effective user id from the text of `/proc/self/status` (its `Uid:` line: real, effective,
/// saved, filesystem).
fn euid_from_status(status: &str) -> Option<u32> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1)?.parse().ok())
}

/// The effective user id: `/proc/self/status` (Linux), else `id -u`; `None` if neither tells.
fn euid() -> Option<u32> {
    if let Some(id) = std::fs::read_to_string("/proc/self/status").ok().as_deref().and_then(euid_from_status)
    {
        return Some(id);
    }
    let out = std::process::Command::new("id").arg("-u").output().ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// Whether Chromium runs with `--no-sandbox`, and the note to print when vwr decided it: as root
/// Chromium refuses to start with its sandbox (docs/brand.md#previews).
fn sandbox(no_sandbox: bool, euid: Option<u32>) -> (bool, Option<&'static str>) {
    match (no_sandbox, euid) {
        (true, _) => (true, None),
        (false, Some(0)) => (
            true,
            Some(
                "note: running as root, where Chromium will not start with its sandbox: passing it --no-sandbox (the page shown is not sandboxed; use only with a vwr dev you trust)",
            ),
        ),
        (false, _) => (false, None),
    }
}

/// Takes every shot; prints one line per shot. Fails (after trying them all) if any failed.
pub async fn run(args: PreviewArgs) -> Result<(), PreviewError> {
    let shots = shots(&args)?;
    let browser = chromium(args.chromium.as_deref())?;
    let (no_sandbox, note) = sandbox(args.no_sandbox, euid());
    if let Some(note) = note {
        eprintln!("{note}");
    }
    if let Some(warning) = cjk_font_warning(&shots, fc_list) {
        eprintln!("{warning}");
    }
    let base = args.url.trim_end_matches('/').to_owned();
    let client = HttpClient::new(Duration::from_secs(5))?;
    let health = format!("{base}/healthz");
    match client.send(http::Method::GET, &health, None, &vwr_loadtest::client::Auth::None).await {
        Ok(r) if r.status.is_success() => {}
        Ok(r) => return Err(PreviewError::NotDev { url: health, status: r.status }),
        Err(source) => return Err(PreviewError::NoDev { base, source }),
    }
    std::fs::create_dir_all(&args.out)
        .map_err(|source| PreviewError::Folder { path: args.out.clone(), source })?;
    let total = shots.len();
    let mut failed = Vec::new();
    for (i, (state, lang)) in shots.into_iter().enumerate() {
        let file = args.out.join(format!("{state}-{lang}.png"));
        let url = format!("{base}/vwr/{}?preview={state}&lang={lang}", args.event_id);
        let n = i + 1;
        match shoot(&browser, &url, &file, args.width, args.height, no_sandbox).await {
            Ok(bytes) => progress(&format!(
                "[{n}/{total}] {state} {lang} → {} ({} KB)",
                file.display(),
                bytes.div_ceil(1024)
            )),
            Err(e) => {
                progress(&format!("[{n}/{total}] {state} {lang} failed: {e}"));
                failed.push(format!("{state}-{lang}"));
            }
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(PreviewError::ShotsFailed { failed: failed.len(), total, names: failed.join(", ") })
    }
}

/// One progress line on stdout, at once (a closed pipe is not worth failing the shots for).
fn progress(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// One headless Chromium: `url` at `width`×`height`, its virtual clock run [`SETTLE_MS`], into
/// `file`. Answers the file's size.
async fn shoot(
    browser: &Path,
    url: &str,
    file: &Path,
    width: u32,
    height: u32,
    no_sandbox: bool,
) -> Result<u64, PreviewError> {
    // A failed shot must not leave an older picture looking like this one.
    let _ = std::fs::remove_file(file);
    let profile = std::env::temp_dir().join(format!("vwr-preview-{}-{}", std::process::id(), rand_suffix()));
    let mut cmd = tokio::process::Command::new(browser);
    if no_sandbox {
        cmd.arg("--no-sandbox");
    }
    cmd.args([
        "--headless",
        "--disable-gpu",
        "--disable-background-networking",
        "--no-first-run",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .arg(format!("--window-size={width},{height}"))
    .arg(format!("--virtual-time-budget={SETTLE_MS}"))
    .arg(format!("--screenshot={}", file.display()))
    .arg(url)
    .kill_on_drop(true)
    .stdin(std::process::Stdio::null());
    let out = tokio::time::timeout(SHOT_TIMEOUT, cmd.output()).await;
    let _ = std::fs::remove_dir_all(&profile);
    let out = out
        .map_err(|_| PreviewError::ShotTimeout)?
        .map_err(|source| PreviewError::Run { browser: browser.to_owned(), source })?;
    match std::fs::metadata(file) {
        Ok(m) if m.len() > 0 => Ok(m.len()),
        _ => {
            let err = String::from_utf8_lossy(&out.stderr);
            let tail: Vec<&str> = err.lines().rev().take(3).collect();
            let tail = tail.into_iter().rev().collect::<Vec<_>>().join(" | ");
            Err(PreviewError::NoScreenshot { status: out.status, tail })
        }
    }
}

/// A per-shot profile folder name: Chromium refuses two instances on one profile.
fn rand_suffix() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: PreviewArgs,
    }

    fn args(extra: &[&str]) -> PreviewArgs {
        let mut argv = vec!["vwr", "e1", "--out", "shots"];
        argv.extend_from_slice(extra);
        Cli::parse_from(argv).args
    }

    #[test]
    fn every_state_in_every_language_by_default() {
        let all = shots(&args(&[])).unwrap();
        assert_eq!(all.len(), PREVIEW_STATES.len() * languages().count());
        assert_eq!(all[0], ("prequeue".to_owned(), "en".to_owned()));
        assert!(all.contains(&("closed".to_owned(), "zh-Hant".to_owned())));
    }

    #[test]
    fn a_chosen_few_and_clear_refusals() {
        let few = shots(&args(&["--states", "waiting,turn", "--langs", "ja"])).unwrap();
        assert_eq!(few, vec![("waiting".into(), "ja".into()), ("turn".into(), "ja".into())]);
        let e = shots(&args(&["--states", "queued"])).unwrap_err().to_string();
        assert!(e.contains("unknown state \"queued\"") && e.contains("prequeue"), "{e}");
        let e = shots(&args(&["--langs", "fr"])).unwrap_err().to_string();
        assert!(e.contains("unknown language \"fr\""), "{e}");
        let e = shots(&Cli::parse_from(["vwr", "../x", "--out", "o"]).args).unwrap_err().to_string();
        assert!(e.contains("event id"), "{e}");
    }

    fn pairs(langs: &[&str]) -> Vec<(String, String)> {
        langs.iter().flat_map(|l| ["waiting", "turn"].map(|s| (s.to_owned(), (*l).to_owned()))).collect()
    }

    #[test]
    fn cjk_shots_without_a_cjk_font_are_warned_of_once_each() {
        let mut asked = Vec::new();
        let w = cjk_font_warning(&pairs(&["en", "ja", "ko", "zh-Hans", "zh-Hant"]), |l| {
            asked.push(l.to_owned());
            if l == "ko" { Fonts::Installed } else { Fonts::Missing }
        })
        .unwrap();
        assert_eq!(asked, ["ja", "ko", "zh-cn", "zh-tw"], "each CJK language asked once, en never");
        assert!(w.contains("ja, zh-Hans, zh-Hant shots will show boxes"), "{w}");
        assert!(w.contains("apt-get install fonts-noto-cjk"), "{w}");
        assert!(!w.contains("ko"), "{w}");
    }

    #[test]
    fn no_warning_with_fonts_or_without_cjk_shots_and_one_without_fc_list() {
        let all = pairs(&["en", "ja", "ko", "zh-Hans", "zh-Hant"]);
        assert_eq!(cjk_font_warning(&all, |_| Fonts::Installed), None);
        assert_eq!(cjk_font_warning(&pairs(&["en"]), |_| Fonts::NoFcList), None, "latin only: not asked");
        let w = cjk_font_warning(&pairs(&["ja"]), |_| Fonts::NoFcList).unwrap();
        assert!(w.contains("fc-list not found") && w.contains("the ja shots"), "{w}");
    }

    #[test]
    fn root_runs_chromium_without_its_sandbox_and_says_so() {
        assert_eq!(sandbox(false, Some(1000)), (false, None));
        assert_eq!(sandbox(false, None), (false, None), "unknown: as asked");
        assert_eq!(sandbox(true, Some(1000)), (true, None), "asked: no note");
        assert_eq!(sandbox(true, Some(0)), (true, None));
        let (off, note) = sandbox(false, Some(0));
        assert!(off);
        assert!(note.is_some_and(|n| n.contains("root") && n.contains("--no-sandbox")));
    }

    #[test]
    fn the_effective_uid_is_the_second_of_the_uid_line() {
        let status = "Name:\tvwr\nUmask:\t0022\nUid:\t1000\t0\t0\t0\nGid:\t1000\t1000\t1000\t1000\n";
        assert_eq!(euid_from_status(status), Some(0));
        assert_eq!(euid_from_status("Uid:\t1000\t1001\t1000\t1000\n"), Some(1001));
        assert_eq!(euid_from_status("Name:\tx\n"), None);
        assert_eq!(euid_from_status("Uid:\t1000\n"), None);
    }

    #[test]
    fn a_missing_chromium_is_named() {
        let e = chromium(Some(Path::new("/nonexistent/chromium"))).unwrap_err().to_string();
        assert!(e.contains("no Chromium at"), "{e}");
    }
}
