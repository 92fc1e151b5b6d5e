//! The Python face of the core: the extension module `streamnb._core`.
//!
//! Every method enters through `guard`, so a Rust panic becomes
//! `streamnb.errors.InternalError` instead of PyO3's `PanicException`.

mod errors;
mod keys;
pub(crate) mod mail;
mod tokenizer;
mod vocabulary;

use pyo3::prelude::*;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<vocabulary::Vocabulary>()?;
    m.add_class::<tokenizer::WordTokenizer>()?;
    m.add_class::<mail::EmailTokenizer>()?;
    m.add_function(wrap_pyfunction!(mail::parse_message, m)?)?;
    m.add_function(wrap_pyfunction!(mail::decode_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(mail::decode_header_value, m)?)?;
    m.add_function(wrap_pyfunction!(mail::html_to_text, m)?)?;
    m.add_function(wrap_pyfunction!(mail::url_host, m)?)?;
    m.add("ENGLISH_STOP_WORDS", crate::tokenize::ENGLISH_STOP_WORDS)?;
    m.add_function(wrap_pyfunction!(errors::_panic_for_tests, m)?)?;
    Ok(())
}
