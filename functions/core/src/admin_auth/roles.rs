//! The least role of each admin route, enforced before the handler runs
//! (docs/console.md#roles): each tier keeps one table next to its admin router and layers
//! [`require_role`] inside [`require_admin`](super::require_admin).

use axum::extract::{MatchedPath, Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::identity::{AdminIdentity, Role};
use crate::{ApiError, ErrorCode};

/// One admin route's least role: the method, the path as the router declares it
/// (`/api/admin/vwr/pause/{event_id}`), the role.
pub type RouteRole = (&'static str, &'static str, Role);

/// A tier's table of [`RouteRole`]s. A route missing from it needs [`Role::Admin`].
pub type RouteRoles = &'static [RouteRole];

/// The least role `table` gives `method` on the router path `path` ([`Role::Admin`] when the
/// table does not name it; HEAD is GET).
pub fn least_role(table: RouteRoles, method: &Method, path: &str) -> Role {
    let method = if method == Method::HEAD { Method::GET.as_str() } else { method.as_str() };
    table.iter().find(|(m, p, _)| *m == method && *p == path).map_or(Role::Admin, |(_, _, r)| *r)
}

/// The refusal of a call outside the caller's role: 403 `forbidden_role`.
pub fn forbidden_role(needed: Role, held: Role) -> ApiError {
    ApiError::forbidden(
        ErrorCode::ForbiddenRole,
        format!("this call needs the {needed} role; you have the {held} role"),
    )
}

/// `axum::middleware::from_fn_with_state(TABLE, require_role)`, layered inside
/// [`require_admin`](super::require_admin) (which sets the [`AdminIdentity`]): refuses, before
/// the handler runs, a caller whose role is below the route's least role. Without an identity
/// (the guard is missing) everything is refused.
pub async fn require_role(State(table): State<RouteRoles>, req: Request, next: Next) -> Response {
    let Some(who) = req.extensions().get::<AdminIdentity>() else {
        tracing::error!(event = "admin.role_without_identity", path = %req.uri().path());
        return ApiError::forbidden(ErrorCode::Forbidden, "admin routes need an authenticated caller")
            .into_response();
    };
    let route = req.extensions().get::<MatchedPath>().map_or_else(|| req.uri().path(), MatchedPath::as_str);
    let needed = least_role(table, req.method(), route);
    if who.role >= needed {
        return next.run(req).await;
    }
    tracing::warn!(
        event = "admin.role_refused",
        name = %who.name,
        role = who.role.as_str(),
        needed = needed.as_str(),
        method = %req.method(),
        route,
    );
    forbidden_role(needed, who.role).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: RouteRoles =
        &[("GET", "/a/{id}", Role::Viewer), ("POST", "/a/{id}", Role::Operator), ("PUT", "/b", Role::Admin)];

    #[test]
    fn lookup_by_method_and_router_path() {
        assert_eq!(least_role(TABLE, &Method::GET, "/a/{id}"), Role::Viewer);
        assert_eq!(least_role(TABLE, &Method::HEAD, "/a/{id}"), Role::Viewer);
        assert_eq!(least_role(TABLE, &Method::POST, "/a/{id}"), Role::Operator);
        // Not in the table: admin only.
        assert_eq!(least_role(TABLE, &Method::DELETE, "/a/{id}"), Role::Admin);
        assert_eq!(least_role(TABLE, &Method::GET, "/a/x"), Role::Admin);
    }

    #[test]
    fn the_refusal_names_the_role_needed() {
        let e = forbidden_role(Role::Operator, Role::Viewer);
        assert_eq!((e.status.as_u16(), e.code.as_str()), (403, "forbidden_role"));
        assert!(e.message.contains("needs the operator role"), "{}", e.message);
    }
}
