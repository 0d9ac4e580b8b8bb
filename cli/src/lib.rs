//! The `vwr` command line: the local all-in-one server (`vwr dev`, in [`dev`]), the admin client
//! ([`admin`]), the live console ([`watch`]), the load test ([`loadtest`]), the draw check
//! ([`draw`]), the page previews ([`preview`]), the report after a sale ([`report`]), sizing a sale ([`plan`]), checking the deployed stack against it
//! ([`preflight`]); how a command finds its stack ([`target`], [`context`]), answers for people
//! ([`human`]) and times in two zones ([`zone`]); table bootstrap and key generation are in
//! `main.rs`.

pub mod admin;
pub mod client;
pub mod context;
pub mod dev;
pub mod draw;
pub mod human;
pub mod loadtest;
pub mod plan;
pub mod preflight;
pub mod preview;
pub mod report;
pub mod target;
pub mod watch;
pub mod zone;
