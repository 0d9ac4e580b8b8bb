//! `vwr watch {eventId}`: a live terminal console for the operator of a sale
//! (docs/operate.md#vwr-watch), the crate `vwr-watch` under the `vwr` command.
//!
//! Three layers, arrows down (one file each, plus `actions`, `render` and `error`):
//! - [`run`]: the I/O loop (tokio). A ticker polls the admin status, a thread reads the
//!   terminal's keys into a channel, HTTP calls run in tasks and report back through another
//!   channel, so a slow answer never freezes the keys. `--once` prints [`snapshot`] instead.
//! - [`App`]: the pure state — the last figures, the recent samples the live rates come from,
//!   the prompt and confirmation state machine. `on_status`, `on_key` and `render` take the
//!   time as a parameter (unix seconds) and do no I/O, so the tests drive them directly.
//! - [`Status`]: the fields read from the admin status JSON, every one optional: a partial or
//!   odd answer shows "—" where a figure is missing, never a crash.
//!
//! Contract: docs/api.md (admin routes of tier 1 and tier 2), docs/lifecycle.md (states,
//! pause / resume / close / message), docs/outflow.md (modes, the `outflow` figures, the health
//! gate's hold: `heldBy`, `holdReason`, `heldSince`, `PUT /api/admin/vwr/health/{eventId}`).
//!
//! Beside it, [`zone`]: instants in UTC and the operator's zone, read by the console and by the
//! `vwr` command's answers alike (here, as the lowest crate that uses them).

use std::io::{IsTerminal, Write};
use std::time::Duration;

use http::Method;
use ratatui::crossterm::event::{self, Event};
use serde_json::Value;
use tokio::sync::mpsc;

use vwr_loadtest::client::{AdminTarget, Auth, HttpClient, Reply};

mod actions;
mod app;
mod error;
mod render;
mod status;
#[cfg(test)]
mod tests;
pub mod zone;

pub use actions::*;
pub use app::*;
pub use error::*;
pub use render::*;
pub use status::*;

/// Options of `vwr watch`.
#[derive(Debug, Clone, clap::Args)]
pub struct WatchArgs {
    /// The event to watch.
    pub event_id: String,
    /// The stack (the global flags, resolved by `vwr`; docs/cli.md#addressing-a-stack).
    #[arg(skip)]
    pub target: AdminTarget,
    /// Time between polls of the admin status: seconds, or with a unit (`500ms`, `2s`).
    #[arg(long, default_value = "1", value_parser = parse_interval)]
    pub interval: Duration,
    /// Print one plain-text snapshot of the figures and exit (no terminal needed).
    #[arg(long)]
    pub once: bool,
    /// With --once: the admin status JSON instead of the text (and `tier2`, the tier-2 admin
    /// status, with --tier2-url).
    #[arg(long, requires = "once")]
    pub json: bool,
}

fn parse_interval(s: &str) -> Result<Duration, IntervalError> {
    let s = s.trim();
    let (num, scale) = if let Some(ms) = s.strip_suffix("ms") {
        (ms, 0.001)
    } else if let Some(secs) = s.strip_suffix('s') {
        (secs, 1.0)
    } else {
        (s, 1.0)
    };
    let secs = num.trim().parse::<f64>().map_err(|_| IntervalError::NotADuration(s.to_owned()))? * scale;
    if !(0.1..=3600.0).contains(&secs) {
        return Err(IntervalError::OutOfRange(s.to_owned()));
    }
    Ok(Duration::from_secs_f64(secs))
}

// ---------------------------------------------------------------------------------------------
// I/O
// ---------------------------------------------------------------------------------------------

/// The admin API (and the tier-2 admin API) as the console calls it.
#[derive(Clone)]
struct Conn {
    client: HttpClient,
    auth: Auth,
    base: String,
    tier2_base: Option<String>,
    event_id: String,
}

impl Conn {
    async fn new(args: &WatchArgs) -> Result<Self, WatchError> {
        let auth = args.target.auth().await?;
        // A poll slower than this is an error shown on screen; the next tick tries again.
        let client = HttpClient::new(Duration::from_secs(10))?;
        Ok(Self {
            client,
            auth,
            base: args.target.url.trim_end_matches('/').to_owned(),
            // The tier-2 admin status only with `--tier2-url` (or a context's): without it, the
            // `tier2` object of the tier-1 status is shown when present.
            tier2_base: args.target.tier2_url.as_ref().map(|u| u.trim_end_matches('/').to_owned()),
            event_id: args.event_id.clone(),
        })
    }

    async fn call(&self, method: Method, url: &str, body: Option<&Value>) -> Result<Value, WatchError> {
        let reply = self.client.send(method, url, body, &self.auth).await?;
        if reply.status.is_success() {
            Ok(reply.json())
        } else {
            Err(WatchError::Refused { url: url.to_owned(), answer: describe_error(&reply) })
        }
    }

    async fn status(&self) -> Result<Value, WatchError> {
        let url = format!("{}/api/admin/vwr/status/{}", self.base, self.event_id);
        self.call(Method::GET, &url, None).await
    }

    async fn tier2_status(&self) -> Option<Result<Value, WatchError>> {
        let base = self.tier2_base.as_ref()?;
        let url = format!("{base}/api/queue/admin/status/{}", self.event_id);
        Some(self.call(Method::GET, &url, None).await)
    }

    async fn perform(&self, action: &Action) -> Result<Value, WatchError> {
        let (method, path, body) = action.request(&self.event_id).ok_or(WatchError::NothingToSend)?;
        self.call(method, &format!("{}{path}", self.base), body.as_ref()).await
    }
}

/// "409 Conflict: invalid_transition: …" from an error answer (docs/api.md#errors).
fn describe_error(reply: &Reply) -> String {
    let json = reply.json();
    let code = json.get("error").and_then(Value::as_str);
    let message = json.get("message").and_then(Value::as_str);
    match (code, message) {
        (Some(c), Some(m)) => format!("{}: {c}: {m}", reply.status),
        (Some(c), None) => format!("{}: {c}", reply.status),
        (None, Some(m)) => format!("{}: {m}", reply.status),
        (None, None) => {
            let body = String::from_utf8_lossy(&reply.body);
            if body.trim().is_empty() {
                reply.status.to_string()
            } else {
                format!("{}: {}", reply.status, clip(body.trim(), 200))
            }
        }
    }
}

fn check_event_id(id: &str) -> Result<(), WatchError> {
    vwr_core::EventId::parse(id)
        .map(|_| ())
        .map_err(|source| WatchError::EventId { id: id.to_owned(), source })
}

/// One poll (and the tier-2 status with `--tier2-url`), as the `--once` text. A failed status
/// poll is an error; a failed tier-2 poll shows in the text.
pub async fn snapshot(args: &WatchArgs) -> Result<String, WatchError> {
    check_event_id(&args.event_id)?;
    let conn = Conn::new(args).await?;
    let mut app = App::new(&args.event_id);
    let json = conn.status().await?;
    let at = now_secs_f64();
    Status::from_json(&json)?;
    app.on_status(&json, at);
    match conn.tier2_status().await {
        Some(Ok(v)) => app.on_tier2(&v),
        Some(Err(e)) => app.on_tier2_error(&e),
        None => {}
    }
    Ok(app.snapshot_text())
}

/// One poll as JSON: the admin status, with `tier2` the tier-2 admin status when asked for.
pub async fn snapshot_json(args: &WatchArgs) -> Result<String, WatchError> {
    check_event_id(&args.event_id)?;
    let conn = Conn::new(args).await?;
    let mut json = conn.status().await?;
    if let Some(tier2) = conn.tier2_status().await {
        json["tier2"] = tier2?;
    }
    Ok(serde_json::to_string_pretty(&json)? + "\n")
}

/// `vwr watch`: the live console, or with `--once` one snapshot on stdout.
pub async fn run(args: WatchArgs) -> Result<(), WatchError> {
    check_event_id(&args.event_id)?;
    if args.once {
        let text = if args.json { snapshot_json(&args).await? } else { snapshot(&args).await? };
        let mut out = std::io::stdout().lock();
        return out.write_all(text.as_bytes()).and_then(|()| out.flush()).map_err(WatchError::Output);
    }
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return Err(WatchError::NoTerminal);
    }
    let conn = Conn::new(&args).await?;
    let mut app = App::new(&args.event_id);
    app.tick(now_secs_f64());
    // Installs a panic hook that restores the terminal too.
    let mut terminal = ratatui::try_init().map_err(WatchError::TerminalSetUp)?;
    let restore = RestoreOnDrop;
    let result = event_loop(&mut terminal, &mut app, &conn, args.interval).await;
    drop(restore);
    result
}

/// Puts the terminal back (raw mode off, main screen) however the loop ends.
struct RestoreOnDrop;

impl Drop for RestoreOnDrop {
    fn drop(&mut self) {
        ratatui::restore();
    }
}

enum Msg {
    Polled { status: Result<Value, WatchError>, tier2: Option<Result<Value, WatchError>>, at: f64 },
    Done { label: String, result: Result<Value, WatchError>, at: f64 },
}

/// Reads terminal events on a thread (crossterm's reads block) until the receiver is gone.
fn spawn_event_reader(tx: mpsc::UnboundedSender<std::io::Result<Event>>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        while !tx.is_closed() {
            match event::poll(Duration::from_millis(100)) {
                Ok(false) => {}
                Ok(true) => {
                    if tx.send(event::read()).is_err() {
                        break;
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                    break;
                }
            }
        }
    })
}

async fn event_loop(
    terminal: &mut ratatui::DefaultTerminal,
    app: &mut App,
    conn: &Conn,
    interval: Duration,
) -> Result<(), WatchError> {
    let (key_tx, mut keys) = mpsc::unbounded_channel();
    let reader = spawn_event_reader(key_tx);
    let (tx, mut rx) = mpsc::unbounded_channel::<Msg>();
    let mut poll = tokio::time::interval(interval);
    poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut clock = tokio::time::interval(Duration::from_millis(250));
    clock.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut polling = false;
    let result = loop {
        if let Err(e) = terminal.draw(|f| app.render(f)) {
            break Err(WatchError::Draw(e));
        }
        tokio::select! {
            _ = poll.tick() => {
                if !polling {
                    polling = true;
                    let (conn, tx) = (conn.clone(), tx.clone());
                    tokio::spawn(async move {
                        let status = conn.status().await;
                        let tier2 = conn.tier2_status().await;
                        let _ = tx.send(Msg::Polled { status, tier2, at: now_secs_f64() });
                    });
                }
            }
            _ = clock.tick() => app.tick(now_secs_f64()),
            ev = keys.recv() => match ev {
                None => break Err(WatchError::InputClosed),
                Some(Err(e)) => break Err(WatchError::ReadTerminal(e)),
                Some(Ok(Event::Key(key))) => match app.on_key(key) {
                    Some(Action::Quit) => break Ok(()),
                    Some(action) => {
                        let (conn, tx) = (conn.clone(), tx.clone());
                        tokio::spawn(async move {
                            let result = conn.perform(&action).await;
                            let _ = tx.send(Msg::Done { label: action.label(), result, at: now_secs_f64() });
                        });
                    }
                    None => {}
                },
                Some(Ok(_)) => {}
            },
            Some(msg) = rx.recv() => match msg {
                Msg::Polled { status, tier2, at } => {
                    polling = false;
                    match status {
                        Ok(v) => app.on_status(&v, at),
                        Err(e) => app.on_poll_error(&e, at),
                    }
                    match tier2 {
                        Some(Ok(v)) => app.on_tier2(&v),
                        Some(Err(e)) => app.on_tier2_error(&e),
                        None => {}
                    }
                }
                Msg::Done { label, result: Ok(v), at } => app.on_action_done(&label, &v, at),
                Msg::Done { label, result: Err(e), .. } => app.on_action_failed(&label, &e),
            },
        }
    };
    drop(keys);
    let _ = reader.join();
    result
}
