//! `vwr`: run the waiting room locally, bootstrap tables, generate keys, administer events.
#![allow(clippy::print_stdout)]

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use vwr_cli::admin::{AdminCommand, AdminTarget};
use vwr_cli::dev::DevOptions;

#[derive(Debug, Parser)]
#[command(name = "vwr", version, about = "vwr — a serverless two-tier virtual waiting room")]
struct Cli {
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
    Watch(vwr_cli::watch::WatchArgs),
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
    /// Call the admin API.
    Admin {
        #[command(flatten)]
        target: AdminTarget,
        #[command(subcommand)]
        command: AdminCommand,
    },
}

#[derive(Debug, clap::Args)]
struct Loadtest {
    #[command(subcommand)]
    command: Option<LoadtestCommand>,
    #[command(flatten)]
    opts: vwr_cli::loadtest::LoadOptions,
}

#[derive(Debug, Subcommand)]
enum LoadtestCommand {
    /// The load test's report (flow, fairness, safety, costs) from the per-visitor records of
    /// a rehearsal on Locust (`rehearsal/locustfile.py`); exit code 3 when a safety counter is
    /// not zero.
    Analyze(vwr_cli::loadtest::analyze::AnalyzeArgs),
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

async fn generate_keys(kid: Option<String>) -> Result<(), String> {
    let kid = kid.unwrap_or_else(default_kid);
    let ring = vwr_core::HmacKeyring::generate(&kid).map_err(|e| e.to_string())?;
    let admin = vwr_cli::dev::state::random_secret(24).map_err(|e| e.to_string())?;
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
    let entry = vwr_core::EcKeyring::generate(&kid).map_err(|e| e.to_string())?;
    println!("# Tier-2 entry-token key (ES256, P-256, PKCS#8). Keep secret; its public half is served");
    println!("# at /api/queue/.well-known/jwks.json.");
    println!("VWR_TIER2_KEYS={}", entry.to_text());
    println!("VWR_TIER2_SIGNING_KID={kid}");
    println!("# Secrets Manager secret value (VWR_TIER2_KEYS_SECRET_ID):");
    println!("# {}", entry.to_json());
    println!("# Public JWKS for verifiers (VWR_TIER2_JWKS):");
    println!("# {}", serde_json::to_string(&entry.jwks()).unwrap_or_default());
    let site = vwr_core::EcKeyring::generate(&format!("site-{kid}")).map_err(|e| e.to_string())?;
    println!("# Enqueue tokens (one place per account, docs/abuse.md). The SITE keeps the private key and");
    println!("# signs {{k, eid, exp}} with ES256; vwr gets only the public JWKS:");
    println!("SITE_ENQUEUE_KEY={}", site.to_text());
    println!("VWR_ENQUEUE_JWKS='{}'", serde_json::to_string(&site.jwks()).unwrap_or_default());
    Ok(())
}

async fn bootstrap(table: String) -> Result<(), String> {
    let sdk = aws_config::load_defaults(aws_config::BehaviorVersion::latest()).await;
    let store = vwr_tier1_store::dynamo::DynamoStore::new(aws_sdk_dynamodb::Client::new(&sdk), table.clone());
    store.ensure_table().await.map_err(|e| format!("table {table}: {e}"))?;
    println!("table {table} ready");
    Ok(())
}

/// Prints a command's answer. A closed pipe (`vwr admin status e1 | head`) is not an error
/// worth a panic: the reader has what it wanted.
fn print_out(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    vwr_core::logging::init_pretty();
    let result = match cli.command {
        Command::Dev(opts) => vwr_cli::dev::run(opts).await.map_err(|e| e.to_string()),
        Command::Bootstrap { table } => bootstrap(table).await,
        Command::AwsProxy { listen, upstream, item_writes_per_second } => {
            vwr_cli::loadtest::faults::serve_proxy(listen, &upstream, item_writes_per_second).await
        }
        Command::Loadtest(lt) => {
            let report = match lt.command {
                Some(LoadtestCommand::Analyze(args)) => vwr_cli::loadtest::analyze::run(&args),
                None => vwr_cli::loadtest::run(lt.opts).await,
            };
            match report {
                Ok(report) if report.safety.clean() => Ok(()),
                Ok(_) => {
                    eprintln!("vwr loadtest: a safety counter is not zero");
                    return ExitCode::from(3);
                }
                Err(e) => Err(e),
            }
        }
        Command::Keys { command: KeysCommand::Generate { kid } } => generate_keys(kid).await,
        Command::Completions { shell } => {
            // Into memory first: clap_complete panics on a failed write (a closed pipe).
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "vwr", &mut script);
            use std::io::Write;
            let _ = std::io::stdout().lock().write_all(&script);
            Ok(())
        }
        Command::Watch(args) => vwr_cli::watch::run(args).await,
        Command::Preview(args) => vwr_cli::preview::run(args).await,
        Command::Plan(args) => match vwr_cli::plan::run(args) {
            Ok(out) => {
                print_out(&out);
                return ExitCode::SUCCESS;
            }
            Err(e) => {
                eprintln!("vwr plan: {e}");
                return ExitCode::from(2);
            }
        },
        Command::Preflight(args) => match vwr_cli::preflight::run(args).await {
            Ok((out, code)) => {
                print_out(&out);
                return ExitCode::from(code);
            }
            Err(e) => {
                eprintln!("vwr preflight: {e}");
                return ExitCode::from(2);
            }
        },
        Command::Report(args) => vwr_cli::report::run(args).await.map(|text| print_out(&text)),
        Command::Draw { command } => vwr_cli::draw::run(command).map(|text| print_out(&text)),
        Command::Admin { target, command } => vwr_cli::admin::run(target, command).await.map(|v| {
            print_out(&serde_json::to_string_pretty(&v).unwrap_or_default());
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vwr: {e}");
            ExitCode::FAILURE
        }
    }
}
