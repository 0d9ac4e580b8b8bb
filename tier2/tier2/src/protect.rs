//! The entry-token check in front of protected APIs (`/api/seats/{eventId}/…`,
//! `/api/reservations/{eventId}/…`): header `x-queue-entry-token`, verified for signature
//! (ES256, public keys only), tier 2, the event of the path, the caller's identity and expiry.
//! Used by the API Gateway Lambda authorizer (`tier2/tier2-authorizer`, which maps API
//! Gateway's event to a request) and in front of the local demo's `/api/seats/**`.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use vwr_core::{ApiError, ErrorCode, EventId};

use crate::entry_token::{EntryClaims, EntryVerifier};
use crate::identity::Identity;

pub const ENTRY_TOKEN_HEADER: &str = "x-queue-entry-token";
/// Protected path prefixes; the segment after the prefix is the event id.
pub const PROTECTED_PREFIXES: [&str; 2] = ["/api/seats/", "/api/reservations/"];

/// Verifies entry tokens for protected routes.
#[derive(Debug, Clone)]
pub struct Protector {
    pub verifier: EntryVerifier,
    pub identity: Identity,
}

/// Whether a path is in the one form every server reads alike: no empty, `.` or `..`
/// segment, no percent-encoded dot, slash or backslash, no escaped `%` (`%25`, which a second
/// decoding turns into dots and slashes) and no `%u` escape (IIS-style), no backslash and no
/// `;` parameter — what the edge refuses too (docs/invariants.md#25). Anything else could be
/// resolved by the backend to another event's path than the one the check read
/// (`/api/seats/e1/../../reservations/e2`), so it is refused outright.
pub fn is_canonical(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let encoded = ["%2e", "%2f", "%5c", "%25", "%u"].iter().any(|e| lower.contains(e));
    let odd = path.contains('\\') || path.contains(';');
    let segments = path.strip_prefix('/').map(|p| p.split('/').collect::<Vec<_>>());
    let bad_segment = match &segments {
        // A trailing "/" is allowed (`/api/seats/e1/`); any other empty segment is not.
        Some(s) => s
            .iter()
            .enumerate()
            .any(|(i, seg)| (seg.is_empty() && i + 1 != s.len()) || *seg == "." || *seg == ".."),
        None => true,
    };
    !(encoded || odd || bad_segment)
}

/// The event id of a protected path; `None` for any path that is not canonical
/// ([`is_canonical`]), not under a protected prefix, or whose event segment is not an id.
pub fn event_of_path(path: &str) -> Option<EventId> {
    if !is_canonical(path) {
        return None;
    }
    PROTECTED_PREFIXES
        .iter()
        .find_map(|p| path.strip_prefix(p))
        .and_then(|rest| rest.split('/').next())
        .and_then(|seg| EventId::parse(seg).ok())
}

/// A refusal; `redirectTo` is the booking page, where a visitor gets an entry token
/// (docs/adr/0027-booking-page-path.md), or `/` without an event.
fn refuse(event: Option<&EventId>, why: &str) -> ApiError {
    let to = event.map_or_else(|| "/".to_owned(), |e| format!("/vwr/queue/{e}"));
    ApiError::forbidden(
        ErrorCode::QueueEntryTokenRequired,
        format!("a valid queue entry token is required ({why})"),
    )
    .with_field("redirectTo", to)
}

impl Protector {
    /// Checks one request; on success returns the verified claims.
    pub fn authorize(&self, parts: &Parts) -> Result<EntryClaims, ApiError> {
        let event = event_of_path(parts.uri.path());
        let Some(event) = event.as_ref() else {
            return Err(refuse(None, "no event in the path"));
        };
        let token = parts
            .headers
            .get(ENTRY_TOKEN_HEADER)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| refuse(Some(event), "missing"))?;
        let caller = self.identity.caller(parts, event).map_err(|_| refuse(Some(event), "unknown caller"))?;
        let now = self.identity.clock.now_secs();
        self.verifier.verify(token, event, &caller.user, now).map_err(|e| {
            tracing::info!(event = "tier2.entry_token_refused", event_id = %event, reason = e.code());
            refuse(Some(event), e.code())
        })
    }
}

/// Axum middleware: refuses requests to protected paths without a valid entry token.
pub async fn require_entry_token(State(p): State<Arc<Protector>>, req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    match p.authorize(&parts) {
        Ok(_) => next.run(Request::from_parts(parts, body)).await,
        Err(e) => e.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_from_paths() {
        assert_eq!(event_of_path("/api/seats/e1/A12").map(|e| e.to_string()), Some("e1".into()));
        assert_eq!(event_of_path("/api/reservations/e-2").map(|e| e.to_string()), Some("e-2".into()));
        assert!(event_of_path("/api/seats/").is_none());
        assert!(event_of_path("/api/seats/e%201/x").is_none());
        assert!(event_of_path("/events/e1").is_none());
        assert_eq!(event_of_path("/api/seats/e1/").map(|e| e.to_string()), Some("e1".into()));
    }

    /// Review finding 5: the authorizer read only the first segment, so a path that the
    /// backend resolves to another event was authorised as the first one.
    #[test]
    fn paths_a_backend_could_resolve_elsewhere_are_refused() {
        for path in [
            "/api/seats/e1/../../reservations/e2",
            "/api/seats/e1/%2e%2e/%2E%2E/reservations/e2",
            "/api/seats/e1/..%2f..%2freservations%2fe2",
            "/api/seats/e1%2f..%2f..%2freservations%2fe2",
            "/api/seats/e1/..%5c..%5creservations%5ce2",
            "/api/seats/e1\\..\\x",
            "/api/seats/e1//x",
            "/api/seats//e1",
            "/api/seats/e1/./x",
            "/api/seats/e1;x=1/A1",
            "/api/seats/e1/.",
        ] {
            assert!(event_of_path(path).is_none(), "{path}");
        }
    }

    /// Review finding (issue 20): the edge refuses an escaped `%` and a `%u` escape
    /// (docs/invariants.md#25), which a backend that decodes twice, or IIS-style, turns into
    /// dots and slashes; the protected-API check let them through.
    #[test]
    fn double_encoded_and_u_escaped_paths_are_refused() {
        for path in [
            "/api/seats/e1/%252e%252e/%252e%252e/reservations/e2",
            "/api/seats/e1/..%252f..%252freservations%252fe2",
            "/api/seats/e1%252f..%252f..%252freservations%252fe2",
            "/api/seats/e1/%2525",
            "/api/seats/e1/%25",
            "/api/seats/e1/%u002e%u002e/%U002E%U002E/reservations/e2",
            "/api/seats/e1/..%u2215..%u2215reservations%u2215e2",
            "/api/seats/e1/%U",
        ] {
            assert!(!is_canonical(path), "{path}");
            assert!(event_of_path(path).is_none(), "{path}");
        }
        // A percent-escape of anything else stays as it was: refused only where the event id
        // is not an id, read as written elsewhere.
        assert_eq!(event_of_path("/api/seats/e1/A%2012").map(|e| e.to_string()), Some("e1".into()));
    }
}
