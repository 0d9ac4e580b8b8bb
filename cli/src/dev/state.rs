//! Local development secrets kept in `.vwr/dev.json` (or `$VWR_DEV_DIR/dev.json`), created on
//! first use with owner-only permissions, so `vwr dev`, `vwr admin` and the local edge proxy
//! agree on keys across restarts. Never used by the Lambdas.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use vwr_core::HmacKeyring;

/// Secrets of the local server.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DevState {
    pub admin_key: String,
    pub tier1_keys: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier2_keys: Option<String>,
    /// The keys the edge verifier gets (derived from `tier1_keys`), for the local edge proxy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edge_keys: Option<String>,
    /// The ES256 key `vwr dev` signs console tokens with (`vwr admin console-token`), published
    /// in its JWKS (docs/console.md#sign-in-locally): kept so tokens outlive a restart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub console_keys: Option<String>,
    /// Where the last `vwr dev` of this directory listens: the address `vwr admin`, `watch`,
    /// `report`, `preview` and `loadtest` use when none is given (docs/cli.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// A problem with the dev state file.
#[derive(Debug, thiserror::Error)]
pub enum DevStateError {
    #[error("could not read or write {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path} is not valid: {reason} (delete it to start afresh)")]
    Invalid { path: PathBuf, reason: String },
    #[error("could not generate keys: {0}")]
    Keys(String),
}

/// Directory of the dev state.
pub fn dir() -> PathBuf {
    std::env::var_os("VWR_DEV_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(".vwr"))
}

pub fn path() -> PathBuf {
    dir().join("dev.json")
}

/// Reads the state if it exists.
pub fn read() -> Result<Option<DevState>, DevStateError> {
    let p = path();
    match std::fs::read_to_string(&p) {
        Ok(s) => serde_json::from_str(&s)
            .map(Some)
            .map_err(|e| DevStateError::Invalid { path: p, reason: e.to_string() }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(DevStateError::Io { path: p, source }),
    }
}

/// Random URL-safe secret of `bytes` random bytes.
pub fn random_secret(bytes: usize) -> Result<String, DevStateError> {
    use base64::Engine;
    let b = vwr_core::keys::random_bytes(bytes).map_err(|e| DevStateError::Keys(e.to_string()))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b))
}

/// Key id of the tier-2 key a fresh state gets.
const TIER2_KID: &str = "dev2";
/// Key id of the console-token key a fresh state gets.
pub const CONSOLE_KID: &str = "devconsole";

/// Reads the state, creating it with fresh keys when missing.
pub fn load_or_create() -> Result<DevState, DevStateError> {
    let ec = |kid: &str| -> Result<String, DevStateError> {
        Ok(vwr_core::EcKeyring::generate(kid).map_err(|e| DevStateError::Keys(e.to_string()))?.to_text())
    };
    if let Some(mut s) = read()? {
        let ring = HmacKeyring::from_text(&s.tier1_keys, None)
            .map_err(|e| DevStateError::Invalid { path: path(), reason: e.to_string() })?;
        let edge = Some(ring.edge_ring().to_text());
        if s.tier2_keys.is_none() || s.console_keys.is_none() || s.edge_keys != edge {
            s.tier2_keys = match s.tier2_keys.take() {
                Some(k) => Some(k),
                None => Some(ec(TIER2_KID)?),
            };
            s.console_keys = match s.console_keys.take() {
                Some(k) => Some(k),
                None => Some(ec(CONSOLE_KID)?),
            };
            s.edge_keys = edge;
            write(&s)?;
        }
        return Ok(s);
    }
    let ring = HmacKeyring::generate("dev1").map_err(|e| DevStateError::Keys(e.to_string()))?;
    let state = DevState {
        admin_key: random_secret(24)?,
        tier1_keys: ring.to_text(),
        tier2_keys: Some(ec(TIER2_KID)?),
        edge_keys: Some(ring.edge_ring().to_text()),
        console_keys: Some(ec(CONSOLE_KID)?),
        url: None,
    };
    write(&state)?;
    Ok(state)
}

/// The URL a client on this machine reaches a listener at: `0.0.0.0`/`::` become loopback.
pub fn reachable_url(addr: std::net::SocketAddr) -> String {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    let ip = match addr.ip() {
        IpAddr::V4(v4) if v4.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(v6) if v6.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    format!("http://{}", std::net::SocketAddr::new(ip, addr.port()))
}

/// Records where `vwr dev` listens (the state exists: the server made it at start).
pub fn record_url(url: &str) -> Result<(), DevStateError> {
    let mut s = load_or_create()?;
    if s.url.as_deref() != Some(url) {
        s.url = Some(url.to_owned());
        write(&s)?;
    }
    Ok(())
}

/// Writes the state with owner-only permissions.
pub fn write(state: &DevState) -> Result<(), DevStateError> {
    let d = dir();
    let p = path();
    let io = |source| DevStateError::Io { path: p.clone(), source };
    std::fs::create_dir_all(&d).map_err(io)?;
    let json = serde_json::to_string_pretty(state)
        .map_err(|e| DevStateError::Invalid { path: p.clone(), reason: e.to_string() })?;
    let tmp = d.join("dev.json.tmp");
    std::fs::write(&tmp, json).map_err(io)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600)).map_err(io)?;
    }
    std::fs::rename(&tmp, &p).map_err(io)?;
    Ok(())
}
