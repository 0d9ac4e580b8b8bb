//! `vwr admin …`: calls the admin API (bearer key locally, SigV4 against AWS).

use std::time::Duration;

use clap::Subcommand;
use http::Method;
use serde_json::{Map, Value, json};

use vwr_loadtest::client::{AdminTarget, Auth, ClientError, HttpClient, NoAdminKey};

/// Why `vwr admin …` (or one of its flags) fails; the message is what `vwr` prints.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    #[error("{input:?}: {source} (try 30m or 2h)")]
    Ttl { input: String, source: humantime::DurationError },
    #[error("{0:?}: expected LANG=TEXT, e.g. ja=まもなく再開します")]
    NotLangText(String),
    #[error("{0:?} is not a language of the page ({langs})", langs = MESSAGE_LANGUAGES.join(", "))]
    NotALanguage(String),
    #[error("the message in {0} is given twice")]
    GivenTwice(String),
    #[error("{input:?}: {source} (try +90s, +10m, +2h)")]
    Relative { input: String, source: humantime::DurationError },
    #[error("{input:?}: {source}")]
    Seconds { input: String, source: std::num::ParseIntError },
    #[error(
        "{input:?}: {source}. Give the zone: 2026-12-01T20:00:00+09:00, 2026-12-01T11:00:00Z, unix seconds or +10m"
    )]
    Zoneless { input: String, source: jiff::Error },
    #[error("{0:?}: before 1970")]
    Before1970(String),
    #[error(transparent)]
    NoAdminKey(#[from] NoAdminKey),
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The stack did not answer: the address and where it came from (`AdminTarget::from`).
    #[error("{source} (the address came from {from})")]
    Unreached { source: ClientError, from: String },
    /// An error answer: "GET URL: 404 Not Found: event_not_found: …" and a hint (docs/api.md#errors).
    #[error("{method} {url}: {answer}")]
    Refused { method: Method, url: String, answer: String },
    #[error("give --ok, or --hold --reason \"…\"")]
    HealthFlags,
    #[error(
        "{waiting} people are waiting in {event_id}: deactivating stops gating, so all {waiting} \
         would reach the site at their next poll. Use `vwr admin close {event_id} --reason ended` \
         to end the sale and keep them out, or pass --force to deactivate anyway."
    )]
    PeopleWaiting { waiting: u64, event_id: String },
    #[error("{}: {source}", path.display())]
    ReadPage { path: std::path::PathBuf, source: std::io::Error },
    #[error("{}: not JSON: {source}", path.display())]
    PageNotJson { path: std::path::PathBuf, source: serde_json::Error },
    #[error("{0:?} is not a pass id: give the id `vwr admin pass create` printed, {{eventId}}.{{passId}}")]
    NotAPassId(String),
    #[error("give the message with --text LANG=TEXT (or --en, --ko), or --clear")]
    NoMessage,
    #[error(
        "console tokens come from `vwr dev` (its admin key), not a deployed stack: there, sign in to \
         the console with the OpenID Connect issuer (docs/console.md)"
    )]
    ConsoleTokenDevOnly,
}

/// Admin operations.
#[derive(Debug, Clone, Subcommand)]
pub enum AdminCommand {
    /// Create or update an event and start gating it (never resets counters).
    Activate {
        event_id: String,
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// Stop gating an event. Refuses while people are waiting, unless --force: they would
    /// all reach the site at their next poll (`close` keeps them out instead).
    Deactivate {
        event_id: String,
        /// Deactivate even though people are waiting.
        #[arg(long)]
        force: bool,
    },
    /// Schedule a sale: the pre-queue opens at --prequeue-at, the randomized open happens at
    /// --open-at. Times are RFC 3339 with their zone (2026-12-01T20:00:00+09:00 or
    /// 2026-12-01T11:00:00Z), unix seconds, or relative (+90s, +10m, +2h); a time without a zone
    /// is refused. They are said back in UTC and in this machine's zone before being sent.
    Schedule {
        event_id: String,
        #[arg(long, value_parser = parse_time)]
        prequeue_at: u64,
        #[arg(long, value_parser = parse_time)]
        open_at: u64,
        #[arg(long, value_parser = parse_time)]
        close_at: Option<u64>,
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// The health gate: --hold stops the advancer (nobody new is let in, everybody keeps
    /// their place) until --ok.
    Health {
        event_id: String,
        /// Let the advancer go on.
        #[arg(long, conflicts_with = "hold")]
        ok: bool,
        /// Hold the advancer.
        #[arg(long, requires = "reason")]
        hold: bool,
        /// Why (shown in the status and the audit trail).
        #[arg(long)]
        reason: Option<String>,
    },
    /// Hold the line: everybody keeps their place, joins continue, nobody new is let in.
    Pause {
        event_id: String,
        #[command(flatten)]
        message: MessageArgs,
    },
    /// Let the line move again after a pause.
    Resume { event_id: String },
    /// End the sale: no more joins or admissions; waiting visitors see the closed page.
    Close {
        event_id: String,
        /// sold_out or ended.
        #[arg(long, value_parser = ["sold_out", "ended"])]
        reason: String,
        #[command(flatten)]
        message: MessageArgs,
    },
    /// Set the message every waiting page shows (or --clear it).
    Message {
        event_id: String,
        #[command(flatten)]
        message: MessageArgs,
        /// Remove the message.
        #[arg(long, conflicts_with_all = ["en", "ko", "text"])]
        clear: bool,
    },
    /// Every admin change of an event: who, when, before and after.
    Audit { event_id: String },
    /// Counters, waiting, admitted and recent rates.
    Status { event_id: String },
    /// Raise the serving counter by N (capped at the highest issued position).
    Advance {
        event_id: String,
        #[arg(long)]
        by: u64,
    },
    /// List active events.
    Events,
    /// Tier 2: set an event's concurrency threshold (registers the event for tier 2).
    Threshold {
        event_id: String,
        /// Most users inside the booking flow at once.
        #[arg(long)]
        threshold: u64,
        /// Line order of a new event: tier1 (by tier-1 position) or arrival.
        #[arg(long)]
        line_order: Option<String>,
    },
    /// Tier 2: waiting, active and admission rate of an event.
    QueueStatus { event_id: String },
    /// Tier 2: remove an event and everyone waiting or active in it.
    QueueRemove { event_id: String },
    /// Keep an event ungated until a CloudWatch alarm fires, then open it in arrival order
    /// (docs/lifecycle.md#standby); --end ends the standby.
    Standby {
        event_id: String,
        /// The CloudWatch alarm whose ALARM state opens the event.
        #[arg(long, required_unless_present = "end")]
        alarm: Option<String>,
        /// End the standby: the event is inactive again.
        #[arg(long, conflicts_with = "alarm")]
        end: bool,
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// The page in the site's colours and words (docs/brand.md): the settings from a JSON
    /// file, or --clear for the default page.
    Page {
        event_id: String,
        /// A JSON file: {title, message, logoUrl, colors, links, languages, defaultLanguage}.
        #[arg(long, required_unless_present = "clear")]
        file: Option<std::path::PathBuf>,
        /// Back to the default page.
        #[arg(long, conflicts_with = "file")]
        clear: bool,
    },
    /// `vwr dev` only: set an alarm's state by hand (what a standby event waits for).
    Alarm {
        name: String,
        /// ALARM or OK.
        #[arg(long, value_parser = ["ALARM", "OK"])]
        state: String,
    },
    /// Passes for staff, monitors and callbacks: through the edge without waiting
    /// (docs/passes.md).
    #[command(subcommand)]
    Pass(PassCommand),
    /// `vwr dev` only: a sign-in token for the console with a role, signed by `vwr dev`'s own
    /// key; prints it and the console address that takes it (docs/console.md#sign-in-locally).
    ConsoleToken {
        /// The role the token gives.
        #[arg(long, value_parser = ["viewer", "operator", "admin"])]
        role: String,
        /// Who it names (the audit's actor); default dev-ROLE.
        #[arg(long)]
        name: Option<String>,
        /// How long it is valid: 30m, 1h, 12h (at most 12 hours).
        #[arg(long, default_value = "1h", value_parser = parse_ttl)]
        ttl: u64,
    },
}

/// `vwr admin pass …`.
#[derive(Debug, Clone, Subcommand)]
pub enum PassCommand {
    /// Mint a pass: prints {id, pass, expiresAt}. The pass is shown once; send it as the
    /// cookie vwr_t1_{eventId}, or as `Authorization: Bearer …` on API paths.
    Create {
        event_id: String,
        /// How long it is valid: 90s, 10m, 2h (from 1 minute to 12 hours).
        #[arg(long, default_value = "1h", value_parser = parse_ttl)]
        ttl: u64,
        /// Who or what it is for (shown in the list and the audit trail).
        #[arg(long)]
        label: String,
    },
    /// Revoke a pass by the id `create` printed ({eventId}.{passId}); the edge refuses it
    /// within seconds.
    Revoke { id: String },
    /// The event's unexpired passes, revoked ones included (never the passes themselves).
    List { event_id: String },
}

/// A pass's life from `90s`, `10m`, `2h`: whole seconds.
fn parse_ttl(s: &str) -> Result<u64, AdminError> {
    humantime::parse_duration(s)
        .map(|d| d.as_secs())
        .map_err(|source| AdminError::Ttl { input: s.to_owned(), source })
}

/// The per-event settings of `activate` and `schedule` (docs/settings.md).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ConfigArgs {
    /// Positions admitted per interval in `fixed` mode (0 = manual advancing only).
    #[arg(long)]
    pub batch_size: Option<u64>,
    /// Seconds between advancer steps.
    #[arg(long)]
    pub interval_seconds: Option<u64>,
    /// Counter shards (fixed once the event exists).
    #[arg(long)]
    pub shards: Option<u32>,
    /// Lifetime of tier-1 tokens in seconds.
    #[arg(long)]
    pub token_ttl_seconds: Option<u64>,
    /// fixed (batchSize per interval) or targetArrivals (redeemed arrivals per minute).
    #[arg(long, value_parser = ["fixed", "targetArrivals", "target-arrivals"])]
    pub mode: Option<String>,
    /// targetArrivals: redeemed admissions per minute to aim at.
    #[arg(long)]
    pub target_per_minute: Option<u64>,
    /// targetArrivals: the most positions one step serves.
    #[arg(long)]
    pub max_batch_size: Option<u64>,
    /// Re-admission after a token expired, within this many seconds.
    #[arg(long)]
    pub reentry_grace_seconds: Option<u64>,
    /// No token of an admission runs past its first admission + this.
    #[arg(long)]
    pub max_session_seconds: Option<u64>,
    /// Proof of work on `assign`: leading zero bits of SHA-256 (0 = off, at most 28).
    #[arg(long)]
    pub pow_difficulty: Option<u32>,
    /// One place per account: `assign` needs the site's signed enqueue token.
    #[arg(long)]
    pub enqueue_token_required: Option<bool>,
}

impl ConfigArgs {
    /// Adds the given fields to `m` (camelCase, as the API takes them).
    pub fn put_into(&self, m: &mut Map<String, Value>) {
        let mut put = |k: &str, v: Option<u64>| {
            if let Some(v) = v {
                m.insert(k.into(), json!(v));
            }
        };
        put("batchSize", self.batch_size);
        put("intervalSeconds", self.interval_seconds);
        put("shards", self.shards.map(u64::from));
        put("tokenTtlSeconds", self.token_ttl_seconds);
        put("targetArrivalsPerMinute", self.target_per_minute);
        put("maxBatchSize", self.max_batch_size);
        put("reentryGraceSeconds", self.reentry_grace_seconds);
        put("maxSessionSeconds", self.max_session_seconds);
        put("powDifficulty", self.pow_difficulty.map(u64::from));
        if let Some(required) = self.enqueue_token_required {
            m.insert("enqueueTokenRequired".into(), json!(required));
        }
        if let Some(mode) = &self.mode {
            let mode = if mode == "target-arrivals" { "targetArrivals" } else { mode.as_str() };
            m.insert("mode".into(), json!(mode));
        }
    }
}

/// The languages of the waiting page, and so of the operator's message (docs/lifecycle.md).
pub const MESSAGE_LANGUAGES: [&str; 5] = ["en", "ko", "ja", "zh-Hans", "zh-Hant"];

/// A message to the visitors, per language: `--text LANG=TEXT` for any language of the page,
/// `--en` and `--ko` as shorthands.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct MessageArgs {
    /// The message in one language, LANG=TEXT (en, ko, ja, zh-Hans, zh-Hant); repeat it for
    /// more, e.g. --text en="Back soon" --text ja="まもなく再開します".
    #[arg(long = "text", value_name = "LANG=TEXT", value_parser = parse_text)]
    pub text: Vec<(String, String)>,
    /// The message in English (as --text en=…).
    #[arg(long)]
    pub en: Option<String>,
    /// The message in Korean (as --text ko=…).
    #[arg(long)]
    pub ko: Option<String>,
}

/// `LANG=TEXT` with LANG a language of the page.
fn parse_text(s: &str) -> Result<(String, String), AdminError> {
    let (lang, text) = s.split_once('=').ok_or_else(|| AdminError::NotLangText(s.to_owned()))?;
    let lang = MESSAGE_LANGUAGES
        .iter()
        .find(|l| l.eq_ignore_ascii_case(lang.trim()))
        .ok_or_else(|| AdminError::NotALanguage(lang.to_owned()))?;
    Ok(((*lang).to_owned(), text.to_owned()))
}

impl MessageArgs {
    /// The message as the API takes it (`{en?, ko?, ja?, zh-Hans?, zh-Hant?}`), `Ok(None)` when
    /// no language is given; a language given twice is an error.
    pub fn to_json(&self) -> Result<Option<Value>, AdminError> {
        let mut m = Map::new();
        let given = self.text.iter().cloned().chain(self.en.iter().map(|t| ("en".to_owned(), t.clone())));
        for (lang, text) in given.chain(self.ko.iter().map(|t| ("ko".to_owned(), t.clone()))) {
            if m.insert(lang.clone(), json!(text)).is_some() {
                return Err(AdminError::GivenTwice(lang));
            }
        }
        Ok((!m.is_empty()).then_some(Value::Object(m)))
    }
}

/// Parses a time: unix seconds, RFC 3339 with its offset (`…Z` or `…+09:00`), or
/// `+N[s|m|h|d]` from now; a time without a zone is refused.
pub fn parse_time(s: &str) -> Result<u64, AdminError> {
    parse_time_at(s, vwr_core::time::now_secs())
}

fn parse_time_at(s: &str, now: u64) -> Result<u64, AdminError> {
    let s = s.trim();
    if let Some(rel) = s.strip_prefix('+') {
        let d = humantime::parse_duration(rel)
            .map_err(|source| AdminError::Relative { input: s.to_owned(), source })?;
        return Ok(now + d.as_secs());
    }
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse().map_err(|source| AdminError::Seconds { input: s.to_owned(), source });
    }
    // RFC 3339 with its offset (jiff: a kept parser; humantime read `2026-12-01 20:00:00` as
    // UTC and refused `+09:00`, so a Seoul sale would have opened nine hours late). A time
    // without an offset is refused: it would be read in some zone the operator did not choose.
    let t: jiff::Timestamp =
        s.parse().map_err(|source| AdminError::Zoneless { input: s.to_owned(), source })?;
    u64::try_from(t.as_second()).map_err(|_| AdminError::Before1970(s.to_owned()))
}

/// One call; an error names the method, the URL and what answered (docs/api.md#errors).
pub async fn request(
    client: &HttpClient,
    auth: &Auth,
    url: &str,
    method: Method,
    body: Option<&Value>,
) -> Result<Value, AdminError> {
    let reply = client.send(method.clone(), url, body, auth).await?;
    let json = reply.json();
    if reply.status.is_success() {
        return Ok(if json.is_null() { json!({"status": reply.status.as_u16()}) } else { json });
    }
    let what = match (json.get("error").and_then(Value::as_str), json.get("message").and_then(Value::as_str))
    {
        (Some(c), Some(m)) => format!("{c}: {m}"),
        (Some(c), None) => c.to_owned(),
        (None, Some(m)) => m.to_owned(),
        (None, None) => String::from_utf8_lossy(&reply.body).trim().chars().take(300).collect(),
    };
    let hint = match reply.status.as_u16() {
        401 => " (wrong or missing admin key for this URL?)",
        403 => " (not allowed: with --sigv4 the caller needs execute-api:Invoke on the admin API)",
        404 if json.get("error").is_none() => " (no vwr admin API at this URL?)",
        _ => "",
    };
    let answer = format!("{}{}{what}{hint}", reply.status, if what.is_empty() { "" } else { ": " });
    Err(AdminError::Refused { method, url: url.to_owned(), answer })
}

/// Runs one admin command; answers the text to print (the JSON with `json`, else the human
/// form, docs/cli.md#output); `Err` carries the message to show.
pub async fn run(target: AdminTarget, cmd: AdminCommand, json: bool) -> Result<String, AdminError> {
    let shown = cmd.clone();
    let answer = call(&target, cmd).await.map_err(|e| match e {
        AdminError::Client(source @ (ClientError::Connect { .. } | ClientError::Timeout(_))) => {
            AdminError::Unreached { source, from: target.from.clone() }
        }
        e => e,
    })?;
    Ok(if json { serde_json::to_string_pretty(&answer).unwrap_or_default() } else { human(&shown, &answer) })
}

/// The human form of a command's answer.
fn human(cmd: &AdminCommand, v: &Value) -> String {
    use crate::human::{audit, key_values, list};
    let event_figures = |v: &Value| {
        let id = v.get("eventId").and_then(Value::as_str).unwrap_or("?");
        let mut app = vwr_watch::App::new(id);
        app.on_status(v, vwr_core::time::now_secs() as f64);
        format!("event {id}\n{}", app.figures_text())
    };
    match cmd {
        AdminCommand::Audit { .. } => {
            let entries = v.get("entries").or(Some(v)).and_then(Value::as_array);
            audit(entries.map_or(&[][..], Vec::as_slice))
        }
        AdminCommand::Events => {
            let list_of = |k: &str| -> String {
                let ids: Vec<&str> = v
                    .get(k)
                    .and_then(Value::as_array)
                    .map_or_else(Vec::new, |a| a.iter().filter_map(Value::as_str).collect());
                if ids.is_empty() { "—".to_owned() } else { ids.join(", ") }
            };
            let revoked = v.get("revoked").and_then(Value::as_object).map_or(0, serde_json::Map::len);
            format!("active  {}\ngated   {}\nrevoked passes  {revoked}", list_of("events"), list_of("gated"))
        }
        AdminCommand::QueueRemove { event_id } => {
            format!("{event_id}: removed from tier 2 (everyone waiting or active in it)")
        }
        AdminCommand::Pass(PassCommand::Revoke { id }) if v.get("status").is_some() => {
            format!("{id}: revoked")
        }
        AdminCommand::Pass(PassCommand::Create { .. }) => {
            format!("{}\n(the pass is shown once: keep it now)", key_values(v))
        }
        AdminCommand::ConsoleToken { .. } => {
            let text = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default();
            let until =
                v.get("expiresAt").and_then(Value::as_u64).map(vwr_watch::zone::both).unwrap_or_default();
            format!(
                "console token for {} ({}), valid until {until}:\n{}\n\nopen the console with it:\n{}",
                text("name"),
                text("role"),
                text("token"),
                text("url")
            )
        }
        _ if v.get("eventId").is_some() && v.get("state").is_some() && v.get("servingCounter").is_some() => {
            event_figures(v)
        }
        _ => match v {
            Value::Array(items) => list(items),
            // `{eventId, passes: [...]}`: the other fields, then the list as a table.
            Value::Object(m) if m.values().filter(|x| x.is_array()).count() == 1 => {
                let (rest, items): (serde_json::Map<String, Value>, serde_json::Map<String, Value>) =
                    m.clone().into_iter().partition(|(_, x)| !x.is_array());
                let table =
                    items.values().next().and_then(Value::as_array).map_or_else(String::new, |a| list(a));
                if rest.is_empty() {
                    table
                } else {
                    format!("{}\n\n{table}", key_values(&Value::Object(rest)))
                }
            }
            Value::Object(m) if m.len() == 1 && m.contains_key("status") => "done".to_owned(),
            other => key_values(other),
        },
    }
}

/// One admin call; the API's JSON answer.
async fn call(target: &AdminTarget, cmd: AdminCommand) -> Result<Value, AdminError> {
    let auth = target.auth().await?;
    let client = HttpClient::new(Duration::from_secs(30))?;
    let base = target.url.trim_end_matches('/');
    let tier2 = target.tier2_base();
    let (method, path, body) = match cmd {
        AdminCommand::Activate { event_id, config } => {
            let mut m = Map::new();
            config.put_into(&mut m);
            (Method::POST, format!("/api/admin/vwr/activate/{event_id}"), Some(Value::Object(m)))
        }
        AdminCommand::Health { event_id, ok, hold, reason } => {
            if ok == hold {
                return Err(AdminError::HealthFlags);
            }
            let mut body = json!({ "ok": ok });
            if let Some(r) = reason {
                body["reason"] = json!(r);
            }
            (Method::PUT, format!("/api/admin/vwr/health/{event_id}"), Some(body))
        }
        AdminCommand::Deactivate { event_id, force } => {
            if !force {
                let url = format!("{base}/api/admin/vwr/status/{event_id}");
                let st = request(&client, &auth, &url, Method::GET, None).await?;
                let waiting = st["waiting"].as_u64().unwrap_or(0);
                if waiting > 0 {
                    return Err(AdminError::PeopleWaiting { waiting, event_id });
                }
            }
            (Method::POST, format!("/api/admin/vwr/deactivate/{event_id}"), None)
        }
        AdminCommand::Schedule { event_id, prequeue_at, open_at, close_at, config } => {
            // Said back before it is sent, in UTC and in this machine's zone: a wrong hour shows.
            for (what, t) in [("pre-queue", Some(prequeue_at)), ("open", Some(open_at)), ("close", close_at)]
            {
                if let Some(t) = t {
                    eprintln!("{what:>9}: {}", vwr_watch::zone::both(t));
                }
            }
            let mut m = Map::new();
            m.insert("prequeueAt".into(), json!(prequeue_at));
            m.insert("openAt".into(), json!(open_at));
            if let Some(c) = close_at {
                m.insert("closeAt".into(), json!(c));
            }
            config.put_into(&mut m);
            (Method::PUT, format!("/api/admin/vwr/schedule/{event_id}"), Some(Value::Object(m)))
        }
        AdminCommand::Pause { event_id, message } => {
            let body = match message.to_json()? {
                Some(m) => json!({ "message": m }),
                None => json!({}),
            };
            (Method::POST, format!("/api/admin/vwr/pause/{event_id}"), Some(body))
        }
        AdminCommand::Standby { event_id, end: true, .. } => {
            (Method::DELETE, format!("/api/admin/vwr/standby/{event_id}"), None)
        }
        AdminCommand::Standby { event_id, alarm, config, .. } => {
            let mut m = Map::new();
            m.insert("alarm".into(), json!(alarm));
            config.put_into(&mut m);
            (Method::PUT, format!("/api/admin/vwr/standby/{event_id}"), Some(Value::Object(m)))
        }
        AdminCommand::Page { event_id, file, .. } => {
            let body = match file {
                Some(path) => {
                    let text = std::fs::read_to_string(&path)
                        .map_err(|source| AdminError::ReadPage { path: path.clone(), source })?;
                    serde_json::from_str::<Value>(&text)
                        .map_err(|source| AdminError::PageNotJson { path, source })?
                }
                None => Value::Null,
            };
            (Method::PUT, format!("/api/admin/vwr/page/{event_id}"), Some(body))
        }
        AdminCommand::ConsoleToken { role, name, ttl } => {
            if target.sigv4 {
                return Err(AdminError::ConsoleTokenDevOnly);
            }
            let mut body = json!({ "role": role, "ttlSeconds": ttl });
            if let Some(n) = name {
                body["name"] = json!(n);
            }
            (Method::POST, "/api/admin/vwr/dev/console-token".to_owned(), Some(body))
        }
        AdminCommand::Alarm { name, state } => {
            (Method::PUT, format!("/api/admin/vwr/alarm/{name}"), Some(json!({ "state": state })))
        }
        AdminCommand::Pass(PassCommand::Create { event_id, ttl, label }) => (
            Method::POST,
            format!("/api/admin/vwr/pass/{event_id}"),
            Some(json!({ "label": label, "ttlSeconds": ttl })),
        ),
        AdminCommand::Pass(PassCommand::List { event_id }) => {
            (Method::GET, format!("/api/admin/vwr/pass/{event_id}"), None)
        }
        AdminCommand::Pass(PassCommand::Revoke { id }) => {
            let (event_id, pass_id) = id
                .rsplit_once('.')
                .filter(|(e, p)| !e.is_empty() && !p.is_empty())
                .ok_or_else(|| AdminError::NotAPassId(id.clone()))?;
            (Method::DELETE, format!("/api/admin/vwr/pass/{event_id}/{pass_id}"), None)
        }
        AdminCommand::Resume { event_id } => {
            (Method::POST, format!("/api/admin/vwr/resume/{event_id}"), None)
        }
        AdminCommand::Close { event_id, reason, message } => {
            let mut body = json!({ "reason": reason });
            if let Some(m) = message.to_json()? {
                body["message"] = m;
            }
            (Method::POST, format!("/api/admin/vwr/close/{event_id}"), Some(body))
        }
        AdminCommand::Message { event_id, message, clear } => {
            let m = match (clear, message.to_json()?) {
                (true, _) => Value::Null,
                (false, Some(m)) => m,
                (false, None) => {
                    return Err(AdminError::NoMessage);
                }
            };
            (Method::PUT, format!("/api/admin/vwr/message/{event_id}"), Some(json!({ "message": m })))
        }
        AdminCommand::Audit { event_id } => (Method::GET, format!("/api/admin/vwr/audit/{event_id}"), None),
        AdminCommand::Status { event_id } => (Method::GET, format!("/api/admin/vwr/status/{event_id}"), None),
        AdminCommand::Advance { event_id, by } => {
            (Method::POST, format!("/api/admin/vwr/advance/{event_id}"), Some(json!({ "by": by })))
        }
        AdminCommand::Events => (Method::GET, "/api/admin/vwr/events".to_owned(), None),
        AdminCommand::Threshold { event_id, threshold, line_order } => {
            let mut body = json!({ "threshold": threshold });
            if let Some(o) = line_order {
                body["lineOrder"] = json!(o);
            }
            (Method::PUT, format!("{tier2}/api/queue/admin/threshold/{event_id}"), Some(body))
        }
        AdminCommand::QueueStatus { event_id } => {
            (Method::GET, format!("{tier2}/api/queue/admin/status/{event_id}"), None)
        }
        AdminCommand::QueueRemove { event_id } => {
            (Method::DELETE, format!("{tier2}/api/queue/admin/event/{event_id}"), None)
        }
    };
    // Tier-2 paths carry their own base already.
    let url = if path.starts_with('/') { format!("{base}{path}") } else { path };
    request(&client, &auth, &url, method, body.as_ref()).await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn times_parse_in_three_forms() {
        assert_eq!(parse_time_at("1800000000", 5).ok(), Some(1_800_000_000));
        assert_eq!(parse_time_at("+90s", 100).ok(), Some(190));
        assert_eq!(parse_time_at("+10m", 100).ok(), Some(700));
        assert_eq!(parse_time_at("+2h", 0).ok(), Some(7200));
        assert_eq!(parse_time_at("2027-01-15T08:00:00Z", 0).ok(), Some(1_800_000_000));
        // The Seoul sale: 20:00 KST is 11:00 UTC, not 20:00 UTC.
        assert_eq!(parse_time_at("2027-01-15T17:00:00+09:00", 0).ok(), Some(1_800_000_000));
        assert_eq!(parse_time_at("2027-01-15T03:00:00-05:00", 0).ok(), Some(1_800_000_000));
        for zoneless in ["2027-01-15 08:00:00", "2027-01-15T08:00:00", "2027-01-15"] {
            let e = parse_time_at(zoneless, 0).unwrap_err().to_string();
            assert!(e.contains("Give the zone"), "{zoneless}: {e}");
        }
        assert!(parse_time_at("tomorrow", 0).is_err());
        assert!(parse_time_at("+soon", 0).is_err());
        assert!(parse_time_at("", 0).is_err());
    }

    #[test]
    fn a_message_speaks_every_language_of_the_page() {
        assert_eq!(
            parse_text("ja=まもなく再開します").ok(),
            Some(("ja".into(), "まもなく再開します".into()))
        );
        assert_eq!(
            parse_text("ZH-hant=請稍候").ok(),
            Some(("zh-Hant".into(), "請稍候".into())),
            "the language's own spelling"
        );
        assert_eq!(parse_text("en=a=b").ok(), Some(("en".into(), "a=b".into())), "the first = splits");
        assert!(parse_text("fr=Patientez").unwrap_err().to_string().contains("not a language of the page"));
        assert!(parse_text("no equals sign").unwrap_err().to_string().contains("LANG=TEXT"));
        let m = MessageArgs {
            text: vec![("ja".into(), "お待ちください".into()), ("zh-Hans".into(), "请稍候".into())],
            en: Some("Hold on".into()),
            ko: None,
        };
        assert_eq!(
            m.to_json().ok(),
            Some(Some(json!({"ja": "お待ちください", "zh-Hans": "请稍候", "en": "Hold on"})))
        );
        let twice = MessageArgs { text: vec![("en".into(), "a".into())], en: Some("b".into()), ko: None };
        assert_eq!(twice.to_json().unwrap_err().to_string(), "the message in en is given twice");
        assert_eq!(MessageArgs::default().to_json().ok(), Some(None));
    }
}
