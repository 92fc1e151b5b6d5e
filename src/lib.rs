//! streamnb's compiled core: the hot path of streaming naive Bayes text classification.
//!
//! Pure Rust modules (tested with `cargo test`, no Python needed):
//! - `vocab`: the exact vocabulary (token bytes -> feature id) and feature hashing;
//! - `tokenize`: the default word tokenizer (Python's `\w` and `str.lower()`);
//! - `bag`: distinct features with counts and hashes, in first-appearance order;
//! - `mail`: raw email -> the email tokenizer's features (`mail::features::EmailFeatures`),
//!   bounded on any input; `EmailFeatures::field` names the part of a message a feature came from;
//! - `weighting`: the spam filter's field-mass weights and scoring IDF;
//! - `idf`: EmailNB's scoring of a document, those formulas over a model's counts;
//! - `smoothing`: smoothing chosen online (`alpha="auto"`): the candidates and their evidence;
//! - `rule`: the spam filter's default verdicts, decided on the log-odds, and their display score;
//! - `site`: the service's blend of the site model's verdict with a user's.
//!
//! With the `python` feature (what maturin builds), `python` exposes them to Python as the
//! extension module `streamnb._core`; see ARCHITECTURE.md for the data path.

pub mod bag;
pub mod doc;
pub mod evidence;
pub mod feedback;
pub mod fusion;
pub mod idf;
pub mod idtable;
pub mod logistic;
pub mod mail;
pub mod nb;
pub mod ngrams;
pub mod parallel;
pub mod prefetch;
pub mod pruning;
pub mod records;
pub mod replay;
pub mod rule;
pub mod site;
pub mod smoothing;
pub mod snapshot;
pub mod space;
pub mod store;
pub mod tokenize;
pub mod unicode_tables;
pub mod vocab;
pub mod weighting;

#[cfg(feature = "python")]
mod python;
