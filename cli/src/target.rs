//! One way to address a stack (docs/cli.md#addressing-a-stack): the global flags, one
//! environment variable each, named contexts, and the address `vwr dev` records. Each field is
//! taken from the first of: the flag; the context named by `--context`/`VWR_CONTEXT`; the
//! environment variable; the current context; `vwr dev`'s state file; the default.

use std::path::Path;

use crate::context::{self, Config, Context, ContextError};

pub use vwr_loadtest::client::{AdminTarget, DEFAULT_URL};

/// Flags every command takes, before or after its subcommand.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Global {
    /// The admin API's base URL (env VWR_ADMIN_URL; else the context, else the address `vwr dev`
    /// recorded, else http://127.0.0.1:8080).
    #[arg(long, global = true, value_name = "URL", help_heading = "Stack (docs/cli.md)")]
    pub url: Option<String>,
    /// The admin bearer key (env VWR_ADMIN_KEY; else `vwr dev`'s state file).
    #[arg(long, global = true, value_name = "KEY", help_heading = "Stack (docs/cli.md)")]
    pub key: Option<String>,
    /// Sign requests with AWS SigV4: the deployed admin API uses IAM auth (env VWR_SIGV4=1).
    #[arg(long, global = true, help_heading = "Stack (docs/cli.md)")]
    pub sigv4: bool,
    /// The AWS region to sign for (env AWS_REGION; else the AWS config).
    #[arg(long, global = true, value_name = "REGION", help_heading = "Stack (docs/cli.md)")]
    pub region: Option<String>,
    /// The tier-2 admin API when it is not --url (env VWR_TIER2_ADMIN_URL).
    #[arg(long, global = true, value_name = "URL", help_heading = "Stack (docs/cli.md)")]
    pub tier2_url: Option<String>,
    /// A named context of the config file (env VWR_CONTEXT; see `vwr context`).
    #[arg(long, global = true, value_name = "NAME", help_heading = "Stack (docs/cli.md)")]
    pub context: Option<String>,
    /// The zone times are said in beside UTC: an IANA name (env VWR_TZ; default the machine's).
    #[arg(long, global = true, value_name = "ZONE", help_heading = "Stack (docs/cli.md)")]
    pub tz: Option<String>,
}

/// Why no stack can be named: said on stderr, exit 2 (docs/cli.md#exit-codes).
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("no context {0:?}: there is no config file")]
    NoConfigFile(String),
    /// The config file cannot be read, or names no such context.
    #[error(transparent)]
    Context(#[from] ContextError),
    /// The admin API's address is not one, and where it came from.
    #[error("{source} (from {from})")]
    BadUrl { source: ContextError, from: String },
    #[error("--tier2-url: {0}")]
    BadTier2Url(ContextError),
}

/// What the resolution reads besides the flags.
pub struct Sources<'a> {
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// The config file, when there is one to read.
    pub config: Option<(&'a Path, Config)>,
    /// `vwr dev`'s recorded address and admin key.
    pub dev: Option<(Option<String>, String)>,
}

/// The stack the flags, variables, contexts and `vwr dev` point at.
pub fn resolve(g: &Global, src: &Sources<'_>) -> Result<AdminTarget, TargetError> {
    let env = |k: &str| (src.env)(k).filter(|v| !v.trim().is_empty());
    let config = src.config.as_ref();
    let named = g.context.clone().or_else(|| env("VWR_CONTEXT"));
    let explicit: Option<(String, &Context)> = match &named {
        Some(name) => {
            let (path, config) = config.ok_or_else(|| TargetError::NoConfigFile(name.clone()))?;
            let ctx = config.contexts.get(name).ok_or_else(|| context::unknown(name, config, path))?;
            Some((name.clone(), ctx))
        }
        None => None,
    };
    // The current context speaks only when nothing else names an address: a `--url` or
    // `VWR_ADMIN_URL` points elsewhere, and the context's signing would not fit it.
    let current = || -> Option<(String, &Context)> {
        let (_, c) = config?;
        let name = c.current.as_ref()?;
        c.contexts.get(name).map(|ctx| (name.clone(), ctx))
    };
    let (ctx, ctx_label) = match explicit {
        Some((name, c)) => (Some(c), format!("context {name}")),
        None if g.url.is_none() && env("VWR_ADMIN_URL").is_none() => match current() {
            Some((name, c)) => (Some(c), format!("current context {name}")),
            None => (None, String::new()),
        },
        None => (None, String::new()),
    };
    let dev_url = src.dev.as_ref().and_then(|(url, _)| url.clone());

    let (url, from) = if let Some(u) = &g.url {
        (u.clone(), "--url".to_owned())
    } else if let Some(c) = ctx {
        (c.url.clone(), ctx_label)
    } else if let Some(u) = env("VWR_ADMIN_URL") {
        (u, "VWR_ADMIN_URL".to_owned())
    } else if let Some(u) = dev_url {
        (u, "the address `vwr dev` recorded in .vwr/dev.json".to_owned())
    } else {
        (DEFAULT_URL.to_owned(), "the default".to_owned())
    };
    context::check_url(&url).map_err(|source| TargetError::BadUrl { source, from: from.clone() })?;

    let pick = |flag: &Option<String>, var: &str, field: fn(&Context) -> Option<String>| {
        flag.clone().or_else(|| ctx.and_then(field)).or_else(|| env(var))
    };
    let tier2_url = pick(&g.tier2_url, "VWR_TIER2_ADMIN_URL", |c| c.tier2_url.clone());
    if let Some(t2) = &tier2_url {
        context::check_url(t2).map_err(TargetError::BadTier2Url)?;
    }
    let region = pick(&g.region, "AWS_REGION", |c| c.region.clone());
    let truthy = |v: String| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on");
    let sigv4 = g.sigv4 || ctx.map_or_else(|| env("VWR_SIGV4").is_some_and(truthy), |c| c.sigv4);
    // The state file's key belongs to the `vwr dev` of this directory: only sent to it.
    let dev_key = src
        .dev
        .as_ref()
        .filter(|(dev_url, _)| {
            dev_url.is_none() || dev_url.as_deref() == Some(url.as_str()) || from == "the default"
        })
        .map(|(_, key)| key.clone());
    let key = g.key.clone().or_else(|| env("VWR_ADMIN_KEY")).or(dev_key);
    Ok(AdminTarget { url: url.trim_end_matches('/').to_owned(), key, sigv4, region, tier2_url, from })
}

/// Resolves from this process's environment, config file and `vwr dev` state.
pub fn from_process(g: &Global) -> Result<AdminTarget, TargetError> {
    let env = |k: &str| std::env::var(k).ok();
    let path = context::path(&env).ok();
    let config = match &path {
        Some(p) => Some((p.as_path(), context::load(p)?)),
        None => None,
    };
    let dev = crate::dev::state::read().ok().flatten().map(|s| (s.url, s.admin_key));
    resolve(g, &Sources { env: &env, config, dev })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::collections::BTreeMap;

    use super::*;

    fn config() -> Config {
        let mut contexts = BTreeMap::new();
        contexts.insert(
            "prod".to_owned(),
            Context {
                url: "https://prod.example".into(),
                tier2_url: Some("https://t2.prod.example".into()),
                sigv4: true,
                region: Some("eu-west-1".into()),
            },
        );
        contexts.insert(
            "stage".to_owned(),
            Context { url: "https://stage.example".into(), ..Context::default() },
        );
        Config { current: Some("stage".into()), contexts }
    }

    fn resolve_with(
        g: &Global,
        vars: &[(&str, &str)],
        config: Option<Config>,
        dev: Option<(Option<&str>, &str)>,
    ) -> Result<AdminTarget, TargetError> {
        let env = |k: &str| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| (*v).to_owned());
        let path = Path::new("/cfg/config.toml");
        let src = Sources {
            env: &env,
            config: config.map(|c| (path, c)),
            dev: dev.map(|(u, k)| (u.map(str::to_owned), k.to_owned())),
        };
        resolve(g, &src)
    }

    #[test]
    fn each_field_comes_from_flag_then_named_context_then_env_then_current_context_then_dev() {
        let none = Global::default();
        // Nothing anywhere: the local default, no key.
        let t = resolve_with(&none, &[], None, None).unwrap();
        assert_eq!((t.url.as_str(), t.key, t.sigv4), (DEFAULT_URL, None, false));
        // `vwr dev` recorded its address and key.
        let t = resolve_with(&none, &[], None, Some((Some("http://127.0.0.1:9191"), "k"))).unwrap();
        assert_eq!((t.url.as_str(), t.key.as_deref()), ("http://127.0.0.1:9191", Some("k")));
        assert!(t.from.contains(".vwr/dev.json"), "{}", t.from);
        // The current context beats `vwr dev`, and the dev key is not sent to it.
        let t = resolve_with(&none, &[], Some(config()), Some((Some("http://127.0.0.1:9191"), "k"))).unwrap();
        assert_eq!((t.url.as_str(), t.key), ("https://stage.example", None));
        // The variable beats the current context.
        let t = resolve_with(&none, &[("VWR_ADMIN_URL", "http://env:1")], Some(config()), None).unwrap();
        assert_eq!((t.url.as_str(), t.from.as_str()), ("http://env:1", "VWR_ADMIN_URL"));
        // A named context beats the variable, and brings its tier-2 URL, signing and region.
        let g = Global { context: Some("prod".into()), ..Global::default() };
        let t = resolve_with(
            &g,
            &[("VWR_ADMIN_URL", "http://env:1"), ("AWS_REGION", "us-east-1")],
            Some(config()),
            None,
        )
        .unwrap();
        assert_eq!(
            (t.url.as_str(), t.tier2_url.as_deref(), t.sigv4, t.region.as_deref()),
            ("https://prod.example", Some("https://t2.prod.example"), true, Some("eu-west-1"))
        );
        let t = resolve_with(&none, &[("VWR_CONTEXT", "prod")], Some(config()), None).unwrap();
        assert_eq!(t.from, "context prod");
        // The flag beats everything.
        let g =
            Global { url: Some("http://flag:2/".into()), context: Some("prod".into()), ..Global::default() };
        let t = resolve_with(&g, &[("VWR_ADMIN_URL", "http://env:1")], Some(config()), None).unwrap();
        assert_eq!((t.url.as_str(), t.from.as_str()), ("http://flag:2", "--url"));
        // Keys: flag, then variable, then the state file.
        let g = Global { key: Some("flag".into()), ..Global::default() };
        let t = resolve_with(&g, &[("VWR_ADMIN_KEY", "env")], None, Some((None, "dev"))).unwrap();
        assert_eq!(t.key.as_deref(), Some("flag"));
        let t = resolve_with(&none, &[("VWR_ADMIN_KEY", "env")], None, Some((None, "dev"))).unwrap();
        assert_eq!(t.key.as_deref(), Some("env"));
        let t = resolve_with(&none, &[("VWR_SIGV4", "1")], None, None).unwrap();
        assert!(t.sigv4);
    }

    #[test]
    fn a_missing_context_or_a_bad_url_is_an_error_that_says_where_it_came_from() {
        let g = Global { context: Some("qa".into()), ..Global::default() };
        let e = resolve_with(&g, &[], Some(config()), None).unwrap_err().to_string();
        assert!(e.contains("no context \"qa\"") && e.contains("prod, stage"), "{e}");
        let e = resolve_with(&g, &[], None, None).unwrap_err().to_string();
        assert!(e.contains("no config file"), "{e}");
        let e = resolve_with(&Global::default(), &[("VWR_ADMIN_URL", "localhost:8080")], None, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("from VWR_ADMIN_URL"), "{e}");
    }
}
