//! vwr tier 2: per-event admission behind the edge.
//!
//! - [`store::AdmissionStore`] with [`redis_store::RedisStore`] (one Lua script per state
//!   change, Cluster-safe keys) and [`memory::MemoryStore`] (local default, the model);
//! - [`registry::Registry`]: the durable copy of registrations (DynamoDB, memory);
//! - [`service::Tier2Service`]: check / status / heartbeat / leave, entry tokens, estimates;
//! - [`worker::Worker`]: admissions, cleanup, SQS FIFO notices ([`notices`]);
//! - [`entry_token`]: ES256 entry tokens and the JWKS; [`protect`]: the check in front of
//!   protected APIs; [`identity`]: who the caller is;
//! - [`http`]: the axum routers.

pub mod config;
pub mod entry_token;
pub mod http;
pub mod identity;
pub mod memory;
pub mod model;
pub mod notices;
pub mod protect;
pub mod ranked;
pub mod redis_store;
pub mod registry;
pub mod scripts;
pub mod service;
pub mod store;
pub mod worker;

pub use service::Tier2Service;
