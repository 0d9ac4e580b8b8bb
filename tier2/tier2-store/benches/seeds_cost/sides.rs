//! seeds_cost's two sides: the seeds' scripts, read from a checkout of their repository, and
//! vwr's store; each side's poll, admission step and (vwr) line document and cleanup.

use std::path::PathBuf;

use redis::aio::MultiplexedConnection;
use redis::{Script, Value};
use vwr_core::EventId;
use vwr_tier2::model::{Cleaned, LineOrder, Place, RegisterMode, Tier2Settings};
use vwr_tier2::store::AdmissionStore;
use vwr_tier2_store::redis::RedisStore;
use vwr_tier2_store::redis::keys::event_keys;

use crate::{WAITING_TIMEOUT_MS, settings};

/// Where their scripts are in a checkout of their repository.
const URR_SCRIPTS: &str = "services-spring/queue-service/src/main/resources/redis";

/// Their two scripts, as read from the checkout, and a connection to call them on.
pub struct Seeds {
    pub check: Script,
    pub admit: Script,
    pub conn: MultiplexedConnection,
}

/// Reads their scripts from `$VWR_BENCH_URR_DIR`, or says why not.
pub fn read_seeds() -> Result<(String, String), String> {
    const HOW: &str = "set VWR_BENCH_URR_DIR to the root of a checkout of github.com/cchriscode/URR \
                       (their scripts are read at run time, never copied into vwr)";
    let dir = std::env::var("VWR_BENCH_URR_DIR").map_err(|_| format!("seeds_cost skipped: {HOW}"))?;
    let read = |name: &str| {
        let path = PathBuf::from(&dir).join(URR_SCRIPTS).join(format!("{name}.lua"));
        std::fs::read_to_string(&path)
            .map_err(|e| format!("seeds_cost skipped: cannot read {} ({e}); {HOW}", path.display()))
    };
    Ok((read("queue_check")?, read("admission_control")?))
}

/// The seeds' keys of event `e`, in the order of their poll script's keys (the admission
/// script takes the first three).
fn seeds_keys(e: &str) -> [String; 5] {
    ["queue", "active", "seen", "active-seen", "threshold"].map(|s| format!("{{{e}}}:{s}"))
}

pub enum Side {
    Seeds(Seeds),
    Vwr(RedisStore),
}

pub struct Set {
    pub name: &'static str,
    pub event: EventId,
    pub side: Side,
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        other => panic!("not an integer: {other:?}"),
    }
}

impl Set {
    /// The key of the line and of the waiting heartbeats.
    pub fn line_keys(&self) -> (String, String) {
        match &self.side {
            Side::Seeds(_) => {
                let k = seeds_keys(self.event.as_str());
                (k[0].clone(), k[2].clone())
            }
            Side::Vwr(_) => {
                let k = event_keys(&self.event);
                (k[0].clone(), k[2].clone())
            }
        }
    }

    /// Sets the event's threshold (vwr registers the event).
    pub async fn register(&self, threshold: u64, admin: &mut MultiplexedConnection) {
        match &self.side {
            Side::Vwr(st) => {
                st.register(&self.event, threshold, LineOrder::Arrival, RegisterMode::Admin).await.unwrap();
            }
            Side::Seeds(_) => {
                let key = &seeds_keys(self.event.as_str())[4];
                let _: () = redis::cmd("SET").arg(key).arg(threshold).query_async(admin).await.unwrap();
            }
        }
    }

    pub async fn waiting(&self, admin: &mut MultiplexedConnection) -> u64 {
        redis::cmd("ZCARD").arg(self.line_keys().0).query_async(admin).await.unwrap()
    }

    /// Whether the store keeps waiting users' heartbeats: the seeds always (their poll is the
    /// heartbeat), vwr only with a waiting timeout.
    pub fn keeps_waiting_heartbeats(&self) -> bool {
        !self.is_vwr() || *WAITING_TIMEOUT_MS > 0
    }

    /// A waiting user's status poll; whether they were found in the line. vwr: as
    /// `Tier2Service::status` calls it (the heartbeat of `Tier2Settings::touch`).
    pub async fn poll(&self, user: &str, token_ttl_ms: u64, threshold: u64) -> bool {
        match &self.side {
            Side::Vwr(st) => matches!(
                st.status(&self.event, user, settings().touch(), token_ttl_ms).await.unwrap(),
                Some(Place::Queued { .. })
            ),
            Side::Seeds(s) => {
                let mut inv = s.check.prepare_invoke();
                for k in seeds_keys(self.event.as_str()) {
                    inv.key(k);
                }
                inv.arg(user).arg(vwr_core::time::now_millis()).arg(threshold).arg(settings().active_ttl_ms);
                match inv.invoke_async::<Value>(&mut s.conn.clone()).await.unwrap() {
                    Value::Array(a) if a.len() == 6 => int(&a[0]) == 1,
                    other => panic!("bad queue_check reply {other:?}"),
                }
            }
        }
    }

    /// One worker step of at most `batch` users; how many it admitted.
    pub async fn admit(&self, prefix: &str, batch: u64, threshold: u64) -> u64 {
        match &self.side {
            Side::Vwr(st) => {
                let s = Tier2Settings { batch_max: batch, ..settings() };
                st.admit(&self.event, prefix, &s).await.unwrap().admitted.len() as u64
            }
            Side::Seeds(s) => {
                let mut inv = s.admit.prepare_invoke();
                for k in &seeds_keys(self.event.as_str())[..3] {
                    inv.key(k);
                }
                inv.arg(batch).arg(vwr_core::time::now_millis()).arg(settings().active_ttl_ms).arg(threshold);
                match inv.invoke_async::<Value>(&mut s.conn.clone()).await.unwrap() {
                    Value::Array(a) if a.len() == 2 => int(&a[0]) as u64,
                    other => panic!("bad admission_control reply {other:?}"),
                }
            }
        }
    }

    /// vwr: the line document; how many are in line.
    pub async fn line(&self) -> u64 {
        let Side::Vwr(st) = &self.side else { unreachable!() };
        st.line(&self.event).await.unwrap().figures.queue_size
    }

    /// vwr: one cleanup pass with these settings.
    pub async fn cleanup(&self, s: &Tier2Settings) -> Cleaned {
        let Side::Vwr(st) = &self.side else { unreachable!() };
        st.cleanup(&self.event, s).await.unwrap()
    }

    pub fn is_vwr(&self) -> bool {
        matches!(self.side, Side::Vwr(_))
    }
}
