//! The Python face of the core: the extension module `streamnb._core`.
//!
//! Every method enters through `guard`, so a Rust panic becomes
//! `streamnb.errors.InternalError` instead of PyO3's `PanicException`.

mod errors;
mod formulas;
mod fusion;
mod keys;
mod labels;
mod logistic;
pub(crate) mod mail;
mod model;
mod model_errors;
mod ngrams;
mod output;
mod reader;
mod records;
mod tokenizer;
mod values;
mod vocabulary;
mod weighting;

use pyo3::prelude::*;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<vocabulary::Vocabulary>()?;
    m.add_class::<tokenizer::WordTokenizer>()?;
    m.add_class::<model::Core>()?;
    m.add_class::<logistic::LogisticCore>()?;
    m.add_class::<fusion::FusionCore>()?;
    m.add_class::<mail::EmailTokenizer>()?;
    m.add_class::<weighting::EmailWeights>()?;
    m.add_class::<ngrams::ByteNgrams>()?;
    m.add_function(wrap_pyfunction!(mail::parse_message, m)?)?;
    m.add_function(wrap_pyfunction!(mail::decode_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(mail::decode_header_value, m)?)?;
    m.add_function(wrap_pyfunction!(mail::html_to_text, m)?)?;
    m.add_function(wrap_pyfunction!(mail::url_host, m)?)?;
    m.add("ENGLISH_STOP_WORDS", crate::tokenize::ENGLISH_STOP_WORDS)?;
    // The email tokenizer's default header lists (streamnb.features.email re-exports them as tuples).
    m.add(
        "DEFAULT_ADDRESS_HEADERS",
        crate::mail::features::DEFAULT_ADDRESS_HEADERS.to_vec(),
    )?;
    m.add(
        "DEFAULT_WORD_HEADERS",
        crate::mail::features::DEFAULT_WORD_HEADERS.to_vec(),
    )?;
    m.add(
        "DEFAULT_IGNORED_HEADERS",
        crate::mail::features::DEFAULT_IGNORED_HEADERS.to_vec(),
    )?;
    m.add("DEFAULT_MAX_BYTES", crate::mail::features::DEFAULT_MAX_BYTES)?;
    // The model file's optional store arrays (streamnb.store.STORE_ARRAYS lists them too).
    m.add("MERGED_ARRAYS", crate::snapshot::MERGED_ARRAYS.to_vec())?;
    m.add("FORGOTTEN_ARRAYS", crate::snapshot::FORGOTTEN_ARRAYS.to_vec())?;
    m.add("MIN_SCALE", crate::store::MIN_SCALE)?;
    m.add("STALE_COVERAGE", crate::rule::STALE_COVERAGE)?;
    m.add("STALE_SPAM_RAISE", crate::rule::STALE_SPAM_RAISE)?;
    m.add("QUANTUM_BITS", crate::weighting::QUANTUM_BITS)?;
    m.add("MAX_STORED", crate::store::MAX_STORED)?;
    m.add("ROUNDING_TOLERANCE", crate::store::ROUNDING_TOLERANCE)?;
    m.add("REDERIVE_EVERY", crate::nb::REDERIVE_EVERY)?;
    m.add("TEMPERATURES", crate::smoothing::TEMPERATURES)?;
    // the schedule of documents learned without a prediction's scores (src/smoothing.rs)
    m.add("SCHEDULE_RAMP", crate::smoothing::RAMP)?;
    m.add("SCHEDULE_PERIOD", crate::smoothing::PERIOD)?;
    m.add("SCHEDULE_BLOCK", crate::smoothing::BLOCK)?;
    m.add_function(wrap_pyfunction!(errors::_panic_for_tests, m)?)?;
    m.add_function(wrap_pyfunction!(formulas::class_log_prior, m)?)?;
    m.add_function(wrap_pyfunction!(formulas::log_posterior, m)?)?;
    m.add_function(wrap_pyfunction!(formulas::log_odds_cutoffs, m)?)?;
    m.add_function(wrap_pyfunction!(formulas::log_odds_decide, m)?)?;
    m.add_function(wrap_pyfunction!(formulas::log_odds_score, m)?)?;
    m.add_function(wrap_pyfunction!(formulas::site_user_share, m)?)?;
    m.add_function(wrap_pyfunction!(formulas::site_blend, m)?)?;
    m.add_function(wrap_pyfunction!(formulas::site_blend_clues, m)?)?;
    m.add_function(wrap_pyfunction!(keys::token_key_arrays, m)?)?;
    Ok(())
}
