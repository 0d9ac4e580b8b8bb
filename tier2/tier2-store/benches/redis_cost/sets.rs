//! redis_cost's script sets: the store itself (its function library, or its Lua run as
//! scripts) and the frozen copy of the scripts before the cost work
//! (`benches/redis_cost_baseline/`), each with the keys and arguments its store gave it.

use std::sync::Arc;

use redis::aio::MultiplexedConnection;
use redis::{Script, Value};
use vwr_core::EventId;
use vwr_tier2::model::{LineOrder, LineScore, Place, RegisterMode, Tier2Settings, Touch};
use vwr_tier2::store::AdmissionStore;
use vwr_tier2_store::redis::RedisStore;
use vwr_tier2_store::redis::keys::event_keys;

use crate::settings;

/// The scripts before the cost work, with the keys and arguments the store gave them.
pub struct Baseline {
    check: Script,
    status: Script,
    leave: Script,
    admit: Script,
    take: Script,
    ack: Script,
    register: Script,
    cleanup: Script,
}

impl Baseline {
    pub fn load() -> Self {
        const LIB: &str = include_str!("../redis_cost_baseline/lib.lua");
        let s = |body: &str| Script::new(&format!("{LIB}\n{body}"));
        Self {
            check: s(include_str!("../redis_cost_baseline/check.lua")),
            status: s(include_str!("../redis_cost_baseline/status.lua")),
            leave: s(include_str!("../redis_cost_baseline/leave.lua")),
            admit: s(include_str!("../redis_cost_baseline/admit.lua")),
            take: s(include_str!("../redis_cost_baseline/take.lua")),
            ack: s(include_str!("../redis_cost_baseline/ack.lua")),
            register: s(include_str!("../redis_cost_baseline/register.lua")),
            cleanup: s(include_str!("../redis_cost_baseline/cleanup.lua")),
        }
    }
}

/// The keys of an event the baseline's scripts take: the store's first eleven (the baseline
/// had no ghosts), in the order of `lua/lib.lua`.
pub fn keys(e: &EventId) -> Vec<String> {
    event_keys(e)[..11].to_vec()
}

#[derive(Clone)]
pub enum Target {
    Store(RedisStore),
    Raw(MultiplexedConnection, Arc<Baseline>),
}

fn tag(v: &Value) -> String {
    match v {
        Value::Array(a) => match a.first() {
            Some(Value::BulkString(b)) => String::from_utf8_lossy(b).into_owned(),
            other => format!("{other:?}"),
        },
        other => format!("{other:?}"),
    }
}

fn place_tag(p: &Place) -> &'static str {
    match p {
        Place::Queued { .. } => "queued",
        Place::Active { fresh: true, .. } => "admitted",
        Place::Active { .. } => "active",
    }
}

pub struct Set {
    pub name: &'static str,
    pub event: EventId,
    pub target: Target,
}

impl Set {
    async fn raw(&self, script: &Script, args: &[String]) -> Value {
        let Target::Raw(conn, _) = &self.target else { unreachable!() };
        let mut inv = script.prepare_invoke();
        for k in keys(&self.event) {
            inv.key(k);
        }
        inv.arg(0);
        for a in args {
            inv.arg(a.as_str());
        }
        inv.invoke_async(&mut conn.clone()).await.unwrap()
    }

    fn base(&self) -> &Baseline {
        match &self.target {
            Target::Raw(_, b) => b,
            Target::Store(_) => unreachable!(),
        }
    }

    pub async fn register(&self, threshold: u64) {
        match &self.target {
            Target::Store(s) => {
                s.register(&self.event, threshold, LineOrder::Arrival, RegisterMode::Admin).await.unwrap();
            }
            Target::Raw(..) => {
                let args = [threshold.to_string(), "arrival".into(), "admin".into()];
                self.raw(&self.base().register, &args).await;
            }
        }
    }

    pub async fn check(&self, user: &str, jti: &str) -> String {
        let s = settings();
        match &self.target {
            Target::Store(st) => {
                place_tag(&st.check(&self.event, user, LineScore::Arrival, jti, &s).await.unwrap()).into()
            }
            Target::Raw(..) => {
                let args = [
                    user.to_owned(),
                    "arrival".into(),
                    "0".into(),
                    s.active_ttl_ms.to_string(),
                    jti.to_owned(),
                    s.notice_cap.to_string(),
                    s.entry_token_ttl_ms.to_string(),
                ];
                tag(&self.raw(&self.base().check, &args).await)
            }
        }
    }

    pub async fn status(&self, user: &str, ttl: u64) -> String {
        match &self.target {
            Target::Store(st) => st
                .status(&self.event, user, Touch::Any, ttl)
                .await
                .unwrap()
                .as_ref()
                .map_or("none", place_tag)
                .into(),
            Target::Raw(..) => {
                let args = [user.to_owned(), "1".into(), ttl.to_string()];
                tag(&self.raw(&self.base().status, &args).await)
            }
        }
    }

    pub async fn leave(&self, user: &str) -> String {
        match &self.target {
            Target::Store(st) => {
                let l = st.leave(&self.event, user).await.unwrap();
                format!("left {} {}", u8::from(l.was_waiting), u8::from(l.was_active))
            }
            Target::Raw(..) => match self.raw(&self.base().leave, &[user.to_owned()]).await {
                Value::Array(a) if a.len() == 3 => {
                    let n = |v: &Value| if let Value::Int(i) = v { *i } else { -1 };
                    format!("left {} {}", n(&a[1]), n(&a[2]))
                }
                other => format!("{other:?}"),
            },
        }
    }

    /// One worker step; how many it admitted.
    pub async fn admit(&self, prefix: &str, batch_max: u64) -> usize {
        let s = Tier2Settings { batch_max, ..settings() };
        match &self.target {
            Target::Store(st) => st.admit(&self.event, prefix, &s).await.unwrap().admitted.len(),
            Target::Raw(..) => {
                let args = [
                    s.batch_max.to_string(),
                    s.active_ttl_ms.to_string(),
                    s.active_heartbeat_timeout_ms.to_string(),
                    s.waiting_timeout_ms.to_string(),
                    prefix.to_owned(),
                    s.notice_cap.to_string(),
                    s.cleanup_limit.to_string(),
                ];
                match self.raw(&self.base().admit, &args).await {
                    Value::Array(a) if a.len() >= 9 => (a.len() - 9) / 2,
                    other => panic!("bad admit reply {other:?}"),
                }
            }
        }
    }

    /// One cleanup pass with the given waiting timeout; how many waiting users it removed.
    pub async fn cleanup(&self, waiting_timeout_ms: u64) -> u64 {
        let s = Tier2Settings { waiting_timeout_ms, ..settings() };
        match &self.target {
            Target::Store(st) => st.cleanup(&self.event, &s).await.unwrap().stale,
            Target::Raw(..) => {
                let args = [
                    s.active_heartbeat_timeout_ms.to_string(),
                    s.waiting_timeout_ms.to_string(),
                    s.cleanup_limit.to_string(),
                ];
                match self.raw(&self.base().cleanup, &args).await {
                    Value::Array(a) if a.len() == 4 => match a[3] {
                        Value::Int(n) => n as u64,
                        _ => panic!("bad cleanup reply {a:?}"),
                    },
                    other => panic!("bad cleanup reply {other:?}"),
                }
            }
        }
    }

    /// Takes up to 100 notices (as the worker does) and acknowledges them; how many.
    pub async fn take_and_ack(&self) -> usize {
        let s = settings();
        match &self.target {
            Target::Store(st) => {
                let taken = st.take_notices(&self.event, 100, s.notice_lease_ms).await.unwrap();
                st.ack_notices(&self.event, &taken, &[]).await.unwrap();
                taken.len()
            }
            Target::Raw(..) => {
                let args = ["100".to_owned(), s.notice_lease_ms.to_string()];
                let Value::Array(taken) = self.raw(&self.base().take, &args).await else { panic!("take") };
                let mut args = vec![taken.len().to_string()];
                for t in &taken {
                    let Value::BulkString(b) = t else { panic!("notice {t:?}") };
                    args.push(String::from_utf8_lossy(b).into_owned());
                }
                if !taken.is_empty() {
                    self.raw(&self.base().ack, &args).await;
                }
                taken.len()
            }
        }
    }
}
