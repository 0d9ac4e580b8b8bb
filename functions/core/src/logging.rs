//! `tracing` set-up: JSON lines without ANSI colours (CloudWatch-friendly), filter from
//! `RUST_LOG` (default `info`). Event names are stable: every event carries `event = "..."`.
//! In Lambda every line also carries the invocation's span (`span.requestId`), which the
//! runtime opens per invocation, so a log line leads back to its request.

use tracing_subscriber::EnvFilter;

/// Installs the global JSON subscriber. Safe to call more than once (later calls do nothing).
pub fn init_json() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .json()
        .with_ansi(false)
        .with_current_span(true)
        .with_span_list(false)
        .flatten_event(true)
        .with_env_filter(filter)
        .try_init();
}

/// Installs a human-readable subscriber on stderr (for the CLI and `vwr dev`).
pub fn init_pretty() {
    // The AWS SDK's own warnings (a credentials provider that failed, with its whole `Debug`
    // chain) are said once, in one line, by the command that needed them (docs/cli.md).
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,aws_config=error,aws_smithy_runtime=error"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let _ = tracing_subscriber::fmt()
        .compact()
        .with_ansi(ansi)
        .with_writer(std::io::stderr)
        .with_env_filter(filter)
        .try_init();
}
