//! `vwr loadtest`: drives N virtual visitors through the whole flow against a running vwr and
//! reports throughput, latency, time to admission, fairness and safety counters, optionally
//! under injected faults. See docs/performance.md.
//!
//! Scenarios: `steady` activates the event and lets everyone arrive over the curve;
//! `prequeue` schedules a sale (docs/lifecycle.md), has a share of the visitors join its
//! pre-queue, and reports the open: the request rate right after `openAt`, the draw
//! (positions 1..=P, the seed against its commitment, rank correlation with arrival order).
//!
//! Visitors wait in line as the waiting page does (the CDN-cached status document, `check` at
//! their turn) or, with `--legacy-polling`, poll `check` at the server's hints; the report's
//! `costs` (Lambda calls per visitor per tier, status fetches and origin fetches) and
//! `estimate` (the wait estimate at the join against the real wait) compare the two, and
//! `--html` draws the run as one self-contained page.
//!
//! The rooms, as a run goes through them:
//! - `options`: the command line and its checks; `arrival`: when each visitor arrives.
//! - The phases of [`run`]: `setup` (admin access, the event gated, the visitors' context),
//!   `timers` (faults and operator actions), `sample` (what the harness watches meanwhile),
//!   `crowd` (the visitors and the bots), `tally` (the report built).
//! - The actors: `visitor` and `bots`, which share `ctx` (the context, the page's requests and
//!   `assign`, the proofs a join brings, what the visitors let slip) and import nothing of
//!   each other.
//! - The report: `report` (the typed [`Report`], whose keys `--json` writes), its sections
//!   computed beside their types in `cost`, `outflow`, `series`, `open`, `bots` and `faults`;
//!   shown by `text` (the terminal) and `html` (the page).
//! - Below them all: `page` (the waiting page's rules the visitors follow, held to the page's
//!   by the vectors of static/test/page-rules.json), `stats` (counters, latencies, rank
//!   figures), `admin` (the harness's admin calls), `faults` (the fault proxies and the
//!   stop/start commands), `error` (why a run stops: [`LoadtestError`], and why options are
//!   refused: [`OptionsError`]).

mod admin;
pub mod analyze;
pub mod arrival;
pub mod bots;
pub mod client;
pub mod cost;
mod crowd;
pub mod ctx;
pub mod error;
pub mod faults;
pub mod html;
pub mod open;
pub mod options;
pub mod outflow;
pub mod page;
pub mod records;
pub mod report;
mod sample;
pub mod series;
mod setup;
pub mod stats;
pub mod tally;
pub mod text;
mod timers;
pub mod visitor;

use std::io::IsTerminal;

pub use self::arrival::Curve;
pub use self::error::{LoadtestError, OptionsError};
pub use self::options::{Action, ActionKind, LoadOptions, Mode, Scenario};
pub use self::report::{Report, Safety};
use self::setup::Harness;
use self::tally::Ran;

/// Runs the load test, prints the report and writes its files; answers the report (whether
/// safety held: [`Safety::clean`]).
///
/// The phases: set up the event, the front proxy and the visitors' context; start the faults'
/// and actions' timers and the samplers; run the visitors and the bots; stop the samplers and
/// the timers; tally and build the report; show and write it.
pub async fn run(opts: LoadOptions) -> Result<Report, LoadtestError> {
    opts.validate()?;
    let harness = Harness::new(&opts).await?;
    let gate = harness.gate(&opts).await?;
    let (ctx, front) = harness.context(&opts, &gate).await?;
    let timers = timers::spawn(&opts, &harness, &ctx, &front);
    let samplers = sample::spawn(&harness, &ctx, gate.plan.as_ref());

    let crowd = crowd::run(&opts, &ctx, gate.plan.as_ref()).await;

    let sampled = samplers.stop().await;
    let faults = timers.stop();
    if std::io::stderr().is_terminal() {
        eprintln!();
    }
    let aws = harness.aws_calls().await;
    let ran = Ran { event: harness.event.clone(), crowd, sampled, faults, plan: gate.plan, aws };
    let report = tally::report(&opts, &ctx, ran);
    publish(&opts, &report)?;
    Ok(report)
}

/// Prints the report, and writes `--json` (its keys in order, as always) and `--html`.
fn publish(opts: &LoadOptions, report: &Report) -> Result<(), LoadtestError> {
    print_text(&text::render(report));
    if let Some(path) = &opts.json {
        let json = serde_json::to_value(report)?;
        std::fs::write(path, serde_json::to_string_pretty(&json).unwrap_or_default())
            .map_err(LoadtestError::write(path))?;
    }
    if let Some(path) = &opts.html {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(LoadtestError::write(dir))?;
        }
        std::fs::write(path, html::render(report)).map_err(LoadtestError::write(path))?;
    }
    Ok(())
}

#[allow(clippy::print_stdout)]
fn print_text(text: &str) {
    print!("{text}");
}
