//! The `vwr` command line: the local all-in-one server (`vwr dev`, in [`dev`]), the admin client
//! ([`admin`]), the live console ([`watch`]), the draw check ([`draw`]), the page previews ([`preview`]), the report after a sale ([`report`]), sizing a sale ([`plan`]), checking the deployed stack against it
//! ([`preflight`]); how a command finds its stack ([`target`], [`context`]), answers for people
//! ([`human`]) and times in two zones ([`zone`]); table bootstrap and key generation are in
//! `main.rs`. The load test and the HTTP client every command uses are the crate `vwr-loadtest`
//! (cli/loadtest).

pub mod admin;
pub mod context;
pub mod dev;
pub mod draw;
pub mod human;
pub mod plan;
pub mod preflight;
pub mod preview;
pub mod report;
pub mod target;
pub mod watch;
pub mod zone;
