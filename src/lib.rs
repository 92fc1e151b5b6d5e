//! streamnb's compiled core: the hot path of streaming naive Bayes text classification.
//!
//! Pure Rust modules (tested with `cargo test`, no Python needed):
//! - `vocab`: the exact vocabulary (token bytes -> feature id) and feature hashing.
//!
//! With the `python` feature (what maturin builds), `python` exposes them to Python as the
//! extension module `streamnb._core`; see ARCHITECTURE.md for the data path.

pub mod bag;
pub mod mail;
pub mod tokenize;
pub mod unicode_tables;
pub mod vocab;

#[cfg(feature = "python")]
mod python;
