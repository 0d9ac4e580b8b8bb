//! Who an admin caller is and what they may do (docs/console.md#roles): the role, the identity
//! the admin guard puts on the request, and the pure mapping from a verified JWT's claims (an
//! OpenID Connect sign-in) to an identity.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What an admin caller may do, ordered: `Viewer < Operator < Admin`. A route needs a least
/// role; a higher one may call it too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Reads everything.
    Viewer,
    /// Runs the sale: pause, resume, the message, the outflow, the health hold, passes.
    Operator,
    /// Everything.
    Admin,
}

impl Role {
    /// Every role, lowest first.
    pub const ALL: [Role; 3] = [Role::Viewer, Role::Operator, Role::Admin];

    /// The wire spelling (`viewer`, `operator`, `admin`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Viewer => "viewer",
            Self::Operator => "operator",
            Self::Admin => "admin",
        }
    }

    /// The role of its wire spelling.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// The identity provider's group that grants this role (`vwr-viewer`, `vwr-operator`,
    /// `vwr-admin`).
    pub fn group(self) -> &'static str {
        match self {
            Self::Viewer => "vwr-viewer",
            Self::Operator => "vwr-operator",
            Self::Admin => "vwr-admin",
        }
    }

    /// The role a group grants, if it is one of vwr's.
    pub fn from_group(group: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.group() == group)
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the caller signed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Via {
    /// The admin key of `vwr dev` (`Authorization: Bearer $VWR_ADMIN_KEY`).
    Bearer,
    /// An IAM principal (SigV4), as API Gateway authenticated it.
    Iam,
    /// An OpenID Connect sign-in: a JWT verified by API Gateway's JWT authorizer, or by `vwr dev`.
    Oidc,
}

/// The admin caller, put on the request as an extension by
/// [`require_admin`](super::require_admin): its `name` is the audit's actor, its `role` what
/// [`require_role`](super::require_role) compares with the route's least role. Serialized as
/// `GET /api/admin/vwr/whoami` answers it: `{"name", "role", "via"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdminIdentity {
    pub name: String,
    pub role: Role,
    pub via: Via,
}

/// The audit's actor for the admin key of `vwr dev` (as before roles existed).
pub const BEARER_KEY_NAME: &str = "dev";

impl AdminIdentity {
    /// The admin key of `vwr dev`: [`BEARER_KEY_NAME`], admin.
    pub fn bearer_key() -> Self {
        Self { name: BEARER_KEY_NAME.to_owned(), role: Role::Admin, via: Via::Bearer }
    }

    /// An IAM principal: its ARN, admin.
    pub fn iam(arn: &str) -> Self {
        Self { name: arn.to_owned(), role: Role::Admin, via: Via::Iam }
    }
}

/// The claims of a verified JWT, as JSON values.
pub type Claims = serde_json::Map<String, Value>;

/// The claims of a JWT an upstream authorizer verified (API Gateway's JWT authorizer of the
/// console API), put on the request by the Lambda entry point. Only API Gateway writes the
/// request context, so a client cannot forge them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VerifiedClaims(pub Claims);

impl VerifiedClaims {
    /// From API Gateway's map of strings (payload 2.0 `requestContext.authorizer.jwt.claims`:
    /// every claim a string, an array as `[a b]`).
    pub fn from_strings<I: IntoIterator<Item = (String, String)>>(claims: I) -> Self {
        Self(claims.into_iter().map(|(k, v)| (k, Value::String(v))).collect())
    }
}

/// The default name of the claim that lists the caller's groups (Amazon Cognito's).
pub const DEFAULT_GROUPS_CLAIM: &str = "cognito:groups";

/// The claims tried for the caller's name, in order (the first non-empty string wins).
pub const NAME_CLAIMS: [&str; 6] =
    ["email", "preferred_username", "name", "cognito:username", "username", "sub"];

/// Longest name kept for the audit (longer ones are cut).
pub const MAX_NAME_CHARS: usize = 256;

/// Why verified claims give no identity.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClaimsError {
    #[error("the token names nobody: none of the claims {NAME_CLAIMS:?} is a non-empty string")]
    NoName,
    #[error("the token's {claim:?} claim holds none of the groups vwr-viewer, vwr-operator, vwr-admin")]
    NoRole { claim: String },
}

/// Checks a groups claim name (`VWR_ADMIN_GROUPS_CLAIM`, `--admin-oidc-groups-claim`):
/// 1 to 128 visible characters.
pub fn valid_groups_claim(name: &str) -> Result<&str, String> {
    let ok = (1..=128).contains(&name.len()) && name.chars().all(|c| c.is_ascii_graphic());
    if ok { Ok(name) } else { Err("a claim name is 1 to 128 visible ASCII characters".into()) }
}

/// The identity of verified `claims`: the name from [`NAME_CLAIMS`], the role the highest of
/// vwr's groups in the claim `groups_claim` (see [`groups`]).
pub fn identity_from_claims(claims: &Claims, groups_claim: &str) -> Result<AdminIdentity, ClaimsError> {
    let name = NAME_CLAIMS
        .iter()
        .filter_map(|k| claims.get(*k).and_then(Value::as_str))
        .map(|s| s.chars().filter(|c| !c.is_control()).take(MAX_NAME_CHARS).collect::<String>())
        .map(|s| s.trim().to_owned())
        .find(|s| !s.is_empty())
        .ok_or(ClaimsError::NoName)?;
    let role = claims
        .get(groups_claim)
        .map(groups)
        .unwrap_or_default()
        .iter()
        .filter_map(|g| Role::from_group(g))
        .max()
        .ok_or_else(|| ClaimsError::NoRole { claim: groups_claim.to_owned() })?;
    Ok(AdminIdentity { name, role, via: Via::Oidc })
}

/// The groups a claim lists: a JSON array of strings; or a string holding a JSON array
/// (`["a","b"]`), API Gateway's rendering of an array (`[a b]`), or names separated by spaces
/// or commas (one name alone included).
pub fn groups(value: &Value) -> Vec<String> {
    match value {
        Value::Array(items) => items.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        Value::String(s) => {
            let s = s.trim();
            if let Ok(list) = serde_json::from_str::<Vec<String>>(s) {
                return list;
            }
            let inner = s.strip_prefix('[').and_then(|t| t.strip_suffix(']')).unwrap_or(s);
            inner
                .split(|c: char| c.is_whitespace() || c == ',')
                .map(|g| g.trim_matches('"'))
                .filter(|g| !g.is_empty())
                .map(str::to_owned)
                .collect()
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claims(v: Value) -> Claims {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn roles_are_ordered_and_spelled_lowercase() {
        assert!(Role::Viewer < Role::Operator && Role::Operator < Role::Admin);
        assert_eq!(serde_json::to_value(Role::Operator).unwrap(), json!("operator"));
        assert_eq!(serde_json::from_value::<Role>(json!("viewer")).unwrap(), Role::Viewer);
        assert!(serde_json::from_value::<Role>(json!("Admin")).is_err());
        assert_eq!(Role::parse("admin"), Some(Role::Admin));
        assert_eq!(Role::from_group("vwr-operator"), Some(Role::Operator));
        assert_eq!(Role::from_group("operator"), None);
        let who = AdminIdentity { name: "a@b".into(), role: Role::Viewer, via: Via::Oidc };
        assert_eq!(
            serde_json::to_value(&who).unwrap(),
            json!({"name": "a@b", "role": "viewer", "via": "oidc"})
        );
    }

    #[test]
    fn groups_in_every_form() {
        let want = vec!["vwr-admin".to_owned(), "vwr-operator".to_owned()];
        assert_eq!(groups(&json!("[vwr-admin vwr-operator]")), want);
        assert_eq!(groups(&json!(["vwr-admin", "vwr-operator"])), want);
        assert_eq!(groups(&json!("[\"vwr-admin\",\"vwr-operator\"]")), want);
        assert_eq!(groups(&json!("vwr-admin, vwr-operator")), want);
        assert_eq!(groups(&json!("vwr-admin")), vec!["vwr-admin".to_owned()]);
        assert_eq!(groups(&json!("[]")), Vec::<String>::new());
        assert_eq!(groups(&json!(7)), Vec::<String>::new());
    }

    #[test]
    fn the_highest_vwr_group_is_the_role() {
        let c = claims(json!({"sub": "u1", "cognito:groups": "[staff vwr-viewer vwr-operator]"}));
        assert_eq!(identity_from_claims(&c, DEFAULT_GROUPS_CLAIM).unwrap().role, Role::Operator);
        let c = claims(json!({"sub": "u1", "cognito:groups": ["vwr-admin", "vwr-viewer"]}));
        assert_eq!(identity_from_claims(&c, DEFAULT_GROUPS_CLAIM).unwrap().role, Role::Admin);
        // Another claim name: the default one is not read.
        let c = claims(json!({"sub": "u1", "groups": ["vwr-viewer"], "cognito:groups": ["vwr-admin"]}));
        assert_eq!(identity_from_claims(&c, "groups").unwrap().role, Role::Viewer);
    }

    #[test]
    fn no_vwr_group_is_refused() {
        for c in [
            json!({"sub": "u1"}),
            json!({"sub": "u1", "cognito:groups": "[staff admins]"}),
            json!({"sub": "u1", "cognito:groups": "vwr-superuser"}),
            json!({"sub": "u1", "groups": ["vwr-admin"]}),
        ] {
            assert_eq!(
                identity_from_claims(&claims(c), DEFAULT_GROUPS_CLAIM),
                Err(ClaimsError::NoRole { claim: DEFAULT_GROUPS_CLAIM.into() })
            );
        }
    }

    #[test]
    fn the_name_falls_back_claim_by_claim() {
        let g = json!(["vwr-viewer"]);
        let name = |v: Value| {
            let mut c = claims(v);
            c.insert("cognito:groups".into(), g.clone());
            identity_from_claims(&c, DEFAULT_GROUPS_CLAIM).map(|i| i.name)
        };
        let all = json!({"email": "ann@example.com", "preferred_username": "ann", "name": "Ann", "sub": "s"});
        assert_eq!(name(all).unwrap(), "ann@example.com");
        assert_eq!(
            name(json!({"email": " ", "preferred_username": "ann", "name": "Ann", "sub": "s"})).unwrap(),
            "ann"
        );
        assert_eq!(name(json!({"name": "Ann Lee", "sub": "s"})).unwrap(), "Ann Lee");
        assert_eq!(name(json!({"cognito:username": "ann1", "sub": "s"})).unwrap(), "ann1");
        assert_eq!(name(json!({"sub": "s-1"})).unwrap(), "s-1");
        assert_eq!(name(json!({"email": 5, "sub": "s-1"})).unwrap(), "s-1");
        assert_eq!(name(json!({})), Err(ClaimsError::NoName));
        assert_eq!(name(json!({"name": "a\u{7}b\nc"})).unwrap(), "abc");
        assert_eq!(name(json!({"name": "x".repeat(1000)})).unwrap().len(), MAX_NAME_CHARS);
    }

    #[test]
    fn api_gateway_strings_map_like_json() {
        let c = VerifiedClaims::from_strings([
            ("email".to_owned(), "ops@example.com".to_owned()),
            ("cognito:groups".to_owned(), "[vwr-viewer vwr-admin]".to_owned()),
        ]);
        let who = identity_from_claims(&c.0, DEFAULT_GROUPS_CLAIM).unwrap();
        assert_eq!(who, AdminIdentity { name: "ops@example.com".into(), role: Role::Admin, via: Via::Oidc });
    }

    #[test]
    fn groups_claim_names_are_checked() {
        assert!(valid_groups_claim("cognito:groups").is_ok());
        assert!(valid_groups_claim("https://example.com/groups").is_ok());
        assert!(valid_groups_claim("").is_err());
        assert!(valid_groups_claim("my groups").is_err());
        assert!(valid_groups_claim(&"g".repeat(129)).is_err());
    }
}
