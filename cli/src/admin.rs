//! `vwr admin …`: calls the admin API (bearer key locally, SigV4 against AWS).

use std::time::Duration;

use clap::Subcommand;
use http::Method;
use serde_json::{Map, Value, json};

use crate::client::{Auth, HttpClient};
use crate::devstate;

/// Connection options of `vwr admin`.
#[derive(Debug, Clone, clap::Args)]
pub struct AdminTarget {
    /// Base URL of the admin API.
    #[arg(long, env = "VWR_ADMIN_URL", default_value = "http://127.0.0.1:8080")]
    pub url: String,
    /// Bearer key (default: `VWR_ADMIN_KEY`, else the local dev state file).
    #[arg(long, env = "VWR_ADMIN_KEY", hide_env_values = true)]
    pub key: Option<String>,
    /// Sign requests with AWS SigV4 (the deployed admin API uses IAM auth).
    #[arg(long)]
    pub sigv4: bool,
}

/// Admin operations.
#[derive(Debug, Clone, Subcommand)]
pub enum AdminCommand {
    /// Create or update an event and start gating it (never resets counters).
    Activate {
        event_id: String,
        /// Positions admitted per interval (0 = manual advancing only).
        #[arg(long)]
        batch_size: Option<u64>,
        /// Seconds between advancer steps.
        #[arg(long)]
        interval_seconds: Option<u64>,
        /// Counter shards (fixed once the event exists).
        #[arg(long)]
        shards: Option<u32>,
        /// Lifetime of tier-1 tokens in seconds.
        #[arg(long)]
        token_ttl_seconds: Option<u64>,
    },
    /// Stop gating an event.
    Deactivate { event_id: String },
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
}

/// Runs one admin command and prints the JSON answer; `Err` carries the message to show.
pub async fn run(target: AdminTarget, cmd: AdminCommand) -> Result<Value, String> {
    let auth = if target.sigv4 {
        Auth::SigV4(Box::new(aws_config::load_defaults(aws_config::BehaviorVersion::latest()).await))
    } else {
        let key = match target.key {
            Some(k) => k,
            None => devstate::read().map_err(|e| e.to_string())?.map(|s| s.admin_key).ok_or(
                "no admin key: pass --key, set VWR_ADMIN_KEY, or start `vwr dev` in this directory first",
            )?,
        };
        Auth::Bearer(key)
    };
    let base = target.url.trim_end_matches('/');
    let (method, path, body) = match cmd {
        AdminCommand::Activate { event_id, batch_size, interval_seconds, shards, token_ttl_seconds } => {
            let mut m = Map::new();
            let mut put = |k: &str, v: Option<u64>| {
                if let Some(v) = v {
                    m.insert(k.into(), json!(v));
                }
            };
            put("batchSize", batch_size);
            put("intervalSeconds", interval_seconds);
            put("shards", shards.map(u64::from));
            put("tokenTtlSeconds", token_ttl_seconds);
            (Method::POST, format!("/api/admin/vwr/activate/{event_id}"), Some(Value::Object(m)))
        }
        AdminCommand::Deactivate { event_id } => {
            (Method::POST, format!("/api/admin/vwr/deactivate/{event_id}"), None)
        }
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
            (Method::PUT, format!("/api/queue/admin/threshold/{event_id}"), Some(body))
        }
        AdminCommand::QueueStatus { event_id } => {
            (Method::GET, format!("/api/queue/admin/status/{event_id}"), None)
        }
        AdminCommand::QueueRemove { event_id } => {
            (Method::DELETE, format!("/api/queue/admin/event/{event_id}"), None)
        }
    };
    let client = HttpClient::new(Duration::from_secs(30)).map_err(|e| e.to_string())?;
    let reply = client
        .send(method, &format!("{base}{path}"), body.as_ref(), &auth)
        .await
        .map_err(|e| e.to_string())?;
    let json = reply.json();
    if reply.status.is_success() {
        Ok(if json.is_null() { json!({"status": reply.status.as_u16()}) } else { json })
    } else {
        Err(format!(
            "{} {}",
            reply.status,
            if json.is_null() { String::from_utf8_lossy(&reply.body).into_owned() } else { json.to_string() }
        ))
    }
}
