//! Alarms by hand in `vwr dev` (docs/lifecycle.md#standby): `PUT /api/admin/vwr/alarm/{name}`
//! `{"state": "ALARM" | "OK"}` sets the alarm a standby event waits for, as CloudWatch would
//! (the advancer reads it through the same `AlarmStates` trait). Admin key or the admin role
//! required ([`ALARM_ROLES`], docs/console.md#roles).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::put;
use axum::{Json, Router, middleware};
use serde::Deserialize;
use vwr_core::admin_auth::{AdminAuth, Role, RouteRoles, require_admin, require_role};
use vwr_core::http::{json_body, no_store, path_error};
use vwr_core::{ApiError, ErrorCode};
use vwr_tier1::lifecycle::validate_alarm_name;
use vwr_tier1::store::ManualAlarms;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct AlarmBody {
    state: Option<String>,
}

/// The least role of the alarm route: setting an alarm opens standby events, an admin's call.
pub const ALARM_ROLES: RouteRoles = &[("PUT", "/api/admin/vwr/alarm/{name}", Role::Admin)];

/// The route, behind `auth` and [`ALARM_ROLES`].
pub fn router(alarms: Arc<ManualAlarms>, auth: AdminAuth) -> Router {
    Router::new()
        .route("/api/admin/vwr/alarm/{name}", put(set_alarm))
        .layer(middleware::from_fn(vwr_core::http::json_errors))
        .with_state(alarms)
        .layer(middleware::from_fn_with_state(ALARM_ROLES, require_role))
        .layer(middleware::from_fn_with_state(auth, require_admin))
}

async fn set_alarm(
    State(alarms): State<Arc<ManualAlarms>>,
    name: Result<Path<String>, axum::extract::rejection::PathRejection>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let Path(name) = name.map_err(path_error)?;
    validate_alarm_name(&name).map_err(|e| ApiError::bad_request(ErrorCode::InvalidPath, e.to_string()))?;
    let body: AlarmBody = json_body(&body)?;
    let alarm = match body.state.as_deref() {
        Some("ALARM") => true,
        Some("OK") => false,
        _ => {
            return Err(ApiError::bad_request(
                ErrorCode::InvalidBody,
                "body must be {\"state\": \"ALARM\" | \"OK\"}",
            ));
        }
    };
    alarms.set(&name, alarm);
    tracing::info!(event = "dev.alarm_set", alarm = %name, state = if alarm { "ALARM" } else { "OK" });
    Ok(no_store(
        Json(serde_json::json!({ "name": name, "state": if alarm { "ALARM" } else { "OK" } }))
            .into_response(),
    ))
}
