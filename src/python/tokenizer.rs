//! `_core.WordTokenizer`: the default `Tokenizer` path (steps 1-5 and 7 of `tokenize`).

use super::errors::guard;
use crate::bag::Bag;
use crate::tokenize::{english_stop_words, needs_python_lower, Options, Words};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PySlice, PyString};
use std::hash::BuildHasher;

#[pyclass(module = "streamnb._core", frozen)]
pub struct WordTokenizer {
    pub options: Options,
}

/// The hasher of per-call bags (any fixed one does: a bag lives for one call).
pub fn bag_hasher() -> foldhash::fast::FixedState {
    foldhash::fast::FixedState::with_seed(0x5eed)
}

/// A Python str ready for the core's word tokenizer (see `WordTokenizer::text`).
pub enum Text<'a> {
    /// ASCII text: the str's own characters, which are their UTF-8.
    Borrowed(&'a str),
    /// Other text: a copy of its UTF-8, which goes when the text is read. Asking Python for
    /// the str's UTF-8 in place would make it build one and keep it on the str for as long
    /// as the str lives: a corpus held in memory would grow by its non-ASCII texts' size.
    Copied(String),
    /// Cut and lowercased by Python first (capital sigma, lone surrogates).
    Prepared(String),
}

impl Text<'_> {
    /// The text, whether to lowercase it and where to cut it (`Options::for_each_feature`).
    pub fn parts<'t>(&'t self, options: &Options) -> (&'t str, bool, Option<usize>) {
        match self {
            Text::Borrowed(s) => (s, options.lowercase, options.max_chars),
            Text::Copied(s) => (s, options.lowercase, options.max_chars),
            Text::Prepared(s) => (s, false, None),
        }
    }
}

impl WordTokenizer {
    /// Steps 1-4 prepared for on a Python str. Text whose lowercase needs context (capital
    /// sigma) or that holds lone surrogates (not UTF-8) is cut and lowercased by Python
    /// itself first; surrogates are no word characters, so replacing them loses nothing.
    pub fn text<'a>(&self, text: &'a Bound<'_, PyString>) -> PyResult<Text<'a>> {
        // A str subclass may redefine isascii: its texts take the copy, always right.
        let ascii =
            text.is_exact_instance_of::<PyString>() && text.call_method0(intern!(text.py(), "isascii"))?.is_truthy()?;
        let utf8 = if ascii {
            text.to_str().ok().map(Text::Borrowed) // an ASCII str's UTF-8 is its own data: no copy
        } else {
            text.encode_utf8() // fails on lone surrogates
                .ok()
                .and_then(|encoded| String::from_utf8(encoded.as_bytes().to_vec()).ok())
                .map(Text::Copied)
        };
        match utf8 {
            Some(Text::Borrowed(s)) => Ok(Text::Borrowed(s)),
            Some(Text::Copied(s)) if !(self.options.lowercase && needs_python_lower(&s)) => Ok(Text::Copied(s)),
            _ => Ok(Text::Prepared(self.python_prepared(text)?)),
        }
    }

    /// Steps 1-4 on a Python str (see `text`).
    pub fn words_of(&self, text: &Bound<'_, PyString>, words: &mut Words) -> PyResult<()> {
        match self.text(text)? {
            Text::Borrowed(s) => self.options.words(s, words),
            Text::Copied(s) => self.options.words(&s, words),
            Text::Prepared(s) => self.options.words_with(&s, false, None, words),
        }
        Ok(())
    }

    /// Every feature occurrence of a Python str (steps 1-5 and 7), see `text`.
    pub fn for_each_feature(
        &self,
        text: &Bound<'_, PyString>,
        scratch: &mut Vec<u8>,
        emit: impl FnMut(&[u8]),
    ) -> PyResult<()> {
        let text = self.text(text)?;
        let (text, lowercase, max_chars) = text.parts(&self.options);
        self.options.for_each_feature(text, lowercase, max_chars, scratch, emit);
        Ok(())
    }

    /// Text Python must cut and lowercase first (capital sigma, lone surrogates), as UTF-8
    /// (surrogates, which are no word characters, replaced).
    pub fn python_prepared(&self, text: &Bound<'_, PyString>) -> PyResult<String> {
        let py = text.py();
        let options = &self.options;
        let mut prepared = text.clone().into_any();
        if let Some(max_chars) = options.max_chars {
            let cut = PySlice::new(py, 0, max_chars.min(isize::MAX as usize) as isize, 1);
            prepared = prepared.get_item(cut)?;
        }
        if options.lowercase {
            prepared = prepared.call_method0("lower")?;
        }
        let encoded = prepared.call_method1("encode", ("utf-8", "surrogatepass"))?;
        Ok(String::from_utf8_lossy(encoded.cast::<PyBytes>()?.as_bytes()).into_owned())
    }

    /// Every feature of the words counted into `bag` (binary: each feature once).
    pub fn count_into(&self, words: &Words, stems: Option<&Words>, binary: bool, bag: &mut Bag) {
        let hasher = bag_hasher();
        let mut scratch = Vec::new();
        self.options
            .features(words, stems, &mut scratch, |f| bag.add(f, hasher.hash_one(f), 1.0));
        if binary {
            bag.binarize();
        }
    }
}

pub fn words_from_list(list: &Bound<'_, PyAny>, words: &mut Words) -> PyResult<()> {
    for item in list.try_iter()? {
        let item = item?;
        let text = item.cast::<PyString>()?;
        let mut scratch = Vec::new();
        words.push(super::keys::str_key(text, &mut scratch)?);
    }
    Ok(())
}

pub fn bag_to_dict<'py>(py: Python<'py>, bag: &Bag) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for i in 0..bag.len() {
        let key = super::keys::token_of(py, bag.feature(i))?;
        dict.set_item(key, bag.count(i) as i64)?;
    }
    Ok(dict)
}

#[pymethods]
impl WordTokenizer {
    #[new]
    #[pyo3(signature = (*, lowercase, stop_words, ngram_range, char_ngram_range, max_tokens, max_chars))]
    fn new(
        lowercase: bool,
        stop_words: Option<&Bound<'_, PyAny>>,
        ngram_range: Option<(usize, usize)>,
        char_ngram_range: Option<(usize, usize)>,
        max_tokens: Option<usize>,
        max_chars: Option<usize>,
    ) -> PyResult<Self> {
        guard(|| {
            let stop_words = match stop_words {
                None => None,
                Some(value) => {
                    if let Ok(name) = value.extract::<String>() {
                        debug_assert_eq!(name, "english");
                        Some(english_stop_words())
                    } else {
                        let mut words = Words::default();
                        words_from_list(value, &mut words)?;
                        Some(words.iter().map(|w| w.to_vec().into_boxed_slice()).collect())
                    }
                }
            };
            Ok(WordTokenizer {
                options: Options {
                    lowercase,
                    stop_words,
                    ngram_range,
                    char_ngram_range,
                    max_tokens,
                    max_chars,
                },
            })
        })
    }

    /// Steps 1-4: the words of a text, in order.
    fn words<'py>(&self, py: Python<'py>, text: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyList>> {
        guard(|| {
            let mut words = Words::default();
            self.words_of(text, &mut words)?;
            let out = PyList::empty(py);
            for word in words.iter() {
                out.append(super::keys::token_of(py, word)?)?;
            }
            Ok(out)
        })
    }

    /// The features of a text counted: {feature: count}, in first-appearance order.
    #[pyo3(signature = (text, binary=false))]
    fn count<'py>(&self, py: Python<'py>, text: &Bound<'py, PyString>, binary: bool) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let hasher = bag_hasher();
            let mut bag = Bag::default();
            let mut scratch = Vec::new();
            self.for_each_feature(text, &mut scratch, |f| bag.add(f, hasher.hash_one(f), 1.0))?;
            if binary {
                bag.binarize();
            }
            bag_to_dict(py, &bag)
        })
    }

    /// Steps 5 and 7 on words found elsewhere (a custom token pattern), with their stems
    /// (step 6) when the words are stemmed: {feature: count}.
    #[pyo3(signature = (words, stems=None, binary=false))]
    fn count_words<'py>(
        &self,
        py: Python<'py>,
        words: &Bound<'py, PyAny>,
        stems: Option<&Bound<'py, PyAny>>,
        binary: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let mut list = Words::default();
            words_from_list(words, &mut list)?;
            let stemmed = match stems {
                Some(stems) => {
                    let mut s = Words::default();
                    words_from_list(stems, &mut s)?;
                    Some(s)
                }
                None => None,
            };
            let mut bag = Bag::default();
            self.count_into(&list, stemmed.as_ref(), binary, &mut bag);
            bag_to_dict(py, &bag)
        })
    }

    /// Python's definitions the tables follow, for the tests: (is-word bytes per code point
    /// below `limit`, the Unicode version).
    #[staticmethod]
    fn _unicode_tables(py: Python<'_>, limit: u32) -> (Bound<'_, PyBytes>, &'static str) {
        let flags: Vec<u8> = (0..limit)
            .map(|code| char::from_u32(code).map_or(0, |c| crate::tokenize::is_word_char(c) as u8))
            .collect();
        (PyBytes::new(py, &flags), crate::unicode_tables::UNICODE_VERSION)
    }
}
