//! vwr tier 2: per-event admission behind the edge — the domain. No redis or AWS SDK here:
//! the Redis store, SQS notices and the DynamoDB registry are in `vwr-tier2-store`
//! (docs/adr/0014-workspace-layout.md). Tier 2 knows nothing of tier 1 but the core traits of
//! `vwr_core::tiers`.
//!
//! - [`store::AdmissionStore`] with [`memory::MemoryStore`] (the local default and the model);
//! - [`registry::Registry`]: the durable copy of registrations, with [`registry::MemoryRegistry`];
//! - [`service::Tier2Service`]: check / status / heartbeat / leave, entry tokens, estimates;
//!   put together in one way only, by [`assemble()`] (the Lambdas, `vwr dev`, the tests);
//! - [`worker::Worker`]: admissions, cleanup, SQS FIFO notices ([`notices`]);
//! - [`entry_token`]: ES256 entry tokens and the JWKS; [`protect`]: the check in front of
//!   protected APIs; [`identity`]: who the caller is;
//! - [`http`]: the axum routers.

mod assemble;
pub mod config;
pub mod entry_token;
pub mod http;
pub mod identity;
pub mod memory;
pub mod model;
pub mod notices;
pub mod protect;
pub mod registry;
pub mod report;
pub mod service;
pub mod store;
pub mod worker;

pub use assemble::{Tier2Clients, assemble};
pub use service::Tier2Service;
