//! vwr tier 1: flow control in front of the whole site — the domain. No AWS SDK here: the
//! DynamoDB store and the KeyValueStore are in `vwr-tier1-store` (docs/adr/0014-workspace-layout.md).
//!
//! - [`store::PositionStore`], with [`memory::MemoryStore`] (the local default and the model);
//! - [`service::Tier1Service`]: assign, check, admin operations, advancer steps, put
//!   together in one way only, by [`assemble()`] (the Lambdas, `vwr dev`, the tests);
//! - [`http`]: the public and admin axum routers;
//! - [`advancer`]: the loop run by the scheduled Lambda and by `vwr dev`;
//! - [`config`]: start-up configuration from the environment;
//! - what only tier 1 signs or checks: [`ticket`]s (`requestId`s), the [`draw`] of a pre-queue,
//!   [`pow`] (proof of work) and [`enqueue`] tokens of the site (one place per account).

pub mod advancer;
mod assemble;
pub mod config;
pub mod draw;
pub mod edge_sync;
pub mod enqueue;
pub mod http;
pub mod lifecycle;
pub mod memory;
pub mod model;
pub mod outflow;
pub mod pow;
pub mod report;
pub mod service;
pub mod store;
pub mod ticket;

pub use assemble::{Tier1Clients, assemble};
pub use service::Tier1Service;
