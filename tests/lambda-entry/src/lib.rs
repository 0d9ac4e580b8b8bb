//! Test-only crate: see `tests/entry.rs`.
