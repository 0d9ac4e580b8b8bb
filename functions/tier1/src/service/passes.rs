//! Passes (docs/passes.md): the operator mints a signed, short-lived pass for an event that
//! the edge accepts in place of a tier-1 token (staff smoke tests, synthetic monitors, payment
//! callbacks), lists them, and revokes one; the edge refuses a revoked pass within seconds
//! (the `revoked` map of its configuration, written here through the edge sync). Each create
//! and revoke is a lifecycle write of the event item, so it is in the audit trail.

use aws_lc_rs::rand::SecureRandom;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Serialize;
use vwr_core::EventId;
use vwr_core::token::Tier1Claims;

use super::{Tier1Error, Tier1Service};
use crate::lifecycle::{Action, LifecycleError};
use crate::model::{PASS_ID_LEN, Pass, PassError, validate_pass};

/// What `create_pass` answers: the pass itself is shown once, here, and never stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreatedPass {
    /// `{eventId}.{passId}`: what `vwr admin pass revoke` takes.
    pub id: String,
    pub event_id: String,
    /// The pass's own id (its token's `jti`; the edge's revocation list names it).
    pub pass_id: String,
    pub label: String,
    /// The token: a cookie `vwr_t1_{eventId}` or `Authorization: Bearer` on API paths.
    pub pass: String,
    pub expires_at: u64,
}

/// A pass as the operator lists it (never the token).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PassView {
    pub id: String,
    pub event_id: String,
    pub pass_id: String,
    pub label: String,
    pub created_at: u64,
    pub created_by: String,
    pub expires_at: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<u64>,
}

impl PassView {
    fn of(event: &EventId, p: &Pass) -> Self {
        Self {
            id: format!("{event}.{}", p.id),
            event_id: event.as_str().to_owned(),
            pass_id: p.id.clone(),
            label: p.label.clone(),
            created_at: p.created_at,
            created_by: p.created_by.clone(),
            expires_at: p.expires_at,
            revoked_at: p.revoked_at,
        }
    }
}

/// Whether `id` has the shape of a pass id (what `create_pass` makes).
pub fn is_pass_id(id: &str) -> bool {
    id.len() == PASS_ID_LEN && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn pass_error(e: PassError) -> Tier1Error {
    Tier1Error::Lifecycle(LifecycleError::Pass(e))
}

impl Tier1Service {
    /// Admin: a new pass for `event`, valid `ttl_secs` from now.
    pub async fn create_pass(
        &self,
        event: &EventId,
        label: &str,
        ttl_secs: u64,
        actor: &str,
    ) -> Result<CreatedPass, Tier1Error> {
        validate_pass(label, ttl_secs).map_err(pass_error)?;
        let mut b = [0u8; PASS_ID_LEN * 3 / 4];
        self.rng.fill(&mut b).map_err(|_| Tier1Error::Internal("random generator failed"))?;
        let id = URL_SAFE_NO_PAD.encode(b);
        let now = self.now();
        let pass = Pass {
            id: id.clone(),
            label: label.to_owned(),
            created_at: now,
            expires_at: now + ttl_secs,
            created_by: actor.to_owned(),
            revoked_at: None,
        };
        self.transition(event, actor, Action::CreatePass(pass.clone())).await?;
        let tokens = self.tokens();
        let claims = Tier1Claims {
            iss: tokens.issuer().to_owned(),
            aud: tokens.audience().to_owned(),
            sub: format!("pass:{id}"),
            eid: event.as_str().to_owned(),
            pos: 0,
            tier: 1,
            iat: now,
            nbf: now,
            exp: pass.expires_at,
            jti: id.clone(),
            t2: None,
        };
        let token = tokens.sign_pass(&claims).map_err(|_| Tier1Error::Internal("could not sign the pass"))?;
        tracing::info!(event = "tier1.pass_created", event_id = %event, pass_id = %id, label, actor,
            expires_at = pass.expires_at);
        Ok(CreatedPass {
            id: format!("{event}.{id}"),
            event_id: event.as_str().to_owned(),
            pass_id: id,
            label: pass.label,
            pass: token,
            expires_at: pass.expires_at,
        })
    }

    /// Admin: revokes pass `pass_id` of `event`; the edge refuses it once its configuration
    /// is written (here, before answering) and read (within seconds, edge/README.md).
    pub async fn revoke_pass(
        &self,
        event: &EventId,
        pass_id: &str,
        actor: &str,
    ) -> Result<PassView, Tier1Error> {
        if !is_pass_id(pass_id) {
            return Err(pass_error(PassError::NotFound));
        }
        let rec = self.transition(event, actor, Action::RevokePass { id: pass_id.to_owned() }).await?;
        tracing::info!(event = "tier1.pass_revoked", event_id = %event, pass_id, actor);
        let p = rec.passes.iter().find(|p| p.id == pass_id).ok_or(pass_error(PassError::NotFound))?;
        Ok(PassView::of(event, p))
    }

    /// Admin: the event's unexpired passes (revoked ones included), oldest first.
    pub async fn passes(&self, event: &EventId) -> Result<Vec<PassView>, Tier1Error> {
        let rec = self.store.get_event(event).await?.ok_or(Tier1Error::EventNotFound)?;
        let now = self.now();
        Ok(rec.passes.iter().filter(|p| p.live(now)).map(|p| PassView::of(event, p)).collect())
    }
}
