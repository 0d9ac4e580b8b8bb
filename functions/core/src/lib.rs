//! Shared core of vwr: identifiers, the error contract, signing keys, tier-1 tokens,
//! tickets (`requestId`s), poll hints and logging set-up. Nothing here knows about Lambda,
//! DynamoDB or Redis.

pub mod admin_auth;
pub mod cache;
pub mod config;
pub mod draw;
pub mod enqueue;
pub mod error;
pub mod hints;
pub mod http;
pub mod identity;
pub mod ids;
pub mod keys;
pub mod logging;
pub mod metrics;
pub mod pow;
pub mod ticket;
pub mod ticks;
pub mod tiers;
pub mod time;
pub mod token;

pub use error::{ApiError, ErrorCode};
pub use ids::EventId;
pub use keys::{EcKeyring, HmacKeyring, KeyError, KeyRing};
