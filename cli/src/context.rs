//! Named stacks in the operator's config file (`$VWR_CONFIG`, else
//! `$XDG_CONFIG_HOME/vwr/config.toml`, else `~/.config/vwr/config.toml`), and `vwr context
//! set|use|list|remove` (docs/cli.md#addressing-a-stack). A context holds an address and how to
//! sign, never a key: keys stay in the environment or `vwr dev`'s state file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Subcommand;
use serde::{Deserialize, Serialize};

/// The config file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The context used when none is named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<String>,
    #[serde(default)]
    pub contexts: BTreeMap<String, Context>,
}

/// One stack: where its admin API is and how to sign for it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Context {
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier2_url: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sigv4: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
}

/// Why `vwr context …` fails, or the config file cannot be read; the message is what `vwr` prints.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    #[error("no config file: set VWR_CONFIG (or HOME)")]
    NoConfigFile,
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}: {source}", path.display())]
    Toml { path: PathBuf, source: Box<toml::de::Error> },
    #[error("{}: {source}", path.display())]
    Write { path: PathBuf, source: Box<toml::ser::Error> },
    /// A context of the file with a bad name.
    #[error("{}: {source}", path.display())]
    InFile { path: PathBuf, source: Box<ContextError> },
    /// A context of the file with a bad URL.
    #[error("{}: context {name}: {source}", path.display())]
    BadContext { path: PathBuf, name: String, source: Box<ContextError> },
    #[error("{}: current context {name:?} is not defined", path.display())]
    CurrentUndefined { path: PathBuf, name: String },
    #[error("{0:?} is not a context name (letters, digits, - _ .; at most 64)")]
    BadName(String),
    #[error("{0:?} is not a URL")]
    NotAUrl(String),
    #[error(
        "{0:?} is not an http(s) URL with a host, e.g. https://abc123.execute-api.eu-west-1.amazonaws.com"
    )]
    NotHttp(String),
    #[error("a context keeps no key: give it per command (--key or VWR_ADMIN_KEY), or use --sigv4")]
    KeepsNoKey,
    #[error("give the context's address: vwr context set NAME --url URL")]
    NoUrl,
    #[error("--region is for signing: give it with --sigv4")]
    RegionWithoutSigv4,
    #[error(
        "no context {name:?}: {} defines none (add one with `vwr context set {name} --url URL`)",
        path.display()
    )]
    NoneDefined { name: String, path: PathBuf },
    #[error("no context {name:?} in {} (there are: {names})", path.display())]
    Unknown { name: String, path: PathBuf, names: String },
}

/// `vwr context …`.
#[derive(Debug, Clone, Subcommand)]
pub enum ContextCommand {
    /// Add or replace a context from the global flags: `vwr context set prod --url URL
    /// [--tier2-url URL] [--sigv4 --region R]` (keys are never stored).
    Set {
        name: String,
        /// Make it the current context too.
        #[arg(long = "use")]
        use_it: bool,
    },
    /// Make NAME the context every command uses when none is named.
    Use { name: String },
    /// The contexts, the current one marked.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Forget a context.
    Remove { name: String },
}

/// Where the config file is: `$VWR_CONFIG`, else the XDG config directory.
pub fn path(env: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf, ContextError> {
    if let Some(p) = env("VWR_CONFIG").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    if let Some(x) = env("XDG_CONFIG_HOME").filter(|p| !p.is_empty()) {
        return Ok(Path::new(&x).join("vwr").join("config.toml"));
    }
    match env("HOME").filter(|p| !p.is_empty()) {
        Some(home) => Ok(Path::new(&home).join(".config").join("vwr").join("config.toml")),
        None => Err(ContextError::NoConfigFile),
    }
}

/// Reads the config; a missing file is an empty config.
pub fn load(path: &Path) -> Result<Config, ContextError> {
    let path_buf = || path.to_owned();
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let config: Config = toml::from_str(&text)
                .map_err(|e| ContextError::Toml { path: path_buf(), source: Box::new(e) })?;
            for (name, c) in &config.contexts {
                check_name(name)
                    .map_err(|e| ContextError::InFile { path: path_buf(), source: Box::new(e) })?;
                check_url(&c.url).map_err(|e| ContextError::BadContext {
                    path: path_buf(),
                    name: name.clone(),
                    source: Box::new(e),
                })?;
            }
            if let Some(cur) = &config.current
                && !config.contexts.contains_key(cur)
            {
                return Err(ContextError::CurrentUndefined { path: path_buf(), name: cur.clone() });
            }
            Ok(config)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
        Err(source) => Err(ContextError::Io { path: path_buf(), source }),
    }
}

/// Writes the config whole (a temporary file renamed over it), owner-only.
pub fn save(path: &Path, config: &Config) -> Result<(), ContextError> {
    let text = toml::to_string_pretty(config)
        .map_err(|e| ContextError::Write { path: path.to_owned(), source: Box::new(e) })?;
    let io = |source| ContextError::Io { path: path.to_owned(), source };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let tmp = path.with_extension("toml.tmp");
    std::fs::write(&tmp, text).map_err(io)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600)).map_err(io)?;
    }
    std::fs::rename(&tmp, path).map_err(io)
}

/// A context's name: letters, digits, `-`, `_`, `.`, at most 64.
pub fn check_name(name: &str) -> Result<(), ContextError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok { Ok(()) } else { Err(ContextError::BadName(name.to_owned())) }
}

/// An admin API's base URL: `http://` or `https://` with a host.
pub fn check_url(url: &str) -> Result<(), ContextError> {
    let uri: http::Uri = url.parse().map_err(|_| ContextError::NotAUrl(url.to_owned()))?;
    match (uri.scheme_str(), uri.host()) {
        (Some("http" | "https"), Some(h)) if !h.is_empty() => Ok(()),
        _ => Err(ContextError::NotHttp(url.to_owned())),
    }
}

/// What `vwr context set` takes from the global flags.
#[derive(Debug, Clone, Default)]
pub struct SetFlags {
    pub url: Option<String>,
    pub tier2_url: Option<String>,
    pub sigv4: bool,
    pub region: Option<String>,
    pub key_given: bool,
}

/// Runs `vwr context …` on the config at `path`; answers what to print.
pub fn run(cmd: ContextCommand, flags: &SetFlags, path: &Path) -> Result<String, ContextError> {
    let mut config = load(path)?;
    match cmd {
        ContextCommand::Set { name, use_it } => {
            check_name(&name)?;
            if flags.key_given {
                return Err(ContextError::KeepsNoKey);
            }
            let url = flags.url.clone().ok_or(ContextError::NoUrl)?;
            check_url(&url)?;
            if let Some(t2) = &flags.tier2_url {
                check_url(t2)?;
            }
            if flags.region.is_some() && !flags.sigv4 {
                return Err(ContextError::RegionWithoutSigv4);
            }
            let ctx = Context {
                url: url.trim_end_matches('/').to_owned(),
                tier2_url: flags.tier2_url.as_ref().map(|u| u.trim_end_matches('/').to_owned()),
                sigv4: flags.sigv4,
                region: flags.region.clone(),
            };
            let replaced = config.contexts.insert(name.clone(), ctx).is_some();
            if use_it || config.current.is_none() {
                config.current = Some(name.clone());
            }
            save(path, &config)?;
            let current = if config.current.as_deref() == Some(name.as_str()) { ", current" } else { "" };
            Ok(format!(
                "context {name} {}{current} ({})",
                if replaced { "replaced" } else { "added" },
                path.display()
            ))
        }
        ContextCommand::Use { name } => {
            if !config.contexts.contains_key(&name) {
                return Err(unknown(&name, &config, path));
            }
            config.current = Some(name.clone());
            save(path, &config)?;
            Ok(format!("current context: {name}"))
        }
        ContextCommand::Remove { name } => {
            if config.contexts.remove(&name).is_none() {
                return Err(unknown(&name, &config, path));
            }
            if config.current.as_deref() == Some(name.as_str()) {
                config.current = None;
            }
            save(path, &config)?;
            Ok(format!("context {name} removed"))
        }
        ContextCommand::List { json } => {
            Ok(if json { list_json(&config) } else { list_table(&config, path) })
        }
    }
}

/// The error for a context that is not in the file.
pub fn unknown(name: &str, config: &Config, path: &Path) -> ContextError {
    let names: Vec<&str> = config.contexts.keys().map(String::as_str).collect();
    let (name, path) = (name.to_owned(), path.to_owned());
    if names.is_empty() {
        ContextError::NoneDefined { name, path }
    } else {
        ContextError::Unknown { name, path, names: names.join(", ") }
    }
}

fn list_json(config: &Config) -> String {
    let contexts: Vec<serde_json::Value> = config
        .contexts
        .iter()
        .map(|(name, c)| {
            serde_json::json!({
                "name": name,
                "current": config.current.as_deref() == Some(name.as_str()),
                "url": c.url,
                "tier2Url": c.tier2_url,
                "sigv4": c.sigv4,
                "region": c.region,
            })
        })
        .collect();
    serde_json::to_string_pretty(&serde_json::json!({ "contexts": contexts })).unwrap_or_default()
}

fn list_table(config: &Config, path: &Path) -> String {
    if config.contexts.is_empty() {
        return format!("no contexts in {} (add one with `vwr context set NAME --url URL`)", path.display());
    }
    let mut t = crate::human::table(["", "NAME", "URL", "TIER-2 URL", "AUTH"]);
    for (name, c) in &config.contexts {
        let auth = match (c.sigv4, &c.region) {
            (true, Some(r)) => format!("sigv4 ({r})"),
            (true, None) => "sigv4".to_owned(),
            (false, _) => "key".to_owned(),
        };
        let mark = if config.current.as_deref() == Some(name.as_str()) { "*" } else { "" };
        t.add_row([mark, name, &c.url, c.tier2_url.as_deref().unwrap_or("—"), &auth]);
    }
    t.to_string()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn flags(url: &str) -> SetFlags {
        SetFlags { url: Some(url.into()), ..SetFlags::default() }
    }

    #[test]
    fn contexts_are_set_used_listed_and_removed_in_the_file() {
        let dir = std::env::temp_dir().join(format!("vwr-ctx-{}", std::process::id()));
        let path = dir.join("vwr").join("config.toml");
        let _ = std::fs::remove_dir_all(&dir);
        let set = |name: &str, f: &SetFlags| {
            run(ContextCommand::Set { name: name.into(), use_it: false }, f, &path)
        };
        assert!(set("local", &flags("http://127.0.0.1:8080/")).unwrap().contains("added, current"));
        let prod = SetFlags {
            url: Some("https://abc.execute-api.eu-west-1.amazonaws.com".into()),
            tier2_url: Some("https://t2.example".into()),
            sigv4: true,
            region: Some("eu-west-1".into()),
            key_given: false,
        };
        assert_eq!(set("prod", &prod).unwrap(), format!("context prod added ({})", path.display()));
        let c = load(&path).unwrap();
        assert_eq!(c.current.as_deref(), Some("local"), "the first context becomes current, not later ones");
        assert_eq!(c.contexts["local"].url, "http://127.0.0.1:8080", "trailing slash trimmed");
        assert_eq!(c.contexts["prod"].region.as_deref(), Some("eu-west-1"));

        assert_eq!(
            run(ContextCommand::Use { name: "prod".into() }, &SetFlags::default(), &path).unwrap(),
            "current context: prod"
        );
        let list = run(ContextCommand::List { json: false }, &SetFlags::default(), &path).unwrap();
        assert!(
            list.lines().any(|l| l.contains('*') && l.contains("prod") && l.contains("sigv4 (eu-west-1)")),
            "{list}"
        );
        let json: serde_json::Value = serde_json::from_str(
            &run(ContextCommand::List { json: true }, &SetFlags::default(), &path).unwrap(),
        )
        .unwrap();
        assert_eq!(json["contexts"][1]["current"], true);

        let e = run(ContextCommand::Use { name: "stage".into() }, &SetFlags::default(), &path)
            .unwrap_err()
            .to_string();
        assert!(e.contains("there are: local, prod"), "{e}");
        assert!(
            set("x", &SetFlags { key_given: true, ..flags("http://h") })
                .unwrap_err()
                .to_string()
                .contains("keeps no key")
        );
        assert!(set("x", &flags("ftp://h")).unwrap_err().to_string().contains("http(s)"));
        assert!(set("x y", &flags("http://h")).unwrap_err().to_string().contains("not a context name"));
        assert!(set("x", &SetFlags::default()).unwrap_err().to_string().contains("--url URL"));
        assert_eq!(load(&path).unwrap().contexts.len(), 2, "refused sets change nothing");

        run(ContextCommand::Remove { name: "prod".into() }, &SetFlags::default(), &path).unwrap();
        let c = load(&path).unwrap();
        assert_eq!((c.current, c.contexts.len()), (None, 1), "removing the current context unsets it");

        std::fs::write(&path, "current = \"nope\"\n").unwrap();
        assert!(load(&path).unwrap_err().to_string().contains("current context \"nope\" is not defined"));
        std::fs::write(&path, "[contexts.a]\nurl = \"http://h\"\nkey = \"secret\"\n").unwrap();
        assert!(
            load(&path).unwrap_err().to_string().contains("unknown field"),
            "a key in the file is refused"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_config_file_is_found_by_variable_then_xdg_then_home() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| (*v).to_owned())
        };
        assert_eq!(
            path(&env(&[("VWR_CONFIG", "/c.toml"), ("HOME", "/h")])).unwrap(),
            PathBuf::from("/c.toml")
        );
        assert_eq!(
            path(&env(&[("XDG_CONFIG_HOME", "/x"), ("HOME", "/h")])).unwrap(),
            PathBuf::from("/x/vwr/config.toml")
        );
        assert_eq!(path(&env(&[("HOME", "/h")])).unwrap(), PathBuf::from("/h/.config/vwr/config.toml"));
        assert!(path(&env(&[])).is_err());
    }
}
