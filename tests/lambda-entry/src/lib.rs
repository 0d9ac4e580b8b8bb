//! Test-only crate: the real Lambda binaries run against a fake Lambda Runtime API
//! ([`fake_runtime`]), moto and Redis (`tests/entry.rs`).

pub mod fake_runtime;
