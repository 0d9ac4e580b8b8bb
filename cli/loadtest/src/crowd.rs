//! The visitors and the bots: each visitor on its own task from its arrival, the bots from the
//! start, their kinds in turn; a progress line on stderr; the outcomes once the visitors are
//! done (or at the hard stop, `--max-seconds` + 70 s) and the bots have stopped.

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::task::JoinHandle;

use super::arrival::arrival_of;
use super::bots::{self, BotKind, BotOutcome};
use super::ctx::{Ctx, Rng};
use super::open::OpenPlan;
use super::options::LoadOptions;
use super::stats::Counters;
use super::visitor::{Outcome, visit};

/// How the crowd's runs ended.
pub(crate) struct Crowd {
    pub outcomes: Vec<Outcome>,
    /// Visitors still running at the hard stop.
    pub aborted: u64,
    pub bots: Vec<BotOutcome>,
    /// Seconds from the start until the visitors were done.
    pub elapsed: f64,
}

/// Runs the visitors and the bots to their end.
pub(crate) async fn run(opts: &LoadOptions, ctx: &Arc<Ctx>, plan: Option<&OpenPlan>) -> Crowd {
    let mut set = tokio::task::JoinSet::new();
    for i in 0..opts.visitors {
        let salt = Rng::new(i ^ 0xABCD).next_f64();
        let arrival = match plan {
            None => arrival_of(opts.arrival, i, opts.visitors, opts.arrival_seconds, salt),
            Some(p) => p.waves.arrival(opts.arrival, i, opts.arrival_seconds, salt),
        };
        set.spawn(visit(Arc::clone(ctx), i, arrival));
    }
    let kinds = if opts.bot_kind.is_empty() {
        vec![BotKind::MultiPlace, BotKind::StolenTicket, BotKind::SharedCookie, BotKind::NoPow]
    } else {
        opts.bot_kind.clone()
    };
    let mut bot_set = tokio::task::JoinSet::new();
    for b in 0..opts.bots {
        let kind = kinds[(b as usize) % kinds.len()];
        bot_set.spawn(bots::run(Arc::clone(ctx), kind, b, opts.bot_places));
    }
    let progress = progress(Arc::clone(ctx), opts.visitors);

    let mut outcomes: Vec<Outcome> = Vec::with_capacity(opts.visitors as usize);
    let hard_stop = tokio::time::Instant::from_std(ctx.start + Duration::from_secs(opts.max_seconds + 70));
    // Visitors still running at the hard stop: on their way, so unfinished.
    let mut aborted = 0u64;
    loop {
        match tokio::time::timeout_at(hard_stop, set.join_next()).await {
            Ok(Some(Ok(o))) => outcomes.push(o),
            Ok(Some(Err(_))) => Counters::inc(&ctx.counters.failed),
            Ok(None) => break,
            Err(_) => {
                aborted = set.len() as u64;
                set.abort_all();
                break;
            }
        }
    }
    let elapsed = ctx.start.elapsed().as_secs_f64();
    // The visitors are done: so are the bots (each stops within a second).
    ctx.leaks.stop.store(true, Ordering::Relaxed);
    let mut bots = Vec::new();
    let bots_stop = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        match tokio::time::timeout_at(bots_stop, bot_set.join_next()).await {
            Ok(Some(Ok(o))) => bots.push(o),
            Ok(Some(Err(_))) => {}
            Ok(None) => break,
            Err(_) => {
                bot_set.abort_all();
                break;
            }
        }
    }
    progress.abort();
    Crowd { outcomes, aborted, bots, elapsed }
}

/// The progress line on stderr, once a second (every 5 s as lines when stderr is no terminal).
fn progress(ctx: Arc<Ctx>, n: u64) -> JoinHandle<()> {
    tokio::spawn(async move {
        let tty = std::io::stderr().is_terminal();
        let mut tick = 0u64;
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            tick += 1;
            let c = &ctx.counters;
            let finished = Counters::get(&c.done)
                + Counters::get(&c.abandoned)
                + Counters::get(&c.no_shows)
                + Counters::get(&c.failed);
            let filled = (finished * 30 / n.max(1)) as usize;
            let line = format!(
                "[{}{}] {:>3}% {:>5}s joined {} admitted {} active {} done {} abandoned {} no-shows {} 503s {} 5xx {}",
                "#".repeat(filled),
                ".".repeat(30 - filled.min(30)),
                finished * 100 / n.max(1),
                ctx.start.elapsed().as_secs(),
                Counters::get(&c.joined),
                Counters::get(&c.admitted_tier1),
                Counters::get(&c.active_tier2),
                Counters::get(&c.done),
                Counters::get(&c.abandoned),
                Counters::get(&c.no_shows),
                Counters::get(&c.degraded),
                Counters::get(&c.server_errors),
            );
            let mut err = std::io::stderr().lock();
            if tty {
                let _ = write!(err, "\r{line}");
            } else if tick.is_multiple_of(5) {
                let _ = writeln!(err, "{line}");
            }
        }
    })
}
