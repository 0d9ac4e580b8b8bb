//! The `vwr` command line: the local all-in-one server (`vwr dev`, in [`dev`]), the admin client
//! ([`admin`]), the draw check ([`draw`]), the page previews ([`preview`]), the report after a
//! sale ([`report`]), sizing a sale ([`plan`]), checking the deployed stack against it
//! ([`preflight`]); how a command finds its stack ([`target`], [`context`]) and answers for
//! people ([`human`]); table bootstrap and key generation are in `main.rs`. Each command's
//! errors are its own type (`AdminError`, `ContextError`, …), printed by `main.rs` after `vwr: `.
//!
//! Below it: the live console `vwr watch` and the times in two zones are the crate `vwr-watch`
//! (cli/watch); the load test, the HTTP client every command uses and the stack it talks to
//! (`AdminTarget`) are the crate `vwr-loadtest` (cli/loadtest).

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
