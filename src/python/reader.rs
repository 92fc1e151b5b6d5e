//! How a document becomes ids and values of a model's feature space (`crate::space`): a
//! mapping feature -> value, or raw text through the model's tokenizer (run in the core
//! when it can be, else called once per text). The last documents read are remembered, so
//! predicting and then learning the same text reads it once, even when other threads read
//! other texts in between. Every model class of the core (`Core`, `LogisticCore`) reads its
//! documents through a `Reader`.
//!
//! A raw text the core tokenizes itself can be counted before the call, without the GIL
//! and without the model (`Reader::pending`, `Pending::count`): a model's methods hold the
//! GIL, and with it their borrow of the model, only to look the counted keys up and score;
//! parsing and tokenizing, most of a message's cost, run on as many cores as threads call.

use super::errors::{error, Kind as ErrorKind};
use super::keys::{bucket_text, key_of, unpack};
use super::mail::EmailTokenizer;
use super::ngrams::ByteNgrams;
use super::tokenizer::{Text, WordTokenizer};
use super::values::{describe, float_repr, helpers};
use super::weighting::EmailWeights;
use crate::bag::Bag;
use crate::doc::{Doc, UNKNOWN};
use crate::mail::features::EmailFeatures;
use crate::parallel;
use crate::space::{Encoder, Features, Shape};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyFloat, PyInt, PyString};
use pyo3::PyClass;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// How raw text becomes features.
pub(super) enum Featurizer {
    /// No tokenizer: documents must be mappings.
    None,
    /// The core's word tokenizer (`Tokenizer` with the default pattern, no stemmer).
    Words { tokenizer: Py<WordTokenizer>, binary: bool },
    /// The core's email tokenizer (`EmailTokenizer` with core body settings): raw bytes in.
    Email { tokenizer: Py<EmailTokenizer> },
    /// The spam filter's field-mass weights over the core's email tokenizer: raw bytes in.
    Weights { weights: Py<EmailWeights> },
    /// Byte n-grams of a raw message (with an email tokenizer's features, if it holds one).
    Bytes { ngrams: Py<ByteNgrams> },
    /// Any other callable text -> mapping (called from here, once per text).
    Python(Py<PyAny>),
}

impl Featurizer {
    /// Another handle on the same featurizer, for a text counted away from the model (None:
    /// not one the core runs on raw text).
    fn in_core(&self, py: Python<'_>) -> Option<Featurizer> {
        Some(match self {
            Featurizer::Words { tokenizer, binary } => Featurizer::Words {
                tokenizer: tokenizer.clone_ref(py),
                binary: *binary,
            },
            Featurizer::Email { tokenizer } => Featurizer::Email {
                tokenizer: tokenizer.clone_ref(py),
            },
            Featurizer::Weights { weights } => Featurizer::Weights {
                weights: weights.clone_ref(py),
            },
            Featurizer::Bytes { ngrams } => Featurizer::Bytes {
                ngrams: ngrams.clone_ref(py),
            },
            Featurizer::None | Featurizer::Python(_) => return None,
        })
    }
}

/// Documents remembered: enough for the predictions of several threads to be learned or
/// observed right after, each still read once.
const REMEMBERED: usize = 16;

/// A model's way of reading documents (see the module docstring).
pub(super) struct Reader {
    pub featurizer: Featurizer,
    /// The documents read last, the newest first.
    recent: VecDeque<Last>,
    /// A text counted away from the model for the `read` that follows (`offer`).
    offered: Option<(Py<PyAny>, Counted)>,
    /// Bumped by `set_featurizer`: a text counted with another featurizer is read again.
    generation: u64,
    signed: bool,
}

/// A raw text to count away from the model (`Reader::pending`), then `count`ed without the GIL.
pub(super) struct Pending<'py> {
    featurizer: Featurizer,
    generation: u64,
    shape: Shape,
    text: Bound<'py, PyAny>,
}

/// A text counted away from the model (by the featurizer of a generation of the reader):
/// its keys still to be looked up (`Encoder::finish_in`).
pub(super) struct Counted(Encoder<'static>, u64);

/// How long a call waits for a model another thread holds before it gives up (a call made
/// from inside a call on the same model, by a Python tokenizer, would wait for itself).
const WAIT_FOR_MODEL: Duration = Duration::from_secs(60);

/// The model of `slf` for a call, waiting with the GIL released while another thread's call
/// holds it: that call may have let the GIL go in Python code it ran (the first import of a
/// helper, a garbage collection's finalizer, a label's `__hash__`), and without waiting
/// PyO3 refuses the borrow ("Already borrowed").
pub(super) fn borrowed<'py, T>(slf: &Bound<'py, T>) -> PyResult<PyRefMut<'py, T>>
where
    T: PyClass<Frozen = pyo3::pyclass::boolean_struct::False>,
{
    let since = Instant::now();
    loop {
        match slf.try_borrow_mut() {
            Ok(this) => return Ok(this),
            Err(busy) if since.elapsed() >= WAIT_FOR_MODEL => return Err(busy.into()),
            Err(_) => slf.py().detach(|| std::thread::sleep(Duration::from_micros(20))),
        }
    }
}

/// x counted away from the model of `slf` (`Reader::pending`, `Pending::count`: the model
/// borrowed only to see how it reads x, the GIL released while x is parsed and tokenized),
/// then the model borrowed for the call, x offered to its reader (`Reader::offer`).
pub(super) fn counted_apart<'py, T>(
    slf: &Bound<'py, T>,
    x: &Bound<'py, PyAny>,
    parts: impl Fn(&mut T) -> (&mut Reader, &Features),
) -> PyResult<PyRefMut<'py, T>>
where
    T: PyClass<Frozen = pyo3::pyclass::boolean_struct::False>,
{
    let pending = {
        let mut this = borrowed(slf)?;
        let (reader, space) = parts(&mut this);
        reader.pending(space, x)?
    };
    let counted = pending.map(Pending::count).transpose()?;
    let mut this = borrowed(slf)?;
    if let Some(counted) = counted {
        parts(&mut this).0.offer(x, counted);
    }
    Ok(this)
}

impl<'py> Pending<'py> {
    /// Parse and tokenize the text with the GIL released (the featurizers the core runs are
    /// frozen: nothing of them changes while other threads run).
    pub fn count(self) -> PyResult<Counted> {
        let py = self.text.py();
        let apart = Space::Apart(&self.shape);
        let encoder = match &self.featurizer {
            Featurizer::Words { tokenizer, binary } => {
                let Ok(text) = self.text.cast::<PyString>() else {
                    return Err(error(
                        ErrorKind::InvalidType,
                        format!("Tokenizer expects a str, got {}", describe(&self.text)),
                    ));
                };
                let tokenizer = tokenizer.get();
                let input = tokenizer.text(text)?;
                py.detach(|| encode_str(apart, tokenizer, *binary, &input))
            }
            Featurizer::Email { tokenizer } => {
                let features = &tokenizer.get().features;
                with_raw_bytes(&self.text, |raw| py.detach(|| encode_email(apart, features, raw)))?
            }
            Featurizer::Weights { weights } => {
                let weights = weights.get();
                with_raw_bytes(&self.text, |raw| py.detach(|| encode_weighted(apart, weights, raw)))?
            }
            Featurizer::Bytes { ngrams } => {
                let ngrams = ngrams.get();
                with_raw_bytes(&self.text, |raw| py.detach(|| encode_ngrams(apart, ngrams, raw)))?
            }
            Featurizer::None | Featurizer::Python(_) => unreachable!("Reader::pending takes in-core featurizers only"),
        };
        Ok(Counted(encoder.without_vocabulary(), self.generation))
    }
}

/// Where a reading counts: in the model's space, or by the space's shape alone, away from
/// the model (looked up later by `Encoder::finish_in`).
#[derive(Clone, Copy)]
enum Space<'a> {
    Model(&'a Features),
    Apart(&'a Shape),
}

impl<'a> Space<'a> {
    fn encoder(self, features: usize, bytes: usize) -> Encoder<'a> {
        match self {
            Space::Model(space) => space.encoder(features, bytes),
            Space::Apart(shape) => shape.encoder(features, bytes),
        }
    }

    fn hasher(self) -> foldhash::fast::RandomState {
        match self {
            Space::Model(space) => space.hasher(),
            Space::Apart(shape) => shape.hasher().clone(),
        }
    }

    fn n_buckets(self) -> Option<u32> {
        match self {
            Space::Model(space) => space.n_buckets(),
            Space::Apart(shape) => shape.n_buckets(),
        }
    }
}

/// A document read for one call (`Reader::read`), to be handed back with `Reader::keep`.
pub(super) struct Reading {
    pub doc: Doc,
    remember: bool,
    /// The document is the one remembered from the call before (not read again).
    pub reused: bool,
}

struct Last {
    x: Py<PyAny>,
    /// A copy of the dict as it was (it holds the items, so no other object can take their addresses).
    copy: Option<Py<PyDict>>,
    /// The length of a text (None for a mapping): texts of other lengths are not compared.
    size: Option<usize>,
    doc: Doc,
}

/// The length of a text (str or bytes), None for anything else.
fn text_size(x: &Bound<'_, PyAny>) -> Option<usize> {
    if let Ok(bytes) = x.cast::<PyBytes>() {
        return Some(bytes.as_bytes().len());
    }
    x.cast::<PyString>().ok().and_then(|text| text.len().ok())
}

impl Reader {
    /// A reader with no tokenizer (documents must be mappings); `signed`: feature values
    /// may be negative (else a negative count is refused).
    pub fn new(signed: bool) -> Self {
        Reader {
            featurizer: Featurizer::None,
            recent: VecDeque::new(),
            offered: None,
            generation: 0,
            signed,
        }
    }

    /// Change how raw text becomes features. `in_core`: the tokenizer's core object (a
    /// `WordTokenizer`, an `EmailTokenizer` or an `EmailWeights`) when the core can run it
    /// itself, with `binary` for word tokenizers; else `tokenizer` is called from here.
    pub fn set_featurizer(
        &mut self,
        tokenizer: Option<Bound<'_, PyAny>>,
        in_core: Option<Bound<'_, PyAny>>,
        binary: bool,
    ) {
        self.featurizer = match (in_core, tokenizer) {
            (Some(core), _) => match core.cast_into::<WordTokenizer>() {
                Ok(words) => Featurizer::Words {
                    tokenizer: words.unbind(),
                    binary,
                },
                Err(other) => match other.into_inner().cast_into::<EmailTokenizer>() {
                    Ok(email) => Featurizer::Email {
                        tokenizer: email.unbind(),
                    },
                    Err(other) => match other.into_inner().cast_into::<EmailWeights>() {
                        Ok(weights) => Featurizer::Weights {
                            weights: weights.unbind(),
                        },
                        Err(other) => match other.into_inner().cast_into::<ByteNgrams>() {
                            Ok(ngrams) => Featurizer::Bytes {
                                ngrams: ngrams.unbind(),
                            },
                            Err(_) => Featurizer::None,
                        },
                    },
                },
            },
            (None, Some(callable)) => Featurizer::Python(callable.unbind()),
            (None, None) => Featurizer::None,
        };
        self.recent.clear();
        self.generation += 1;
    }

    /// A document from a mapping feature -> value: keys and values checked as the Python
    /// models always did (numbers, finite, >= 0 unless Bernoulli).
    fn encode_mapping(&self, space: &Features, x: &Bound<'_, PyAny>) -> PyResult<Doc> {
        let py = x.py();
        if let Ok(dict) = x.cast::<PyDict>() {
            return self.encode_pairs(space, py, dict.len(), dict.iter());
        }
        // Any other Mapping: its items() must give pairs (errors raised by items() itself
        // propagate); a key it lists twice counts twice.
        let not_pairs = |what: &Bound<'_, PyAny>| {
            let message = format!(
                "a document's items() must give (feature, value) pairs, got {}",
                describe(what)
            );
            error(ErrorKind::InvalidType, message)
        };
        let listed = x.call_method0("items")?;
        let mut pairs = Vec::new();
        for item in listed.try_iter().map_err(|_| not_pairs(&listed))? {
            let item = item?;
            pairs.push(
                item.extract::<(Bound<'_, PyAny>, Bound<'_, PyAny>)>()
                    .map_err(|_| not_pairs(&item))?,
            );
        }
        self.encode_pairs(space, py, pairs.len(), pairs.into_iter())
    }

    /// The document of (feature, value) pairs. As the models always checked: a value that
    /// is not a number is reported first, then the first non-finite value, then the first
    /// negative count.
    fn encode_pairs<'py>(
        &self,
        space: &Features,
        py: Python<'py>,
        len: usize,
        pairs: impl Iterator<Item = (Bound<'py, PyAny>, Bound<'py, PyAny>)>,
    ) -> PyResult<Doc> {
        let real = helpers(py)?.1.bind(py);
        let signed = self.signed;
        let hashed = space.n_buckets().is_some();
        let mut encoder = space.encoder(len, len * 8);
        let mut scratch = Vec::new();
        let (mut keys, mut ends, mut values) = (
            Vec::with_capacity(len * 8),
            Vec::with_capacity(len),
            Vec::with_capacity(len),
        );
        let (mut non_finite, mut negative) = (None, None);
        for (key, value) in pairs {
            let v = if let Ok(f) = value.cast_exact::<PyFloat>() {
                f.value()
            } else if let Ok(i) = value.cast::<PyInt>() {
                match i.extract::<i64>() {
                    Ok(i) => i as f64,
                    Err(_) => match i.extract::<f64>() {
                        Ok(v) => v,
                        Err(_) => {
                            // an int beyond float range: named as it was given
                            let message = format!("feature values must be finite numbers, got {}", describe(&value));
                            return Err(error(ErrorKind::InvalidInput, message));
                        }
                    },
                }
            } else if value.is_instance(real)? {
                value.extract::<f64>().unwrap_or(f64::NAN)
            } else {
                return Err(error(
                    ErrorKind::InvalidType,
                    format!("feature values must be numbers, got {}", describe(&value)),
                ));
            };
            if !v.is_finite() {
                non_finite.get_or_insert(v);
            } else if v < 0.0 && !signed {
                negative.get_or_insert(v);
            }
            // hashed models bucket str(token), as they always did (saved models still load)
            let key = if hashed {
                bucket_text(&key, &mut scratch)?
            } else {
                key_of(&key, &mut scratch)?
            };
            keys.extend_from_slice(key);
            ends.push(keys.len());
            values.push(v);
        }
        encoder.add_distinct_all(unpack(&keys, &ends).into_iter(), &values); // a key listed twice accumulates
        if let Some(bad) = non_finite {
            return Err(error(
                ErrorKind::InvalidInput,
                format!("feature values must be finite, got {}", float_repr(py, bad)),
            ));
        }
        if let Some(bad) = negative {
            return Err(error(
                ErrorKind::InvalidInput,
                format!("feature counts must be >= 0, got {}", float_repr(py, bad)),
            ));
        }
        Ok(encoder.finish())
    }

    /// A document from text through the core's word tokenizer.
    fn encode_words(
        &self,
        space: &Features,
        tokenizer: &WordTokenizer,
        binary: bool,
        text: &Bound<'_, PyString>,
    ) -> PyResult<Doc> {
        let input = tokenizer.text(text)?;
        Ok(encode_str(Space::Model(space), tokenizer, binary, &input).finish())
    }

    /// The documents of a batch: raw texts the core tokenizes itself are read on several
    /// threads, with the GIL released; anything else one by one.
    pub fn encode_batch(&self, space: &Features, xs: &[Bound<'_, PyAny>]) -> PyResult<Vec<Doc>> {
        let py = match xs.first() {
            Some(x) => x.py(),
            None => return Ok(Vec::new()),
        };
        match &self.featurizer {
            Featurizer::Words { tokenizer, binary } if xs.iter().all(|x| x.is_instance_of::<PyString>()) => {
                let tokenizer = tokenizer.get();
                let inputs: Vec<Text<'_>> = xs
                    .iter()
                    .map(|x| tokenizer.text(x.cast::<PyString>()?))
                    .collect::<PyResult<_>>()?;
                Ok(py.detach(|| {
                    parallel::map(&inputs, |input| {
                        encode_str(Space::Model(space), tokenizer, *binary, input).finish()
                    })
                }))
            }
            Featurizer::Email { tokenizer } => match all_bytes(xs) {
                Some(raws) => {
                    let features = &tokenizer.get().features;
                    Ok(py.detach(|| {
                        parallel::map(&raws, |raw| encode_email(Space::Model(space), features, raw).finish())
                    }))
                }
                None => self.one_by_one(space, xs),
            },
            Featurizer::Weights { weights } => match all_bytes(xs) {
                Some(raws) => {
                    let weights = weights.get();
                    Ok(py.detach(|| {
                        parallel::map(&raws, |raw| encode_weighted(Space::Model(space), weights, raw).finish())
                    }))
                }
                None => self.one_by_one(space, xs),
            },
            Featurizer::Bytes { ngrams } => match all_bytes(xs) {
                Some(raws) => {
                    let ngrams = ngrams.get();
                    Ok(py.detach(|| {
                        parallel::map(&raws, |raw| encode_ngrams(Space::Model(space), ngrams, raw).finish())
                    }))
                }
                None => self.one_by_one(space, xs),
            },
            _ => self.one_by_one(space, xs),
        }
    }

    fn one_by_one(&self, space: &Features, xs: &[Bound<'_, PyAny>]) -> PyResult<Vec<Doc>> {
        xs.iter().map(|x| self.fresh_doc(space, x)).collect()
    }

    /// One document of a batch, not remembered as the last one.
    pub fn fresh_doc(&self, space: &Features, x: &Bound<'_, PyAny>) -> PyResult<Doc> {
        let py = x.py();
        if x.is_instance_of::<PyString>() || x.is_instance_of::<PyBytes>() {
            self.encode_text(space, x)
        } else if x.is_instance_of::<PyDict>() || x.is_instance(helpers(py)?.2.bind(py))? {
            self.encode_mapping(space, x)
        } else {
            Err(error(
                ErrorKind::InvalidType,
                format!(
                    "a document must be a mapping feature -> value, or str/bytes text, got {}",
                    describe(x)
                ),
            ))
        }
    }

    fn encode_text(&self, space: &Features, x: &Bound<'_, PyAny>) -> PyResult<Doc> {
        match &self.featurizer {
            Featurizer::None => Err(error(
                ErrorKind::InvalidType,
                format!(
                    "got raw text {} but the model has no tokenizer; pass tokenizer=... or give a mapping feature -> count",
                    describe(x)
                ),
            )),
            Featurizer::Words { tokenizer, binary } => {
                let Ok(text) = x.cast::<PyString>() else {
                    return Err(error(ErrorKind::InvalidType, format!("Tokenizer expects a str, got {}", describe(x))));
                };
                self.encode_words(space, tokenizer.get(), *binary, text)
            }
            Featurizer::Email { tokenizer } => {
                let features = &tokenizer.get().features;
                with_raw_bytes(x, |raw| encode_email(Space::Model(space), features, raw).finish())
            }
            Featurizer::Weights { weights } => {
                with_raw_bytes(x, |raw| encode_weighted(Space::Model(space), weights.get(), raw).finish())
            }
            Featurizer::Bytes { ngrams } => {
                with_raw_bytes(x, |raw| encode_ngrams(Space::Model(space), ngrams.get(), raw).finish())
            }
            Featurizer::Python(tokenizer) => {
                let py = x.py();
                let features = tokenizer.bind(py).call1((x,))?;
                if !features.is_instance(helpers(py)?.2.bind(py))? {
                    return Err(error(
                        ErrorKind::InvalidType,
                        format!("the tokenizer must return a mapping feature -> count, got {}", describe(&features)),
                    ));
                }
                self.encode_mapping(space, &features)
            }
        }
    }

    /// Before a call on x that holds the model: x as a text to count away from the model
    /// (`Pending::count`, without the GIL), or None when the model reads it itself (a
    /// mapping, a Python tokenizer, or x remembered).
    pub fn pending<'py>(&self, space: &Features, x: &Bound<'py, PyAny>) -> PyResult<Option<Pending<'py>>> {
        let is_text = x.is_instance_of::<PyString>() || x.is_instance_of::<PyBytes>();
        if !is_text || self.remembered(space, x)?.is_some() {
            return Ok(None);
        }
        Ok(self.featurizer.in_core(x.py()).map(|featurizer| Pending {
            featurizer,
            generation: self.generation,
            shape: space.shape(),
            text: x.clone(),
        }))
    }

    /// Where x is among the documents remembered (its ids still holding), if it is.
    fn remembered(&self, space: &Features, x: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
        let size = text_size(x);
        for (at, last) in self.recent.iter().enumerate() {
            if last.size == size && reusable(space, &last.doc) && same_document(last, x)? {
                return Ok(Some(at));
            }
        }
        Ok(None)
    }

    /// Hand the reader x counted away from the model (`pending`), for the `read` of x
    /// that follows at once.
    pub fn offer(&mut self, x: &Bound<'_, PyAny>, counted: Counted) {
        self.offered = Some((x.clone().unbind(), counted));
    }

    /// The document `x` for one call: one remembered when x is a text (or the same dict)
    /// read lately and its ids still hold, else the one `offer`ed, else read now. Hand it
    /// back with `keep` after the call, so predicting and then learning the same text
    /// tokenizes it once.
    pub fn read(&mut self, space: &Features, x: &Bound<'_, PyAny>) -> PyResult<Reading> {
        let generation = self.generation;
        let offered = self
            .offered
            .take()
            .filter(|(offered, counted)| offered.bind(x.py()).is(x) && counted.1 == generation);
        let py = x.py();
        let is_text = x.is_instance_of::<PyString>() || x.is_instance_of::<PyBytes>();
        let is_dict = !is_text && x.is_instance_of::<PyDict>();
        if !(is_text || is_dict || x.is_instance(helpers(py)?.2.bind(py))?) {
            return Err(error(
                ErrorKind::InvalidType,
                format!(
                    "a document must be a mapping feature -> value, or str/bytes text, got {}",
                    describe(x)
                ),
            ));
        }
        if !(is_text || is_dict) {
            let doc = self.encode_mapping(space, x)?; // another Mapping: not remembered
            return Ok(Reading {
                doc,
                remember: false,
                reused: false,
            });
        }
        let at = self.remembered(space, x)?;
        // "reused": the newest document read, the one a prediction just scored (logistic
        // regression keeps its dot products for the learning step that follows)
        let reused = at == Some(0);
        let cached = at.and_then(|at| self.recent.remove(at)).map(|last| last.doc);
        let doc = match cached {
            Some(doc) => doc,
            None if is_text => match offered.and_then(|(_, Counted(encoder, _))| encoder.finish_in(space)) {
                Some(doc) => doc,
                None => self.encode_text(space, x)?,
            },
            None => self.encode_mapping(space, x)?,
        };
        Ok(Reading {
            doc,
            remember: true,
            reused,
        })
    }

    /// Remember the document just used (text, or a dict with a copy of its items as they were).
    pub fn keep(&mut self, x: &Bound<'_, PyAny>, reading: Reading) -> PyResult<()> {
        if !reading.remember {
            return Ok(());
        }
        let copy = match x.cast::<PyDict>() {
            Ok(dict) => Some(dict.copy()?.unbind()),
            Err(_) => None,
        };
        self.recent.truncate(REMEMBERED - 1);
        self.recent.push_front(Last {
            x: x.clone().unbind(),
            copy,
            size: text_size(x),
            doc: reading.doc,
        });
        Ok(())
    }

    /// Forget the remembered documents (their ids may no longer hold).
    pub fn forget(&mut self) {
        self.recent.clear();
    }

    /// Bytes held by the remembered documents.
    pub fn heap_bytes(&self) -> usize {
        self.recent.iter().map(|last| last.doc.heap_bytes()).sum()
    }
}

/// Can a remembered document be used again? Its tokens must all still be in the
/// vocabulary, and the features that were new when it was encoded must still be new
/// (looked up at the vocabulary's current epoch): once they have ids, it lists them
/// after the known ones, and a prediction would sum its features in another order than
/// a fresh encoding's (predictions must not depend on what is remembered, to the last bit).
fn reusable(space: &Features, doc: &Doc) -> bool {
    let keyed = &doc.ids[doc.first_key()..];
    let still_new = keyed.is_empty()
        || (doc.epoch == space.vocabulary().map(|v| v.epoch()) && keyed.iter().all(|&id| id == UNKNOWN));
    space.doc_is_current(doc) && still_new
}

/// Is x the document remembered: the same text, or the same dict holding the same
/// objects? (A value replaced by an equal object counts as a change: encoded again.)
fn same_document(last: &Last, x: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = x.py();
    match (&last.copy, x.cast::<PyDict>()) {
        (Some(copy), Ok(dict)) => Ok(last.x.bind(py).is(x) && same_items(copy.bind(py), dict)),
        (Some(_), Err(_)) => Ok(false),
        (None, _) => same_text(last.x.bind(py), x),
    }
}

/// A text through the core's word tokenizer, counted in `space` (no Python).
fn encode_str<'a>(space: Space<'a>, tokenizer: &WordTokenizer, binary: bool, input: &Text<'_>) -> Encoder<'a> {
    let options = &tokenizer.options;
    let (text, lowercase, max_chars) = input.parts(options);
    let mut encoder = space.encoder(text.len() / 16 + 8, text.len() / 2);
    let mut scratch = Vec::new();
    options.for_each_feature(text, lowercase, max_chars, &mut scratch, |f| encoder.add(f, 1.0));
    if binary {
        encoder.binarize();
    }
    encoder
}

/// A raw message through the core's email tokenizer, counted in `space`.
fn encode_email<'a>(space: Space<'a>, features: &EmailFeatures, raw: &[u8]) -> Encoder<'a> {
    let mut bag = Bag::default();
    features.count_into(raw, &mut bag, &space.hasher());
    let mut encoder = space.encoder(bag.len(), 0);
    for i in 0..bag.len() {
        encoder.add_hashed(bag.feature(i), bag.hash(i), bag.count(i));
    }
    encoder
}

/// The bytes of raw text: bytes as they are, str re-encoded as the Python tokenizer does
/// (streamnb.features.email._to_bytes).
fn with_raw_bytes<R>(x: &Bound<'_, PyAny>, body: impl FnOnce(&[u8]) -> R) -> PyResult<R> {
    if let Ok(raw) = x.cast::<PyBytes>() {
        return Ok(body(raw.as_bytes()));
    }
    let raw = x
        .call_method1("encode", ("utf-8", "surrogateescape"))
        .or_else(|_| x.call_method1("encode", ("utf-8", "replace")))?;
    Ok(body(raw.cast::<PyBytes>()?.as_bytes()))
}

/// A raw message through the spam filter's weighting, counted in `space`.
fn encode_weighted<'a>(space: Space<'a>, weights: &EmailWeights, raw: &[u8]) -> Encoder<'a> {
    let (bag, values) = weights.weigh_raw(raw, &space.hasher());
    let mut encoder = space.encoder(bag.len(), 0);
    for (i, &v) in values.iter().enumerate() {
        if v > 0.0 {
            encoder.add_hashed(bag.feature(i), bag.hash(i), v);
        }
    }
    encoder
}

/// A raw message's byte n-grams (and email features), counted in `space`.
fn encode_ngrams<'a>(space: Space<'a>, ngrams: &ByteNgrams, raw: &[u8]) -> Encoder<'a> {
    let windows = raw.len().min(ngrams.grams.max_bytes);
    let mut encoder = space.encoder(windows + 64, 2 * windows);
    ngrams.encode_into(raw, &mut encoder, &space.hasher(), space.n_buckets());
    encoder
}

/// Do two dicts hold the same key and value objects in the same order? One walk over both
/// with borrowed references (no lookup, no reference counting, no comparison that could
/// run Python code): what `dict.copy()` then no change in between leaves.
fn same_items(a: &Bound<'_, PyDict>, b: &Bound<'_, PyDict>) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (mut at_a, mut at_b): (ffi::Py_ssize_t, ffi::Py_ssize_t) = (0, 0);
    let (mut key_a, mut value_a, mut key_b, mut value_b) = (
        std::ptr::null_mut(),
        std::ptr::null_mut(),
        std::ptr::null_mut(),
        std::ptr::null_mut(),
    );
    // SAFETY: both dicts are alive (bound) and the GIL is held; PyDict_Next hands out
    // borrowed references that are only compared as addresses, and nothing runs in between
    // that could change either dict.
    unsafe {
        while ffi::PyDict_Next(a.as_ptr(), &mut at_a, &mut key_a, &mut value_a) != 0 {
            if ffi::PyDict_Next(b.as_ptr(), &mut at_b, &mut key_b, &mut value_b) == 0
                || key_a != key_b
                || value_a != value_b
            {
                return false;
            }
        }
    }
    true
}

/// Are two raw texts the same text (same type, equal)?
fn same_text(last: &Bound<'_, PyAny>, x: &Bound<'_, PyAny>) -> PyResult<bool> {
    if last.is(x) {
        return Ok(true);
    }
    if last.get_type().is(x.get_type()) {
        return last.eq(x);
    }
    Ok(false)
}

/// The bytes of every raw message of a batch, or None when one of them is not bytes.
fn all_bytes<'a>(xs: &'a [Bound<'_, PyAny>]) -> Option<Vec<&'a [u8]>> {
    xs.iter()
        .map(|x| x.cast::<PyBytes>().ok().map(|b| b.as_bytes()))
        .collect()
}
