//! Secrets and admin settings of the Lambdas, loaded at start (one place for both tiers):
//! key rings from the environment or Secrets Manager, the Redis URL, the CloudFront origin
//! secret, the admin principals. Every failure names the variable at fault.

use vwr_core::admin_auth::{AdminAuth, DEFAULT_GROUPS_CLAIM, PrincipalPatterns};
use vwr_core::config::{ConfigError, Env, KeySource, KeyVars, LinkSource, TIER1_LINK_SECRET};
use vwr_core::http::OriginSecret;
use vwr_core::keys::{KeyMaterial, KeyRing};
use vwr_core::token::Tier1Link;

/// Reads a secret string from Secrets Manager.
pub async fn load_secret(sdk: &aws_config::SdkConfig, id: &str) -> Result<String, String> {
    let client = aws_sdk_secretsmanager::Client::new(sdk);
    let out = client.get_secret_value().secret_id(id).send().await.map_err(|e| {
        format!("could not read the secret: {}", aws_sdk_secretsmanager::error::DisplayErrorContext(&e))
    })?;
    out.secret_string().map(str::to_owned).ok_or_else(|| "the secret has no string value".to_owned())
}

fn invalid(name: &str, value: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid { name: name.into(), value: value.into(), reason: reason.into() }
}

/// The key ring of `source` (the variables `vars` named it): parsed from the environment, or
/// loaded from Secrets Manager (JSON form).
pub async fn ring<K: KeyMaterial>(
    source: &KeySource,
    vars: KeyVars,
    sdk: &aws_config::SdkConfig,
) -> Result<KeyRing<K>, ConfigError> {
    match source {
        KeySource::Env { text, signing_kid } => KeyRing::from_text(text, signing_kid.as_deref())
            .map_err(|e| invalid(vars.keys, "…", e.to_string())),
        KeySource::Secret(id) => {
            let json = load_secret(sdk, id).await.map_err(|r| invalid(vars.secret, id, r))?;
            KeyRing::from_json(&json).map_err(|e| invalid(vars.secret, id, e.to_string()))
        }
    }
}

/// Tier 2's reader of callers' tier-1 tokens (the tier-2 API, the authorizer), when the tier-1
/// link keys are configured (`VWR_TIER1_LINK_SECRET_ID`, or `VWR_TIER1_EDGE_KEYS` +
/// `VWR_TIER1_PLACE_KEYS`: derived keys only; the master keys stop the start-up), with the
/// cookie prefix (`VWR_COOKIE_PREFIX`); the issuer and audience as tier 1 reads them.
pub async fn tier1_link(
    env: &Env,
    sdk: &aws_config::SdkConfig,
) -> Result<Option<(Tier1Link, String)>, ConfigError> {
    let (edge, place) = match LinkSource::from_env(env)? {
        None => return Ok(None),
        Some(LinkSource::Env { edge, place }) => (edge, place),
        Some(LinkSource::Secret(id)) => {
            let json = load_secret(sdk, &id).await.map_err(|r| invalid(TIER1_LINK_SECRET, &id, r))?;
            Tier1Link::rings_from_json(&json).map_err(|e| invalid(TIER1_LINK_SECRET, &id, e.to_string()))?
        }
    };
    let link = Tier1Link::checked(
        edge,
        place,
        env.string("VWR_TOKEN_ISSUER", "vwr"),
        env.string("VWR_TOKEN_AUDIENCE", "vwr-edge"),
    )
    .map_err(|e| invalid(TIER1_LINK_SECRET, "…", e.to_string()))?;
    Ok(Some((link, env.string("VWR_COOKIE_PREFIX", "vwr_t1_"))))
}

/// The Redis URL(s): `VWR_REDIS_URL`, or the string of the Secrets Manager secret
/// `VWR_REDIS_URL_SECRET_ID` (it holds the password). Returns the text and the variable it
/// came from.
pub async fn redis_url(
    env: &Env,
    sdk: &aws_config::SdkConfig,
) -> Result<(String, &'static str), ConfigError> {
    match (env.get("VWR_REDIS_URL"), env.get("VWR_REDIS_URL_SECRET_ID")) {
        (Some(url), _) => Ok((url.to_owned(), "VWR_REDIS_URL")),
        (None, Some(id)) => {
            let url = load_secret(sdk, id).await.map_err(|r| invalid("VWR_REDIS_URL_SECRET_ID", id, r))?;
            Ok((url.trim().to_owned(), "VWR_REDIS_URL_SECRET_ID"))
        }
        (None, None) => Err(ConfigError::Missing {
            name: "VWR_REDIS_URL".into(),
            hint: "the tier-2 Lambdas need Redis (VWR_REDIS_URL or VWR_REDIS_URL_SECRET_ID)".into(),
        }),
    }
}

/// The origin secret of an API behind CloudFront (`VWR_ORIGIN_SECRET_ID`, or
/// `VWR_ORIGIN_SECRET` given directly); `None` when neither is set (no check). From Secrets
/// Manager it reloads every few minutes and on an unknown value (terraform/README.md,
/// "Rotation"): the current value, and the previous one while the current is younger than
/// [`vwr_core::http::ORIGIN_PREVIOUS_GRACE`] — and no longer than that after the instance saw
/// the rotation ([`OriginSecret`]).
pub async fn origin_secret(
    env: &Env,
    sdk: &aws_config::SdkConfig,
) -> Result<Option<OriginSecret>, ConfigError> {
    match (env.get("VWR_ORIGIN_SECRET"), env.get("VWR_ORIGIN_SECRET_ID")) {
        (Some(_), Some(_)) => Err(invalid(
            "VWR_ORIGIN_SECRET",
            "…",
            "set either VWR_ORIGIN_SECRET or VWR_ORIGIN_SECRET_ID, not both",
        )),
        (Some(v), None) => OriginSecret::new(v).map(Some).map_err(|r| invalid("VWR_ORIGIN_SECRET", "…", r)),
        (None, Some(id)) => {
            let client = aws_sdk_secretsmanager::Client::new(sdk);
            let values =
                origin_values(&client, id).await.map_err(|r| invalid("VWR_ORIGIN_SECRET_ID", id, r))?;
            let id_owned = id.to_owned();
            let reload: vwr_core::http::OriginSecretReload = std::sync::Arc::new(move || {
                let (client, id) = (client.clone(), id_owned.clone());
                Box::pin(async move { origin_values(&client, &id).await })
            });
            OriginSecret::reloading(&values, reload)
                .map(Some)
                .map_err(|r| invalid("VWR_ORIGIN_SECRET_ID", id, r))
        }
        (None, None) => Ok(None),
    }
}

/// The accepted origin secrets: `AWSCURRENT`, then `AWSPREVIOUS` while the current version is
/// younger than the grace period (and exists).
pub async fn origin_values(client: &aws_sdk_secretsmanager::Client, id: &str) -> Result<Vec<String>, String> {
    let read = |stage: &'static str| client.get_secret_value().secret_id(id).version_stage(stage).send();
    let current = read("AWSCURRENT").await.map_err(|e| {
        format!("could not read the secret: {}", aws_sdk_secretsmanager::error::DisplayErrorContext(&e))
    })?;
    let mut values = vec![current.secret_string().ok_or("the secret has no string value")?.to_owned()];
    let now = i64::try_from(vwr_core::time::now_secs()).unwrap_or(i64::MAX);
    let grace = i64::try_from(vwr_core::http::ORIGIN_PREVIOUS_GRACE.as_secs()).unwrap_or(i64::MAX);
    let young = current.created_date().is_some_and(|c| now - c.secs() < grace);
    if young
        && let Ok(previous) = read("AWSPREVIOUS").await
        && let Some(v) = previous.secret_string()
    {
        values.push(v.to_owned());
    }
    Ok(values)
}

/// The variable naming the JWT claim that lists a console user's groups.
pub const ADMIN_GROUPS_CLAIM: &str = "VWR_ADMIN_GROUPS_CLAIM";

/// Admin authentication of the Lambdas: IAM, restricted to `VWR_ADMIN_PRINCIPALS` if set; or
/// the console API's verified JWT claims, the role from the groups in the claim
/// `VWR_ADMIN_GROUPS_CLAIM` (default `cognito:groups`; docs/console.md#roles).
pub fn iam_admin_auth(env: &Env) -> Result<AdminAuth, ConfigError> {
    let raw = env.get("VWR_ADMIN_PRINCIPALS").unwrap_or("");
    let auth = PrincipalPatterns::parse(raw)
        .map(AdminAuth::iam)
        .map_err(|r| invalid("VWR_ADMIN_PRINCIPALS", raw, r))?;
    let claim = env.get(ADMIN_GROUPS_CLAIM).unwrap_or(DEFAULT_GROUPS_CLAIM);
    auth.with_groups_claim(claim).map_err(|r| invalid(ADMIN_GROUPS_CLAIM, claim, r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_groups_claim_is_read_and_checked_at_start() {
        let auth = iam_admin_auth(&Env::default()).unwrap();
        assert_eq!(auth.groups_claim(), "cognito:groups");
        let auth = iam_admin_auth(&Env::from_pairs([(ADMIN_GROUPS_CLAIM, "groups")])).unwrap();
        assert_eq!(auth.groups_claim(), "groups");
        let e = iam_admin_auth(&Env::from_pairs([(ADMIN_GROUPS_CLAIM, "my groups")])).unwrap_err();
        assert!(e.to_string().contains(ADMIN_GROUPS_CLAIM), "{e}");
        assert!(iam_admin_auth(&Env::from_pairs([("VWR_ADMIN_PRINCIPALS", "ops-*")])).is_err());
    }
}
