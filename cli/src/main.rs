//! `vwr`: run the waiting room locally, bootstrap tables, generate keys, administer events.
#![allow(clippy::print_stdout)]

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use vwr_cli::admin::AdminCommand;
use vwr_cli::dev::DevOptions;
use vwr_cli::target::Global;

#[derive(Debug, Parser)]
#[command(
    name = "vwr",
    version,
    about = "vwr — a serverless two-tier virtual waiting room",
    after_help = "Exit codes: 0 ok; 1 what was checked fell short; 2 usage, bad input or nothing could be \
                  checked; 3 a load-test safety counter is not zero (docs/cli.md#exit-codes)."
)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run everything locally on one port (tier-1 API, admin API, advancer).
    Dev(DevOptions),
    /// Create the DynamoDB table (and index, TTL) if missing, against AWS or AWS_ENDPOINT_URL.
    Bootstrap {
        #[arg(long, default_value = "vwr-tier1", env = "VWR_TABLE")]
        table: String,
    },
    /// Key material.
    Keys {
        #[command(subcommand)]
        command: KeysCommand,
    },
    /// Drive virtual visitors through the whole flow and report throughput, latency,
    /// fairness and safety (exit code 3 when a safety counter is not zero); `analyze DIR`
    /// reports a distributed rehearsal's records the same way (docs/rehearsal.md).
    #[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
    Loadtest(Box<Loadtest>),
    /// A fault-injecting proxy in front of an AWS emulator for load tests: counts calls,
    /// can throttle per-item DynamoDB writes, and takes faults from `vwr loadtest --fault`.
    AwsProxy {
        #[arg(long, default_value = "127.0.0.1:5001")]
        listen: std::net::SocketAddr,
        #[arg(long, default_value = "http://127.0.0.1:5000")]
        upstream: String,
        /// Throttle writes to any one DynamoDB item beyond this many per second (a model of
        /// DynamoDB's ~1,000 writes/s per item, scaled to the emulator).
        #[arg(long)]
        item_writes_per_second: Option<f64>,
    },
    /// A live console for one event: state, line figures, rates, tier 2; keys to pause,
    /// resume, advance, close and set the message.
    Watch(vwr_watch::WatchArgs),
    /// Check the pre-queue draw of a sale (docs/fairness.md).
    Draw {
        #[command(subcommand)]
        command: vwr_cli::draw::DrawCommand,
    },
    /// What a sale needs and costs: shards, Lambda concurrency, peak rates, dollars, quota
    /// warnings (docs/rehearsal.md#plan).
    Plan(vwr_cli::plan::PlanArgs),
    /// The deployed stack and the account against a plan: quotas, concurrency, stage throttles,
    /// table, edge store, alarms, WAF; exit 1 on a blocking shortfall (docs/rehearsal.md#preflight).
    Preflight(vwr_cli::preflight::PreflightArgs),
    /// The report after a sale, minute by minute: a summary, `--json`, or `--html FILE` with
    /// charts (docs/operate.md#the-report-after-the-sale).
    Report(vwr_cli::report::ReportArgs),
    /// Screenshots of the waiting page in every state and language, from `vwr dev`'s preview
    /// mode, with the local Chromium (docs/brand.md#previews).
    Preview(vwr_cli::preview::PreviewArgs),
    /// Print a completion script for SHELL (bash, zsh, fish, elvish, powershell), e.g.
    /// `vwr completions bash > ~/.local/share/bash-completion/completions/vwr`.
    Completions { shell: clap_complete::Shell },
    /// Call the admin API (answers as text; --json for the API's JSON).
    Admin {
        /// Print the API's JSON answer instead of text.
        #[arg(long, global = true)]
        json: bool,
        #[command(subcommand)]
        command: AdminCommand,
    },
    /// Named stacks in the config file ($VWR_CONFIG, default ~/.config/vwr/config.toml):
    /// `set`, `use`, `list`, `remove` (docs/cli.md#addressing-a-stack).
    Context {
        #[command(subcommand)]
        command: vwr_cli::context::ContextCommand,
    },
}

#[derive(Debug, clap::Args)]
struct Loadtest {
    #[command(subcommand)]
    command: Option<LoadtestCommand>,
    #[command(flatten)]
    opts: vwr_loadtest::LoadOptions,
}

#[derive(Debug, Subcommand)]
enum LoadtestCommand {
    /// The load test's report (flow, fairness, safety, costs) from the per-visitor records of
    /// a rehearsal on Locust (`rehearsal/locustfile.py`); exit code 3 when a safety counter is
    /// not zero.
    Analyze(vwr_loadtest::analyze::AnalyzeArgs),
}

#[derive(Debug, Subcommand)]
enum KeysCommand {
    /// Print fresh keys (tier-1 HMAC, tier-2 ES256, admin): env lines and Secrets Manager JSON.
    Generate {
        /// Key id of the new key (default: k + today's date).
        #[arg(long)]
        kid: Option<String>,
    },
}

fn default_kid() -> String {
    let days = vwr_core::time::now_secs() / 86_400;
    format!("k{days}")
}

/// Why `vwr keys generate` printed no keys.
#[derive(Debug, thiserror::Error)]
enum KeysError {
    #[error(transparent)]
    Key(#[from] vwr_core::KeyError),
    #[error(transparent)]
    Secret(#[from] vwr_cli::dev::state::DevStateError),
}

async fn generate_keys(kid: Option<String>) -> Result<(), KeysError> {
    let kid = kid.unwrap_or_else(default_kid);
    let ring = vwr_core::HmacKeyring::generate(&kid)?;
    let admin = vwr_cli::dev::state::random_secret(24)?;
    println!("# Tier-1 HMAC key (HS256). Keep secret. To rotate, prepend the new key and keep the old");
    println!("# one until every ticket and token signed with it has expired.");
    println!("VWR_TIER1_KEYS={}", ring.to_text());
    println!("VWR_TIER1_SIGNING_KID={kid}");
    println!("# Edge keys (derived from the tier-1 keys; the only tier-1 keys the edge verifier gets —");
    println!(
        "# the KeyValueStore `keys` entry, the Lambda@Edge config.json, `node edge/local/proxy.mjs --keys`):"
    );
    println!("VWR_EDGE_KEYS={}", ring.edge_ring().to_text());
    let link = vwr_core::token::Tier1Link::new(ring.edge_ring(), ring.place_ring(), "vwr", "vwr-edge");
    println!("# Tier-1 link keys for tier 2 (derived: the edge keys and the place-proof keys; tier 2 never");
    println!("# gets the master keys above):");
    println!("VWR_TIER1_EDGE_KEYS={}", link.edge_ring().to_text());
    println!("VWR_TIER1_PLACE_KEYS={}", link.place_ring().to_text());
    println!("# Secrets Manager secret value (VWR_TIER1_LINK_SECRET_ID):");
    println!("# {}", link.to_json());
    println!("# Admin bearer key for the local server:");
    println!("VWR_ADMIN_KEY={admin}");
    println!("# Secrets Manager secret value (VWR_TIER1_KEYS_SECRET_ID):");
    println!("# {}", ring.to_json());
    let entry = vwr_core::EcKeyring::generate(&kid)?;
    println!("# Tier-2 entry-token key (ES256, P-256, PKCS#8). Keep secret; its public half is served");
    println!("# at /api/queue/.well-known/jwks.json.");
    println!("VWR_TIER2_KEYS={}", entry.to_text());
    println!("VWR_TIER2_SIGNING_KID={kid}");
    println!("# Secrets Manager secret value (VWR_TIER2_KEYS_SECRET_ID):");
    println!("# {}", entry.to_json());
    println!("# Public JWKS for verifiers (VWR_TIER2_JWKS):");
    println!("# {}", serde_json::to_string(&entry.jwks()).unwrap_or_default());
    let site = vwr_core::EcKeyring::generate(&format!("site-{kid}"))?;
    println!("# Enqueue tokens (one place per account, docs/abuse.md). The SITE keeps the private key and");
    println!("# signs {{k, eid, exp}} with ES256; vwr gets only the public JWKS:");
    println!("SITE_ENQUEUE_KEY={}", site.to_text());
    println!("VWR_ENQUEUE_JWKS='{}'", serde_json::to_string(&site.jwks()).unwrap_or_default());
    Ok(())
}

/// Why `vwr bootstrap` made no table: one line naming its cause (no region, no credentials, the
/// endpoint that did not answer), never a dump of the SDK's error.
#[derive(Debug, thiserror::Error)]
enum BootstrapError {
    #[error("no AWS region: set AWS_REGION (or a profile's region)")]
    NoRegion,
    #[error("no AWS credentials: {0}")]
    NoCredentials(String),
    #[error("cannot reach {endpoint}: {cause}")]
    Unreachable { endpoint: String, cause: String },
    #[error("{endpoint} refused ListTables: {code}: {message}")]
    Refused { endpoint: String, code: String, message: String },
    #[error("table {table} at {endpoint}: {source}")]
    Table { table: String, endpoint: String, source: vwr_tier1::model::StoreError },
}

/// Creates the table.
async fn bootstrap(table: String) -> Result<(), BootstrapError> {
    use aws_credential_types::provider::ProvideCredentials;
    let sdk = aws_config::load_defaults(aws_config::BehaviorVersion::latest()).await;
    let Some(region) = sdk.region().map(ToString::to_string) else {
        return Err(BootstrapError::NoRegion);
    };
    let creds = sdk
        .credentials_provider()
        .ok_or_else(|| BootstrapError::NoCredentials("no credentials provider configured".into()))?;
    if let Err(e) = creds.provide_credentials().await {
        return Err(BootstrapError::NoCredentials(vwr_cli::human::root_cause(&e)));
    }
    let endpoint =
        sdk.endpoint_url().map_or_else(|| format!("the DynamoDB endpoint of {region}"), str::to_owned);
    let client = aws_sdk_dynamodb::Client::new(&sdk);
    if let Err(e) = client.list_tables().limit(1).send().await {
        use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
        let cause = vwr_cli::human::root_cause(&e);
        return Err(match &e {
            SdkError::DispatchFailure(_) | SdkError::TimeoutError(_) => {
                BootstrapError::Unreachable { endpoint, cause }
            }
            _ => BootstrapError::Refused {
                endpoint,
                code: e.code().unwrap_or("error").to_owned(),
                message: e.message().map_or(cause, str::to_owned),
            },
        });
    }
    let store = vwr_tier1_store::dynamo::DynamoStore::new(client, table.clone());
    store.ensure_table().await.map_err(|source| BootstrapError::Table {
        table: table.clone(),
        endpoint: endpoint.clone(),
        source,
    })?;
    println!("table {table} ready at {endpoint}");
    Ok(())
}

/// Prints a command's answer. A closed pipe (`vwr admin status e1 | head`) is not an error
/// worth a panic: the reader has what it wanted.
fn print_out(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
}

/// Bad input or a stack that cannot be named: said on stderr, exit 2 (docs/cli.md#exit-codes).
fn usage(e: impl std::fmt::Display) -> ExitCode {
    eprintln!("vwr: {e}");
    ExitCode::from(2)
}

/// A command's end: exit 0, or its error said on stderr and exit 1 (docs/cli.md#exit-codes).
fn done(result: Result<(), impl std::fmt::Display>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vwr: {e}");
            ExitCode::FAILURE
        }
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    vwr_core::logging::init_pretty();
    let tz = cli.global.tz.clone().or_else(|| std::env::var("VWR_TZ").ok().filter(|v| !v.is_empty()));
    if let Some(name) = tz {
        match vwr_watch::zone::parse(&name) {
            Ok(zone) => vwr_watch::zone::set(zone),
            Err(e) => return usage(e),
        }
    }
    // The stack, for the commands that talk to one (docs/cli.md#addressing-a-stack).
    let target = || vwr_cli::target::from_process(&cli.global);
    match cli.command {
        Command::Dev(opts) => done(vwr_cli::dev::run(opts).await),
        Command::Bootstrap { table } => done(bootstrap(table).await),
        Command::AwsProxy { listen, upstream, item_writes_per_second } => {
            done(vwr_loadtest::faults::serve_proxy(listen, &upstream, item_writes_per_second).await)
        }
        Command::Loadtest(mut lt) => {
            if lt.opts.base_url.is_none() || lt.opts.admin_key.is_none() {
                match target() {
                    Ok(t) => {
                        lt.opts.base_url.get_or_insert(t.url);
                        if let Some(key) = t.key {
                            lt.opts.admin_key.get_or_insert(key);
                        }
                    }
                    Err(e) => return usage(e),
                }
            }
            let report = match lt.command {
                Some(LoadtestCommand::Analyze(args)) => vwr_loadtest::analyze::run(&args),
                None => vwr_loadtest::run(lt.opts).await,
            };
            match report {
                Ok(report) if report.safety.clean() => ExitCode::SUCCESS,
                Ok(_) => {
                    eprintln!("vwr loadtest: a safety counter is not zero");
                    ExitCode::from(3)
                }
                Err(e) => done(Err(e)),
            }
        }
        Command::Keys { command: KeysCommand::Generate { kid } } => done(generate_keys(kid).await),
        Command::Completions { shell } => {
            // Into memory first: clap_complete panics on a failed write (a closed pipe).
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "vwr", &mut script);
            use std::io::Write;
            let _ = std::io::stdout().lock().write_all(&script);
            ExitCode::SUCCESS
        }
        Command::Watch(mut args) => match target() {
            Ok(t) => {
                args.target = t;
                done(vwr_watch::run(args).await)
            }
            Err(e) => usage(e),
        },
        Command::Preview(mut args) => match target() {
            Ok(t) => {
                args.url = t.url;
                done(vwr_cli::preview::run(args).await)
            }
            Err(e) => usage(e),
        },
        Command::Plan(args) => match vwr_cli::plan::run(args) {
            Ok(out) => {
                print_out(&out);
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("vwr plan: {e}");
                ExitCode::from(2)
            }
        },
        Command::Preflight(args) => match vwr_cli::preflight::run(args).await {
            Ok((out, code)) => {
                print_out(&out);
                ExitCode::from(code)
            }
            Err(e) => {
                eprintln!("vwr preflight: {e}");
                ExitCode::from(2)
            }
        },
        Command::Report(mut args) => match target() {
            Ok(t) => {
                args.target = t;
                done(vwr_cli::report::run(args).await.map(|text| print_out(&text)))
            }
            Err(e) => usage(e),
        },
        Command::Draw { command } => done(vwr_cli::draw::run(command).map(|text| print_out(&text))),
        Command::Admin { json, command } => match target() {
            Ok(t) => done(vwr_cli::admin::run(t, command, json).await.map(|text| print_out(&text))),
            Err(e) => usage(e),
        },
        Command::Context { command } => {
            let g = &cli.global;
            let flags = vwr_cli::context::SetFlags {
                url: g.url.clone(),
                tier2_url: g.tier2_url.clone(),
                sigv4: g.sigv4,
                region: g.region.clone(),
                key_given: g.key.is_some(),
            };
            let env = |k: &str| std::env::var(k).ok();
            match vwr_cli::context::path(&env).and_then(|path| vwr_cli::context::run(command, &flags, &path))
            {
                Ok(text) => {
                    print_out(&text);
                    ExitCode::SUCCESS
                }
                Err(e) => usage(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn addressing_flags_go_anywhere() {
        let cli =
            Cli::try_parse_from(["vwr", "admin", "status", "e1", "--url", "http://u:1", "--json"]).unwrap();
        assert_eq!(cli.global.url.as_deref(), Some("http://u:1"));
        assert!(matches!(cli.command, Command::Admin { json: true, command: AdminCommand::Status { .. } }));
        let cli = Cli::try_parse_from([
            "vwr",
            "--url",
            "http://u:1",
            "--sigv4",
            "--region",
            "eu-west-1",
            "watch",
            "e1",
        ])
        .unwrap();
        assert!(cli.global.sigv4);
        assert_eq!(cli.global.region.as_deref(), Some("eu-west-1"));
        let cli = Cli::try_parse_from([
            "vwr",
            "report",
            "e1",
            "--tier2-url",
            "http://t2",
            "--context",
            "prod",
            "--tz",
            "Asia/Seoul",
        ])
        .unwrap();
        assert_eq!(
            (cli.global.tier2_url.as_deref(), cli.global.context.as_deref(), cli.global.tz.as_deref()),
            (Some("http://t2"), Some("prod"), Some("Asia/Seoul"))
        );
        let cli =
            Cli::try_parse_from(["vwr", "context", "set", "prod", "--url", "https://x", "--sigv4"]).unwrap();
        assert!(cli.global.sigv4);
    }

    #[test]
    fn console_tokens_take_a_role_a_name_and_a_life() {
        let cli =
            Cli::try_parse_from(["vwr", "admin", "console-token", "--role", "operator", "--ttl", "30m"])
                .unwrap();
        assert!(matches!(
            cli.command,
            Command::Admin { command: AdminCommand::ConsoleToken { ref role, name: None, ttl: 1800 }, .. }
                if role == "operator"
        ));
        assert!(Cli::try_parse_from(["vwr", "admin", "console-token", "--role", "owner"]).is_err());
        assert!(Cli::try_parse_from(["vwr", "admin", "console-token"]).is_err());
        let cli = Cli::try_parse_from([
            "vwr",
            "dev",
            "--admin-oidc-issuer",
            "https://idp",
            "--admin-oidc-client-id",
            "c",
        ])
        .unwrap();
        assert!(
            matches!(cli.command, Command::Dev(ref o) if o.oidc.admin_oidc_client_id.as_deref() == Some("c"))
        );
        assert!(
            Cli::try_parse_from(["vwr", "dev", "--admin-oidc-audience", "a"]).is_err(),
            "needs the issuer"
        );
    }
}
