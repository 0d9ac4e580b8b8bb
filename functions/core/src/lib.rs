//! Shared core of vwr — only what both tiers use: identifiers, the error contract, signing
//! keys, tier-1 tokens and their place proofs (issued by tier 1, checked by tier 2), tier 2's
//! holds (signed by tier 2, read by both tiers with its public keys), poll
//! hints, configuration, the tick loop and logging set-up. What only tier 1 uses (tickets, the
//! draw, proofs of work, enqueue tokens) lives in `vwr-tier1`. Nothing here knows about
//! Lambda, DynamoDB or Redis.

pub mod admin_auth;
pub mod cache;
pub mod config;
pub mod error;
pub mod hints;
pub mod hold;
pub mod http;
pub mod identity;
pub mod ids;
pub mod keys;
pub mod logging;
pub mod metrics;
pub mod tally;
pub mod ticks;
pub mod tiers;
pub mod time;
pub mod token;

pub use error::{ApiError, ErrorCode};
pub use ids::EventId;
pub use keys::{EcKeyring, HmacKeyring, KeyError, KeyRing};
