//! `_core.Core`: one discrete naive Bayes model (vocabulary, count store, formulas) as
//! the Python models see it. One call per document: raw text or a mapping goes in,
//! log-probabilities or an updated store come out.

use super::errors::{error, guard, Kind as ErrorKind};
use super::keys::{bucket_text, first_foreign_key, key_arrays, key_of, token_of, unpack};
use super::mail::EmailTokenizer;
use super::tokenizer::WordTokenizer;
use super::weighting::EmailWeights;
use crate::bag::Bag;
use crate::doc::{Doc, UNKNOWN};
use crate::mail::features::EmailFeatures;
use crate::nb::{argmax, Kind, NaiveBayes, NbError, Prior, Smoothing};
use crate::parallel;
use crate::smoothing::{inverse_temperature, AutoSmoothing, EvidenceError};
use crate::snapshot::{self, RawArray};
use crate::store::StoreError;
use crate::weighting::{idf, MAX_IDF_OFFSET};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// How raw text becomes features.
enum Featurizer {
    /// No tokenizer: documents must be mappings.
    None,
    /// The core's word tokenizer (`Tokenizer` with the default pattern, no stemmer).
    Words { tokenizer: Py<WordTokenizer>, binary: bool },
    /// The core's email tokenizer (`EmailTokenizer` with core body settings): raw bytes in.
    Email { tokenizer: Py<EmailTokenizer> },
    /// The spam filter's field-mass weights over the core's email tokenizer: raw bytes in.
    Weights { weights: Py<EmailWeights> },
    /// Any other callable text -> mapping (called from here, once per text).
    Python(Py<PyAny>),
}

#[pyclass(module = "streamnb._core")]
pub struct Core {
    nb: NaiveBayes,
    labels: Vec<Py<PyAny>>,
    class_index: Py<PyDict>,
    fixed_prior: Option<Py<PyDict>>,
    featurizer: Featurizer,
    /// EmailNB's scoring: each document reweighted by the IDF of the counts, field by field
    /// with these masses and this offset (`set_idf`); learning uses the document as it is.
    idf: Option<(Py<EmailWeights>, f64)>,
    /// The last document encoded: predicting and then learning the same message encodes it
    /// once (raw text: compared by value; a dict: the same object, still holding the same
    /// key and value objects in the same order as a copy taken then).
    last: Option<Last>,
}

/// What `contributions` returns: (features, terms, rest, classes).
type Split<'py> = (
    Bound<'py, PyList>,
    Bound<'py, PyByteArray>,
    Vec<f64>,
    Bound<'py, PyList>,
);

struct Last {
    x: Py<PyAny>,
    /// A copy of the dict as it was (it holds the items, so no other object can take their addresses).
    copy: Option<Py<PyDict>>,
    doc: Doc,
}

static HELPERS: PyOnceLock<(Py<PyAny>, Py<PyAny>, Py<PyAny>)> = PyOnceLock::new();

/// (streamnb.errors.describe, numbers.Real, collections.abc.Mapping)
fn helpers(py: Python<'_>) -> PyResult<&(Py<PyAny>, Py<PyAny>, Py<PyAny>)> {
    HELPERS.get_or_try_init(py, || {
        Ok((
            py.import("streamnb.errors")?.getattr("describe")?.unbind(),
            py.import("numbers")?.getattr("Real")?.unbind(),
            py.import("collections.abc")?.getattr("Mapping")?.unbind(),
        ))
    })
}

fn describe(value: &Bound<'_, PyAny>) -> String {
    let py = value.py();
    helpers(py)
        .and_then(|h| h.0.bind(py).call1((value,)))
        .and_then(|s| s.extract::<String>())
        .unwrap_or_else(|_| "<value>".to_string())
}

fn repr(value: &Bound<'_, PyAny>) -> String {
    value
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "<value>".to_string())
}

/// A float as Python's `format(x, "g")`.
fn g(py: Python<'_>, x: f64) -> String {
    PyFloat::new(py, x)
        .call_method1("__format__", ("g",))
        .and_then(|s| s.extract::<String>())
        .unwrap_or_else(|_| x.to_string())
}

fn float_repr(py: Python<'_>, x: f64) -> String {
    repr(&PyFloat::new(py, x).into_any())
}

fn f64_bytes<'py>(py: Python<'py>, values: &[f64]) -> PyResult<Bound<'py, PyByteArray>> {
    PyByteArray::new_with(py, values.len() * 8, |buf| {
        for (chunk, v) in buf.chunks_exact_mut(8).zip(values) {
            chunk.copy_from_slice(&v.to_le_bytes());
        }
        Ok(())
    })
}

fn i64_bytes<'py>(py: Python<'py>, values: impl ExactSizeIterator<Item = i64>) -> PyResult<Bound<'py, PyByteArray>> {
    let values: Vec<i64> = values.collect();
    PyByteArray::new_with(py, values.len() * 8, |buf| {
        for (chunk, v) in buf.chunks_exact_mut(8).zip(&values) {
            chunk.copy_from_slice(&v.to_le_bytes());
        }
        Ok(())
    })
}

fn parse_kind(kind: &str, mu: Option<f64>, binarize: f64, norm: bool) -> PyResult<Kind> {
    Ok(match kind {
        "multinomial" => Kind::Multinomial { mu },
        "bernoulli" => Kind::Bernoulli { binarize },
        "complement" => Kind::Complement { norm },
        other => {
            return Err(error(
                ErrorKind::InvalidParameter,
                format!("unknown model kind {other:?}"),
            ))
        }
    })
}

fn parse_prior(prior: &str) -> PyResult<Prior> {
    Ok(match prior {
        "mle" => Prior::Mle,
        "laplace" => Prior::Laplace,
        "uniform" => Prior::Uniform,
        "fixed" => Prior::Fixed,
        other => {
            return Err(error(
                ErrorKind::InvalidParameter,
                format!("unknown class prior {other:?}"),
            ))
        }
    })
}

impl Core {
    /// The smoothing of a call: `alpha`, or None for the one the model chooses online.
    fn smoothing(&self, alpha: Option<f64>) -> PyResult<Smoothing> {
        self.nb.smoothing(alpha).ok_or_else(|| {
            error(
                ErrorKind::InvalidParameter,
                "alpha None means the smoothing chosen online, but this model chooses none (alpha=\"auto\" does)",
            )
        })
    }

    /// Forget what the candidates said of the last document (its scoring changed).
    fn forget_scores(&mut self) {
        if let Some(last) = self.last.as_mut() {
            last.doc.scores = None;
        }
    }

    fn label<'py>(&self, py: Python<'py>, c: usize) -> Bound<'py, PyAny> {
        self.labels[c].bind(py).clone()
    }

    fn class_of(&self, label: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
        match self.class_index.bind(label.py()).get_item(label)? {
            Some(c) => Ok(Some(c.extract()?)),
            None => Ok(None),
        }
    }

    fn prior_weight(&self, label: &Bound<'_, PyAny>) -> PyResult<f64> {
        match &self.fixed_prior {
            Some(fixed) => match fixed.bind(label.py()).get_item(label)? {
                Some(p) => p.extract(),
                None => Ok(0.0),
            },
            None => Ok(1.0),
        }
    }

    fn push_label(&mut self, label: &Bound<'_, PyAny>) -> PyResult<()> {
        let c = self.labels.len();
        self.class_index.bind(label.py()).set_item(label, c)?;
        self.labels.push(label.clone().unbind());
        Ok(())
    }

    /// The name of a feature id (hashed models: its bucket, '#417').
    fn token<'py>(&self, py: Python<'py>, id: u32) -> PyResult<Bound<'py, PyAny>> {
        match self.nb.vocabulary() {
            Some(v) => match v.token(id) {
                Some(key) => token_of(py, key),
                None => Ok(py.None().into_bound(py)),
            },
            None => Ok(PyString::new(py, &format!("#{id}")).into_any()),
        }
    }

    fn tokens<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for &id in ids {
            out.append(self.token(py, id)?)?;
        }
        Ok(out)
    }

    /// The name of a document's i-th feature.
    fn doc_token<'py>(&self, py: Python<'py>, doc: &Doc, i: usize) -> PyResult<Bound<'py, PyAny>> {
        if self.nb.n_buckets().is_some() {
            return self.token(py, doc.ids[i]);
        }
        match doc.key(i) {
            Some(key) => token_of(py, key),
            None => self.token(py, doc.ids[i]),
        }
    }

    // -- encoding ------------------------------------------------------------------------

    /// A document from a mapping feature -> value: keys and values checked as the Python
    /// models always did (numbers, finite, >= 0 unless Bernoulli).
    fn encode_mapping(&self, x: &Bound<'_, PyAny>) -> PyResult<Doc> {
        let py = x.py();
        if let Ok(dict) = x.cast::<PyDict>() {
            return self.encode_pairs(py, dict.len(), dict.iter());
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
        self.encode_pairs(py, pairs.len(), pairs.into_iter())
    }

    /// The document of (feature, value) pairs. As the models always checked: a value that
    /// is not a number is reported first, then the first non-finite value, then the first
    /// negative count.
    fn encode_pairs<'py>(
        &self,
        py: Python<'py>,
        len: usize,
        pairs: impl Iterator<Item = (Bound<'py, PyAny>, Bound<'py, PyAny>)>,
    ) -> PyResult<Doc> {
        let real = helpers(py)?.1.bind(py);
        let signed = matches!(self.nb.kind, Kind::Bernoulli { .. });
        let hashed = self.nb.n_buckets().is_some();
        let mut encoder = self.nb.encoder(len, len * 8);
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
    fn encode_words(&self, tokenizer: &WordTokenizer, binary: bool, text: &Bound<'_, PyString>) -> PyResult<Doc> {
        let input = TextInput::of(tokenizer, text)?;
        Ok(encode_str(&self.nb, tokenizer, binary, &input))
    }

    /// The documents of a batch: raw texts the core tokenizes itself are read on several
    /// threads, with the GIL released; anything else one by one.
    fn encode_batch(&self, xs: &[Bound<'_, PyAny>]) -> PyResult<Vec<Doc>> {
        let py = match xs.first() {
            Some(x) => x.py(),
            None => return Ok(Vec::new()),
        };
        match &self.featurizer {
            Featurizer::Words { tokenizer, binary } if xs.iter().all(|x| x.is_instance_of::<PyString>()) => {
                let tokenizer = tokenizer.get();
                let inputs: Vec<TextInput<'_>> = xs
                    .iter()
                    .map(|x| TextInput::of(tokenizer, x.cast::<PyString>()?))
                    .collect::<PyResult<_>>()?;
                let nb = &self.nb;
                Ok(py.detach(|| parallel::map(&inputs, |input| encode_str(nb, tokenizer, *binary, input))))
            }
            Featurizer::Email { tokenizer } if xs.iter().all(|x| x.is_instance_of::<PyBytes>()) => {
                let features = &tokenizer.get().features;
                let raws: Vec<&[u8]> = xs
                    .iter()
                    .map(|x| x.cast::<PyBytes>().map(|b| b.as_bytes()))
                    .collect::<Result<_, _>>()?;
                let nb = &self.nb;
                Ok(py.detach(|| parallel::map(&raws, |raw| encode_email(nb, features, raw))))
            }
            Featurizer::Weights { weights } if xs.iter().all(|x| x.is_instance_of::<PyBytes>()) => {
                let weights = weights.get();
                let raws: Vec<&[u8]> = xs
                    .iter()
                    .map(|x| x.cast::<PyBytes>().map(|b| b.as_bytes()))
                    .collect::<Result<_, _>>()?;
                let nb = &self.nb;
                Ok(py.detach(|| parallel::map(&raws, |raw| encode_weighted(nb, weights, raw))))
            }
            _ => xs.iter().map(|x| self.with_fresh_doc(x)).collect(),
        }
    }

    /// One document of a batch, not remembered as the last one.
    fn with_fresh_doc(&self, x: &Bound<'_, PyAny>) -> PyResult<Doc> {
        let py = x.py();
        if x.is_instance_of::<PyString>() || x.is_instance_of::<PyBytes>() {
            self.encode_text(x)
        } else if x.is_instance_of::<PyDict>() || x.is_instance(helpers(py)?.2.bind(py))? {
            self.encode_mapping(x)
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

    fn encode_text(&self, x: &Bound<'_, PyAny>) -> PyResult<Doc> {
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
                self.encode_words(tokenizer.get(), *binary, text)
            }
            Featurizer::Email { tokenizer } => {
                let features = &tokenizer.get().features;
                with_raw_bytes(x, |raw| encode_email(&self.nb, features, raw))
            }
            Featurizer::Weights { weights } => with_raw_bytes(x, |raw| encode_weighted(&self.nb, weights.get(), raw)),
            Featurizer::Python(tokenizer) => {
                let py = x.py();
                let features = tokenizer.bind(py).call1((x,))?;
                if !features.is_instance(helpers(py)?.2.bind(py))? {
                    return Err(error(
                        ErrorKind::InvalidType,
                        format!("the tokenizer must return a mapping feature -> count, got {}", describe(&features)),
                    ));
                }
                self.encode_mapping(&features)
            }
        }
    }

    /// Run `body` on the document `x`, encoded once: raw text is remembered with its
    /// document, so predicting and then learning the same text tokenizes it once.
    fn with_doc<R>(
        &mut self,
        x: &Bound<'_, PyAny>,
        body: impl FnOnce(&mut Self, &mut Doc) -> PyResult<R>,
    ) -> PyResult<R> {
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
            let mut doc = self.encode_mapping(x)?; // another Mapping: not remembered
            return body(self, &mut doc);
        }
        let cached = match self.last.take() {
            Some(last) if self.reusable(&last.doc) && self.same_document(&last, x)? => Some(last.doc),
            _ => None,
        };
        let mut doc = match cached {
            Some(doc) => doc,
            None if is_text => self.encode_text(x)?,
            None => self.encode_mapping(x)?,
        };
        let result = body(self, &mut doc);
        let copy = if is_dict {
            Some(x.cast::<PyDict>()?.copy()?.unbind())
        } else {
            None
        };
        self.last = Some(Last {
            x: x.clone().unbind(),
            copy,
            doc,
        });
        result
    }

    /// Can a remembered document be used again? Its tokens must all still be in the
    /// vocabulary, and the features that were new when it was encoded must still be new
    /// (looked up at the vocabulary's current epoch): once they have ids, it lists them
    /// after the known ones, and a prediction would sum its features in another order than
    /// a fresh encoding's (predictions must not depend on what is remembered, to the last bit).
    fn reusable(&self, doc: &Doc) -> bool {
        let keyed = &doc.ids[doc.first_key()..];
        let still_new = keyed.is_empty()
            || (doc.epoch == self.nb.vocabulary().map(|v| v.epoch()) && keyed.iter().all(|&id| id == UNKNOWN));
        self.nb.doc_is_current(doc) && still_new
    }

    /// Is x the document remembered: the same text, or the same dict holding the same
    /// objects? (A value replaced by an equal object counts as a change: encoded again.)
    fn same_document(&self, last: &Last, x: &Bound<'_, PyAny>) -> PyResult<bool> {
        let py = x.py();
        match (&last.copy, x.cast::<PyDict>()) {
            (Some(copy), Ok(dict)) => Ok(last.x.bind(py).is(x) && same_items(copy.bind(py), dict)),
            (Some(_), Err(_)) => Ok(false),
            (None, _) => same_text(last.x.bind(py), x),
        }
    }

    /// An error of the model as the Python exception that names what was wrong.
    fn nb_error(
        &self,
        py: Python<'_>,
        e: NbError,
        x: &Bound<'_, PyAny>,
        doc: Option<&Doc>,
        row: Option<usize>,
    ) -> PyErr {
        match e {
            NbError::EmptyDocument => match row {
                Some(row) => error(
                    ErrorKind::InvalidInput,
                    format!("empty document at row {row}: no feature above the threshold"),
                ),
                None => error(
                    ErrorKind::InvalidInput,
                    format!(
                        "empty document: no feature with a value above the threshold in {}",
                        describe(x)
                    ),
                ),
            },
            NbError::NeverLearned { features } => {
                let names = PyList::empty(py);
                if let Some(doc) = doc {
                    for i in features {
                        if let Ok(t) = self.doc_token(py, doc, i) {
                            let _ = names.append(t);
                        }
                    }
                }
                error(
                    ErrorKind::InvalidInput,
                    format!("cannot unlearn feature(s) {}: never learned", repr(&names.into_any())),
                )
            }
            NbError::StampNeeded => error(
                ErrorKind::InvalidInput,
                "this model has dropped features (pruning, or a merged model's), so only when a \
                 message was learned tells which counts still hold it: keep a ledger that holds the \
                 message, or give unlearn_one / unlearn_many its stamp (learned_at=, the n_learned \
                 right after it was learned)",
            ),
            NbError::VocabularyFull => error(
                ErrorKind::InvalidInput,
                "the vocabulary is full (2^32 - 1 ids or 4 GiB of token bytes)",
            ),
            NbError::MergeForgotten { learned_at } => error(
                ErrorKind::InvalidInput,
                format!(
                    "cannot unlearn the document learned at {learned_at} exactly: it was merged in from a model \
                     that had pruned, and which features it still holds was forgotten to bound memory \
                     (a model keeps max({}, 2 x its features) merged exceptions)",
                    crate::store::MERGED_EXCEPTIONS_BUDGET
                ),
            ),
            NbError::Evidence(e) => evidence_error(e),
            NbError::Store(e) => self.store_error(py, e),
        }
    }

    fn store_error(&self, py: Python<'_>, e: StoreError) -> PyErr {
        match e {
            StoreError::NegativeCounts { class, ids } => {
                let names = self.tokens(py, &ids).map(|l| repr(&l.into_any())).unwrap_or_default();
                error(
                    ErrorKind::InvalidInput,
                    format!(
                        "counts of feature(s) {names} in class {} would become negative: they were never learned \
                         with that much weight",
                        repr(&self.label(py, class))
                    ),
                )
            }
            StoreError::TooFewDocuments { class, has, remove } => error(
                ErrorKind::InvalidInput,
                format!(
                    "class {} has {} documents; cannot remove {}",
                    repr(&self.label(py, class)),
                    g(py, has),
                    g(py, remove)
                ),
            ),
            StoreError::CellsWithoutDocuments { class, left } => {
                let label = repr(&self.label(py, class));
                error(
                    ErrorKind::InvalidInput,
                    format!(
                        "class {label} would have no documents left but still {left} feature count(s): the documents \
                         removed are not the ones that were learned as {label}"
                    ),
                )
            }
            StoreError::FeatureInMoreDocuments {
                class,
                docs,
                feature_docs,
            } => {
                let label = repr(&self.label(py, class));
                error(
                    ErrorKind::InvalidInput,
                    format!(
                        "class {label} would have {} documents but a feature in {} of them: the documents removed \
                         are not the ones that were learned as {label}",
                        g(py, docs),
                        g(py, feature_docs)
                    ),
                )
            }
            StoreError::Overflow { class, tokens, docs } => {
                let label = match class {
                    Some(c) => format!("class {}", repr(&self.label(py, c))),
                    None => "a new class".to_string(),
                };
                error(
                    ErrorKind::InvalidInput,
                    format!(
                        "counts of {label} would overflow (weight x values too large: {} tokens, {} documents)",
                        g(py, tokens),
                        g(py, docs)
                    ),
                )
            }
            StoreError::ClockFull => error(
                ErrorKind::InvalidInput,
                "the model has learned 2^32 - 2 documents, the most its document clock counts",
            ),
        }
    }

    fn unknown_class(&self, label: &Bound<'_, PyAny>) -> PyErr {
        error(
            ErrorKind::UnknownClass,
            format!("cannot unlearn from class {}: it was never learned", repr(label)),
        )
    }

    fn proba_dict<'py>(
        &self,
        py: Python<'py>,
        active: &[usize],
        values: &[f64],
        exp: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for (&c, &v) in active.iter().zip(values) {
            out.set_item(self.label(py, c), if exp { v.exp() } else { v })?;
        }
        Ok(out)
    }

    /// EmailNB's scoring weights of a document (see `crate::weighting`): per feature,
    /// s_f = m_F * w_f * idf_f / sum_{g in F} w_g * idf_g with idf_f = ln((1 + N) / (1 + D_f)) + offset,
    /// N = sum_c N_c the messages learned and D_f = sum_c D_cf those containing f (true
    /// counts, 0 for a feature not in the vocabulary).
    fn idf_values(&self, weights: &EmailWeights, offset: f64, doc: &mut Doc) -> Vec<f64> {
        self.nb.resolve(doc);
        let k = self.nb.n_classes();
        let n: f64 = (0..k).map(|c| self.nb.store.true_class_docs(c)).sum();
        let known: Vec<usize> = (0..doc.len()).filter(|&i| doc.ids[i] != UNKNOWN).collect();
        let ids: Vec<u32> = known.iter().map(|&i| doc.ids[i]).collect();
        let gathered = self.nb.gather_docs(&ids);
        let mut doc_freq = vec![0.0; doc.len()];
        for (row, &i) in gathered.chunks_exact(k.max(1)).zip(&known) {
            doc_freq[i] = row.iter().sum();
        }
        let features = weights.features();
        let vocabulary = self.nb.vocabulary();
        let mut fields = Vec::with_capacity(doc.len());
        let mut values = Vec::with_capacity(doc.len());
        for (i, &d) in doc_freq.iter().enumerate() {
            let key = doc
                .key(i)
                .or_else(|| vocabulary.and_then(|v| v.token(doc.ids[i])))
                .unwrap_or_default();
            fields.push(features.field(key));
            values.push(doc.values[i] * idf(n, d, offset));
        }
        weights.masses.scale(&fields, &mut values);
        values
    }

    /// Run `body` on the document as predictions score it: with EmailNB's IDF (`set_idf`)
    /// its values are the scoring weights for the call, then the learned ones again.
    fn scoring<R>(&mut self, doc: &mut Doc, body: impl FnOnce(&mut Self, &mut Doc) -> R) -> R {
        let values = match &self.idf {
            Some((weights, offset)) => self.idf_values(weights.get(), *offset, doc),
            None => return body(self, doc),
        };
        let learned = std::mem::replace(&mut doc.values, values);
        let result = body(self, doc);
        doc.values = learned;
        result
    }

    /// What one prediction returns: 0 the label, 1 probabilities, 2 log-probabilities.
    fn predict<'py>(&mut self, x: &Bound<'py, PyAny>, alpha: Option<f64>, what: u8) -> PyResult<Bound<'py, PyAny>> {
        let py = x.py();
        self.with_doc(x, |core, doc| core.predict_doc(py, doc, alpha, what, true))
    }

    /// One prediction. With `remember` and the smoothing chosen online, every candidate
    /// scores the document and it keeps their scores (it may be learned next: see
    /// `NaiveBayes::remembered_scores`); a batch has nothing to remember them for.
    fn predict_doc<'py>(
        &mut self,
        py: Python<'py>,
        doc: &mut Doc,
        alpha: Option<f64>,
        what: u8,
        remember: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let smoothing = self.smoothing(alpha)?;
        if self.nb.active().is_empty() {
            return Ok(if what == 0 {
                py.None().into_bound(py)
            } else {
                PyDict::new(py).into_any()
            });
        }
        let remembered = remember && alpha.is_none();
        let (active, values) = self.scoring(doc, |core, doc| {
            let full = match remembered.then(|| core.nb.remembered_scores(doc)).flatten() {
                Some(full) => full,
                None => core.nb.joint_log_likelihood(doc, smoothing),
            };
            core.nb.log_posterior_of(&full, what != 0)
        });
        if what == 0 {
            return Ok(self.label(py, active[argmax(&values)]));
        }
        Ok(self.proba_dict(py, &active, &values, what == 1)?.into_any())
    }
}

fn evidence_error(e: EvidenceError) -> PyErr {
    match e {
        EvidenceError::DifferentCandidates => error(
            ErrorKind::IncompatibleModels,
            "cannot merge models that choose their smoothing among different candidates (or only one of them chooses)",
        ),
        EvidenceError::Malformed(message) => error(ErrorKind::ModelFormat, message),
    }
}

/// A text ready for the core's word tokenizer: borrowed as it is, or (capital sigma, lone
/// surrogates) cut and lowercased by Python first.
enum TextInput<'a> {
    Borrowed(&'a str),
    Prepared(String),
}

impl<'a> TextInput<'a> {
    fn of(tokenizer: &WordTokenizer, text: &'a Bound<'_, PyString>) -> PyResult<Self> {
        let options = &tokenizer.options;
        if let Ok(s) = text.to_str() {
            if !(options.lowercase && crate::tokenize::needs_python_lower(s)) {
                return Ok(TextInput::Borrowed(s));
            }
        }
        Ok(TextInput::Prepared(tokenizer.python_prepared(text)?))
    }
}

/// A text through the core's word tokenizer into a document of the model (no Python).
fn encode_str(nb: &NaiveBayes, tokenizer: &WordTokenizer, binary: bool, input: &TextInput<'_>) -> Doc {
    let options = &tokenizer.options;
    let (text, lowercase, max_chars) = match input {
        TextInput::Borrowed(s) => (*s, options.lowercase, options.max_chars),
        TextInput::Prepared(s) => (s.as_str(), false, None),
    };
    let mut encoder = nb.encoder(text.len() / 16 + 8, text.len() / 2);
    let mut scratch = Vec::new();
    options.for_each_feature(text, lowercase, max_chars, &mut scratch, |f| encoder.add(f, 1.0));
    if binary {
        encoder.binarize();
    }
    encoder.finish()
}

/// A raw message through the core's email tokenizer into a document of the model.
fn encode_email(nb: &NaiveBayes, features: &EmailFeatures, raw: &[u8]) -> Doc {
    let mut bag = Bag::default();
    features.count_into(raw, &mut bag, &nb.hasher());
    let mut encoder = nb.encoder(bag.len(), 0);
    for i in 0..bag.len() {
        encoder.add_hashed(bag.feature(i), bag.hash(i), bag.count(i));
    }
    encoder.finish()
}

/// The bytes of raw text: bytes as they are, str re-encoded as the Python tokenizer does
/// (streamnb.mail._to_bytes).
fn with_raw_bytes<R>(x: &Bound<'_, PyAny>, body: impl FnOnce(&[u8]) -> R) -> PyResult<R> {
    if let Ok(raw) = x.cast::<PyBytes>() {
        return Ok(body(raw.as_bytes()));
    }
    let raw = x
        .call_method1("encode", ("utf-8", "surrogateescape"))
        .or_else(|_| x.call_method1("encode", ("utf-8", "replace")))?;
    Ok(body(raw.cast::<PyBytes>()?.as_bytes()))
}

/// A raw message through the spam filter's weighting into a document of the model.
fn encode_weighted(nb: &NaiveBayes, weights: &EmailWeights, raw: &[u8]) -> Doc {
    let (bag, values) = weights.weigh_raw(raw, &nb.hasher());
    let mut encoder = nb.encoder(bag.len(), 0);
    for (i, &v) in values.iter().enumerate() {
        if v > 0.0 {
            encoder.add_hashed(bag.feature(i), bag.hash(i), v);
        }
    }
    encoder.finish()
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

#[pymethods]
impl Core {
    #[new]
    #[pyo3(signature = (*, kind, alpha_free_params, class_prior, fixed_prior, unseen, empty_documents, n_buckets,
                        dense_max_classes, tokenizer, in_core, binary))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        kind: &str,
        alpha_free_params: (Option<f64>, f64, bool),
        class_prior: &str,
        fixed_prior: Option<Bound<'_, PyDict>>,
        unseen: &str,
        empty_documents: &str,
        n_buckets: Option<u32>,
        dense_max_classes: usize,
        tokenizer: Option<Bound<'_, PyAny>>,
        in_core: Option<Bound<'_, PyAny>>,
        binary: bool,
    ) -> PyResult<Self> {
        guard(|| {
            let (mu, binarize, norm) = alpha_free_params;
            let mut core = Core {
                nb: NaiveBayes::new(
                    parse_kind(kind, mu, binarize, norm)?,
                    parse_prior(class_prior)?,
                    unseen == "score",
                    empty_documents == "learn",
                    n_buckets,
                    dense_max_classes,
                ),
                labels: Vec::new(),
                class_index: PyDict::new(py).unbind(),
                fixed_prior: fixed_prior.map(Bound::unbind),
                featurizer: Featurizer::None,
                idf: None,
                last: None,
            };
            core.set_featurizer(tokenizer, in_core, binary);
            Ok(core)
        })
    }

    /// Change how raw text becomes features (`tokenizer` is then the model's new tokenizer).
    /// `in_core`: the tokenizer's core object (a `WordTokenizer`, or an `EmailTokenizer`)
    /// when the core can run it itself, with `binary` for word tokenizers.
    #[pyo3(signature = (tokenizer, in_core, binary))]
    fn set_featurizer(&mut self, tokenizer: Option<Bound<'_, PyAny>>, in_core: Option<Bound<'_, PyAny>>, binary: bool) {
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
                        Err(_) => Featurizer::None,
                    },
                },
            },
            (None, Some(callable)) => Featurizer::Python(callable.unbind()),
            (None, None) => Featurizer::None,
        };
        self.last = None;
    }

    /// Score with EmailNB's IDF reweighting over these field masses, idf_f plus `offset`
    /// (None: as learned). The field of a feature comes from its name, so hashed models cannot.
    fn set_idf(&mut self, weights: Option<Bound<'_, EmailWeights>>, offset: f64) -> PyResult<()> {
        guard(|| {
            if weights.is_some() && self.nb.n_buckets().is_some() {
                return Err(error(
                    ErrorKind::InvalidParameter,
                    "the IDF reweighting needs feature names: not with n_buckets",
                ));
            }
            if !(0.0..=MAX_IDF_OFFSET).contains(&offset) {
                return Err(error(
                    ErrorKind::InvalidParameter,
                    format!("idf_offset must be a finite number in [0, {MAX_IDF_OFFSET:e}], got {offset}"),
                ));
            }
            self.idf = weights.map(|w| (w.unbind(), offset));
            self.forget_scores();
            Ok(())
        })
    }

    /// The weights a prediction scores x with: {feature: value > 0} (with `set_idf`, the
    /// IDF-reweighted ones; else the document's own).
    fn score_weights<'py>(&mut self, x: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let py = x.py();
            self.with_doc(x, |core, doc| {
                core.scoring(doc, |core, doc| {
                    let out = PyDict::new(py);
                    for i in 0..doc.len() {
                        if doc.values[i] > 0.0 {
                            out.set_item(core.doc_token(py, doc, i)?, doc.values[i])?;
                        }
                    }
                    Ok(out)
                })
            })
        })
    }

    /// Score words never seen in training as zero-count words (river's way), or ignore them.
    #[setter]
    fn set_unseen_score(&mut self, score: bool) {
        self.nb.unseen_score = score;
        self.forget_scores();
    }

    // -- smoothing chosen online ---------------------------------------------------------------

    /// Choose the smoothing online among `candidates` ((alpha, mu) pairs in increasing order
    /// of smoothing), the evidence aged by `decay` per document scored (see src/smoothing.rs).
    /// Only on a model that has learned nothing.
    fn set_auto_smoothing(&mut self, candidates: Vec<(f64, Option<f64>)>, decay: f64) -> PyResult<()> {
        guard(|| {
            if self.nb.n_classes() != 0 {
                return Err(error(
                    ErrorKind::InvalidParameter,
                    "the smoothing candidates are set before the model learns",
                ));
            }
            let valid = |v: f64| v.is_finite() && v > 0.0;
            if candidates.is_empty()
                || !candidates.iter().all(|&(a, mu)| valid(a) && mu.is_none_or(valid))
                || !(decay > 0.0 && decay <= 1.0)
            {
                return Err(error(
                    ErrorKind::InvalidParameter,
                    format!("smoothing candidates must be finite numbers > 0 and the decay in (0, 1], got {candidates:?} and {decay}"),
                ));
            }
            let candidates = candidates
                .into_iter()
                .map(|(alpha, mu)| Smoothing { alpha, mu })
                .collect();
            self.nb.choose_online(AutoSmoothing::new(candidates, decay));
            Ok(())
        })
    }

    /// The choice and its reasons: (candidates as (alpha, mu), evidence per candidate, the
    /// temperature that gives it, documents scored, index of the chosen candidate); None on a
    /// model choosing no smoothing.
    #[allow(clippy::type_complexity)]
    fn smoothing_report(&self) -> Option<(Vec<(f64, Option<f64>)>, Vec<f64>, Vec<f64>, u64, usize)> {
        let auto = self.nb.auto.as_ref()?;
        let evidence = auto.evidence();
        Some((
            auto.candidates.iter().map(|s| (s.alpha, s.mu)).collect(),
            evidence.iter().map(|&(e, _)| e).collect(),
            evidence.iter().map(|&(_, t)| 1.0 / inverse_temperature(t)).collect(),
            auto.scored,
            auto.chosen_index(),
        ))
    }

    /// The evidence as a model file keeps it: (candidates x temperatures values, documents
    /// scored); None on a model choosing no smoothing.
    fn evidence_state(&self) -> Option<(Vec<f64>, u64)> {
        self.nb.auto.as_ref().map(|auto| {
            let (values, scored) = auto.state();
            (values.to_vec(), scored)
        })
    }

    /// Restore `evidence_state`'s output (checked; nothing changes on error).
    fn restore_evidence(&mut self, values: Vec<f64>, scored: u64) -> PyResult<()> {
        guard(|| {
            let auto = self
                .nb
                .auto
                .as_mut()
                .ok_or_else(|| error(ErrorKind::ModelFormat, "evidence for a model that chooses no smoothing"))?;
            auto.restore(&values, scored).map_err(evidence_error)
        })
    }

    // -- prediction ------------------------------------------------------------------------

    /// The most probable class (first learned wins ties); None when nothing is learned.
    /// `alpha` None (here and below): the smoothing the model chooses online.
    fn predict_one<'py>(&mut self, x: &Bound<'py, PyAny>, alpha: Option<f64>) -> PyResult<Bound<'py, PyAny>> {
        guard(|| self.predict(x, alpha, 0))
    }

    /// {label: P(c | x)} over the active classes (from log space); {} when untrained.
    fn predict_proba_one<'py>(&mut self, x: &Bound<'py, PyAny>, alpha: Option<f64>) -> PyResult<Bound<'py, PyAny>> {
        guard(|| self.predict(x, alpha, 1))
    }

    /// {label: log P(c | x)} over the active classes; {} when untrained.
    fn predict_log_proba_one<'py>(&mut self, x: &Bound<'py, PyAny>, alpha: Option<f64>) -> PyResult<Bound<'py, PyAny>> {
        guard(|| self.predict(x, alpha, 2))
    }

    /// One prediction per document (`what`: 0 labels, 1 probabilities, 2 log-probabilities).
    fn predict_many<'py>(
        &mut self,
        xs: &Bound<'py, PyAny>,
        alpha: Option<f64>,
        what: u8,
    ) -> PyResult<Bound<'py, PyList>> {
        guard(|| {
            let py = xs.py();
            let items: Vec<Bound<'py, PyAny>> = xs.try_iter()?.collect::<PyResult<_>>()?;
            let docs = self.encode_batch(&items)?;
            let out = PyList::empty(py);
            for mut doc in docs {
                out.append(self.predict_doc(py, &mut doc, alpha, what, false)?)?;
            }
            Ok(out)
        })
    }

    /// {label: log P(c) + log P(x | c)} over the active classes (the unnormalised scores).
    fn joint_log_likelihood<'py>(&mut self, x: &Bound<'py, PyAny>, alpha: Option<f64>) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let py = x.py();
            let smoothing = self.smoothing(alpha)?;
            self.with_doc(x, |core, doc| {
                let jll = core.scoring(doc, |core, doc| core.nb.joint_log_likelihood(doc, smoothing));
                let active = core.nb.active();
                let values: Vec<f64> = active.iter().map(|&c| jll[c]).collect();
                core.proba_dict(py, &active, &values, false)
            })
        })
    }

    /// log P(x | c) without the class prior, for every class of the store (NaN for the
    /// inactive ones): what a model using this one as a part sums.
    fn log_likelihood(&mut self, x: &Bound<'_, PyAny>, alpha: Option<f64>) -> PyResult<Vec<f64>> {
        guard(|| {
            let smoothing = self.smoothing(alpha)?;
            self.with_doc(x, |core, doc| {
                let known = core.nb.known(doc);
                let split = core.nb.contributions(&known, smoothing);
                let k = core.nb.n_classes();
                let mut prior = Vec::new();
                core.nb.log_prior(&mut prior);
                let prior_added = !matches!(core.nb.kind, Kind::Complement { .. }) || core.nb.active().len() == 1;
                let mut out = split.rest.clone();
                for row in split.terms.chunks_exact(k.max(1)) {
                    for c in 0..k {
                        out[c] += row[c];
                    }
                }
                if prior_added {
                    for c in 0..k {
                        out[c] -= prior[c];
                    }
                }
                Ok(out)
            })
        })
    }

    /// log P(x | label) - log U(x), U uniform over the vocabulary: see
    /// `Nb::log_odds_against_uniform` (None for a model that is not multinomial).
    fn log_odds_against_uniform(
        &mut self,
        x: &Bound<'_, PyAny>,
        label: &Bound<'_, PyAny>,
        alpha: Option<f64>,
    ) -> PyResult<Option<f64>> {
        guard(|| {
            let smoothing = self.smoothing(alpha)?;
            let c = match self.class_of(label)? {
                Some(c) if self.nb.active().contains(&c) => c,
                _ => {
                    return Err(error(
                        ErrorKind::UnknownClass,
                        format!(
                            "class {} has learned nothing: there is no likelihood to compare",
                            repr(label)
                        ),
                    ))
                }
            };
            self.with_doc(x, |core, doc| {
                Ok(core.scoring(doc, |core, doc| {
                    let mut known = core.nb.known(doc);
                    if core.idf.is_some() {
                        known.retain_positive(); // what the reweighting leaves out is not scored
                    }
                    core.nb.log_odds_against_uniform(&known, c, smoothing)
                }))
            })
        })
    }

    /// The score split by known feature over the active classes: (features, terms as
    /// float64 bytes (n x active), rest per active class, the active classes' labels).
    fn contributions<'py>(&mut self, x: &Bound<'py, PyAny>, alpha: Option<f64>) -> PyResult<Split<'py>> {
        guard(|| {
            let py = x.py();
            let smoothing = self.smoothing(alpha)?;
            self.with_doc(x, |core, doc| {
                let split = core.scoring(doc, |core, doc| {
                    let mut known = core.nb.known(doc);
                    if core.idf.is_some() {
                        known.retain_positive(); // what the reweighting leaves out is not in the split
                    }
                    core.nb.contributions(&known, smoothing)
                });
                let active = core.nb.active();
                let k = core.nb.n_classes();
                let mut terms = Vec::with_capacity(split.ids.len() * active.len());
                for row in split.terms.chunks_exact(k.max(1)) {
                    terms.extend(active.iter().map(|&c| row[c]));
                }
                let names = PyList::empty(py);
                for &i in &split.positions {
                    names.append(core.doc_token(py, doc, i)?)?;
                }
                let labels = PyList::new(py, active.iter().map(|&c| core.label(py, c)))?;
                Ok((
                    names,
                    f64_bytes(py, &terms)?,
                    active.iter().map(|&c| split.rest[c]).collect(),
                    labels,
                ))
            })
        })
    }

    /// The known features of x with a value > 0 and their document counts D_cf for every
    /// class: (features, float64 bytes n x K). What chi-square combining reads.
    fn document_counts<'py>(
        &mut self,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyByteArray>)> {
        guard(|| {
            let py = x.py();
            self.with_doc(x, |core, doc| {
                let known = core.nb.known(doc);
                let keep: Vec<usize> = (0..known.ids.len()).filter(|&i| known.values[i] > 0.0).collect();
                let ids: Vec<u32> = keep.iter().map(|&i| known.ids[i]).collect();
                let names = PyList::empty(py);
                for &i in &keep {
                    names.append(core.doc_token(py, doc, known.positions[i])?)?;
                }
                Ok((names, f64_bytes(py, &core.nb.gather_docs(&ids))?))
            })
        })
    }

    /// The features a learned document contributes: (features, learned values).
    /// Empty documents raise as learning them would (unless `allow_empty`).
    #[pyo3(signature = (x, allow_empty=false))]
    fn present_features<'py>(
        &mut self,
        x: &Bound<'py, PyAny>,
        allow_empty: bool,
    ) -> PyResult<(Bound<'py, PyList>, Vec<f64>)> {
        guard(|| {
            let py = x.py();
            self.with_doc(x, |core, doc| {
                let threshold = match core.nb.kind {
                    Kind::Bernoulli { binarize } => binarize,
                    _ => 0.0,
                };
                let binary = matches!(core.nb.kind, Kind::Bernoulli { .. });
                let names = PyList::empty(py);
                let mut values = Vec::new();
                for (i, &v) in doc.values.iter().enumerate() {
                    if v > threshold {
                        names.append(core.doc_token(py, doc, i)?)?;
                        values.push(if binary { 1.0 } else { v });
                    }
                }
                if values.is_empty() && !allow_empty && !core.nb.empty_learn {
                    return Err(core.nb_error(py, NbError::EmptyDocument, x, None, None));
                }
                Ok((names, values))
            })
        })
    }

    // -- learning --------------------------------------------------------------------------

    /// Learn x as `label` with `weight` (already aged), after ageing every count by `factor`.
    /// All or nothing. `check_only`: check everything and change nothing.
    #[pyo3(signature = (x, label, weight, factor, allow_empty=false, check_only=false))]
    fn learn_one(
        &mut self,
        x: &Bound<'_, PyAny>,
        label: &Bound<'_, PyAny>,
        weight: f64,
        factor: f64,
        allow_empty: bool,
        check_only: bool,
    ) -> PyResult<()> {
        guard(|| {
            let py = x.py();
            let c = self.class_of(label)?;
            let prior_weight = if c.is_none() { self.prior_weight(label)? } else { 1.0 };
            self.with_doc(x, |core, doc| {
                let empty_learn = core.nb.empty_learn;
                core.nb.empty_learn = empty_learn || allow_empty;
                let result = if check_only {
                    core.nb.check_learn(doc, c, weight, factor).map(|()| None)
                } else {
                    // the evidence scores the document as a prediction does (EmailNB: its
                    // IDF weights), unless a prediction left its candidates' scores
                    if core.nb.auto.is_some() && c.is_some() {
                        core.scoring(doc, |core, doc| core.nb.score_candidates(doc));
                    }
                    core.nb.learn(doc, c, prior_weight, weight, factor).map(Some)
                };
                core.nb.empty_learn = empty_learn;
                match result {
                    // a new class (usize::MAX: nothing was left to count, no class added)
                    Ok(Some(new_c)) if c.is_none() && new_c != usize::MAX => core.push_label(label),
                    Ok(_) => Ok(()),
                    Err(e) => Err(core.nb_error(py, e, x, Some(doc), None)),
                }
            })
        })
    }

    /// Unlearn x from `label` with `weight` (already aged). All or nothing.
    #[pyo3(signature = (x, label, weight, learned_at=None, allow_empty=false, check_only=false))]
    fn unlearn_one(
        &mut self,
        x: &Bound<'_, PyAny>,
        label: &Bound<'_, PyAny>,
        weight: f64,
        learned_at: Option<u64>,
        allow_empty: bool,
        check_only: bool,
    ) -> PyResult<()> {
        guard(|| {
            let py = x.py();
            let Some(c) = self.class_of(label)? else {
                // the document is still read, so a bad one is reported as such
                self.with_doc(x, |_, _| Ok(()))?;
                return Err(self.unknown_class(label));
            };
            self.with_doc(x, |core, doc| {
                let empty_learn = core.nb.empty_learn;
                core.nb.empty_learn = empty_learn || allow_empty;
                let result = if check_only {
                    core.nb.check_unlearn(doc, c, weight, learned_at)
                } else {
                    core.nb.unlearn(doc, c, weight, learned_at)
                };
                core.nb.empty_learn = empty_learn;
                result.map_err(|e| core.nb_error(py, e, x, Some(doc), None))
            })
        })
    }

    /// Learn many documents (see NaiveBayes::learn_many); `weights` already aged.
    /// `check_only`: check everything and change nothing.
    #[pyo3(signature = (xs, labels, weights, factor, check_only=false))]
    fn learn_many(
        &mut self,
        xs: &Bound<'_, PyList>,
        labels: &Bound<'_, PyList>,
        weights: Vec<f64>,
        factor: f64,
        check_only: bool,
    ) -> PyResult<()> {
        guard(|| {
            let py = xs.py();
            let items: Vec<Bound<'_, PyAny>> = xs.iter().collect();
            let mut docs = self.encode_batch(&items)?;
            let k = self.nb.n_classes();
            let mut new_labels: Vec<Bound<'_, PyAny>> = Vec::new();
            let mut classes = Vec::with_capacity(labels.len());
            for label in labels.iter() {
                let c = match self.class_of(&label)? {
                    Some(c) => c,
                    None => match new_labels.iter().position(|l| l.eq(&label).unwrap_or(false)) {
                        Some(j) => k + j,
                        None => {
                            new_labels.push(label.clone());
                            k + new_labels.len() - 1
                        }
                    },
                };
                classes.push(c);
            }
            let prior_weights: Vec<f64> = new_labels
                .iter()
                .map(|l| self.prior_weight(l))
                .collect::<PyResult<_>>()?;
            let result = if check_only {
                let n_new = prior_weights.len();
                self.nb
                    .check_learn_many(&mut docs, &classes, n_new, &weights, factor)
                    .map(|_| ())
            } else {
                self.nb
                    .learn_many(&mut docs, &classes, &prior_weights, &weights, factor)
            };
            match result {
                Ok(()) if check_only => Ok(()),
                Ok(()) => {
                    for label in &new_labels {
                        self.push_label(label)?;
                    }
                    Ok(())
                }
                Err((row, e)) => {
                    let x = if row < xs.len() {
                        xs.get_item(row)?
                    } else {
                        py.None().into_bound(py)
                    };
                    Err(self.nb_error(py, e, &x, docs.get(row), (row != usize::MAX).then_some(row)))
                }
            }
        })
    }

    /// Unlearn many documents, all or nothing; `weights` already aged.
    fn unlearn_many(
        &mut self,
        xs: &Bound<'_, PyList>,
        labels: &Bound<'_, PyList>,
        weights: Vec<f64>,
        learned_at: Vec<Option<u64>>,
    ) -> PyResult<()> {
        guard(|| {
            let py = xs.py();
            let mut docs = Vec::with_capacity(xs.len());
            let mut classes = Vec::with_capacity(xs.len());
            for (x, label) in xs.iter().zip(labels.iter()) {
                docs.push(self.with_doc(&x, |_, doc| Ok(doc.clone()))?);
                match self.class_of(&label)? {
                    Some(c) => classes.push(c),
                    None => return Err(self.unknown_class(&label)),
                }
            }
            self.nb
                .unlearn_many(&mut docs, &classes, &weights, &learned_at)
                .map_err(|(row, e)| {
                    let x = if row < xs.len() {
                        xs.get_item(row).unwrap_or_else(|_| py.None().into_bound(py))
                    } else {
                        py.None().into_bound(py)
                    };
                    self.nb_error(py, e, &x, docs.get(row), None)
                })
        })
    }

    /// Add other's counts to target (see NaiveBayes::merge); other may be target.
    #[staticmethod]
    fn merge(target: &Bound<'_, Core>, other: &Bound<'_, Core>, own_factor: f64, their_factor: f64) -> PyResult<()> {
        guard(|| {
            let py = target.py();
            let (snapshot, other_labels) = {
                let other = other.borrow();
                (
                    other.nb.snapshot(),
                    other.labels.iter().map(|l| l.clone_ref(py)).collect::<Vec<_>>(),
                )
            };
            let mut target = target.borrow_mut();
            let mut classes = Vec::with_capacity(other_labels.len());
            let mut new_labels = Vec::new();
            let mut prior_weights = Vec::new();
            for label in &other_labels {
                let label = label.bind(py);
                let c = target.class_of(label)?;
                if c.is_none() {
                    new_labels.push(label.clone());
                    prior_weights.push(target.prior_weight(label)?);
                }
                classes.push(c);
            }
            match target
                .nb
                .merge(&snapshot, &classes, &prior_weights, own_factor, their_factor)
            {
                Ok(()) => {
                    if their_factor > 0.0 {
                        for label in &new_labels {
                            target.push_label(label)?;
                        }
                    }
                    Ok(())
                }
                Err(e) => Err(target.nb_error(py, e, &py.None().into_bound(py), None, None)),
            }
        })
    }

    // -- the store -------------------------------------------------------------------------

    #[getter]
    fn labels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.labels.iter().map(|l| l.bind(py)))
    }

    /// The index of a class, None when it was never seen.
    fn class_id(&self, label: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
        self.class_of(label)
    }

    /// Add a class with zero counts (if new); returns its index.
    fn add_class(&mut self, label: &Bound<'_, PyAny>) -> PyResult<usize> {
        guard(|| {
            if let Some(c) = self.class_of(label)? {
                return Ok(c);
            }
            let weight = self.prior_weight(label)?;
            let c = self.nb.add_class(weight);
            self.push_label(label)?;
            Ok(c)
        })
    }

    /// N_c per class (true counts).
    fn class_docs(&self) -> Vec<f64> {
        (0..self.nb.n_classes())
            .map(|c| self.nb.store.true_class_docs(c))
            .collect()
    }

    /// T_c per class (true counts).
    fn class_tokens(&self) -> Vec<f64> {
        (0..self.nb.n_classes())
            .map(|c| self.nb.store.true_class_tokens(c))
            .collect()
    }

    /// (N_c, T_c) per class in stored units (true = stored * scale).
    fn stored_class_totals(&self) -> (Vec<f64>, Vec<f64>) {
        (
            self.nb.store.class_docs().to_vec(),
            self.nb.store.class_tokens().to_vec(),
        )
    }

    #[getter]
    fn get_scale(&self) -> f64 {
        self.nb.store.scale
    }

    /// Set the global scale directly (tests, and loading).
    #[setter]
    fn set_scale(&mut self, scale: f64) -> PyResult<()> {
        if !(scale > 0.0 && scale <= 1.0) {
            return Err(error(
                ErrorKind::InvalidParameter,
                format!("scale must be in (0, 1], got {scale}"),
            ));
        }
        self.nb.store.scale = scale;
        self.nb.store.version += 1;
        Ok(())
    }

    #[getter]
    fn get_n_learned(&self) -> u64 {
        self.nb.store.n_learned
    }

    #[setter]
    fn set_n_learned(&mut self, n: u64) {
        self.nb.store.n_learned = n.min(crate::store::MAX_DOCUMENTS);
    }

    #[getter]
    fn get_pruned_at(&self) -> u64 {
        self.nb.store.pruned_at
    }

    #[setter]
    fn set_pruned_at(&mut self, n: u64) {
        self.nb.store.pruned_at = n;
    }

    #[getter]
    fn n_features(&self) -> usize {
        self.nb.store.n_features
    }

    #[getter]
    fn n_classes(&self) -> usize {
        self.nb.n_classes()
    }

    #[getter]
    fn epoch(&self) -> u64 {
        self.nb.epoch()
    }

    #[getter]
    fn capacity(&self) -> usize {
        self.nb.capacity()
    }

    #[getter]
    fn dense(&self) -> bool {
        self.nb.store.is_dense()
    }

    /// Ids of the features in V, ascending.
    fn feature_ids(&self) -> Vec<u32> {
        self.nb.store.feature_ids()
    }

    /// True (tokens, docs) of features `ids` in every class: two float64 byte arrays (n x K).
    fn gather<'py>(
        &self,
        py: Python<'py>,
        ids: Vec<u32>,
    ) -> PyResult<(Bound<'py, PyByteArray>, Bound<'py, PyByteArray>)> {
        guard(|| {
            let (tokens, docs) = self.nb.gather(&ids);
            Ok((f64_bytes(py, &tokens)?, f64_bytes(py, &docs)?))
        })
    }

    /// Every nonzero cell, by feature then class, stored units: (feature i64, class i64,
    /// tokens f64, docs f64) as bytes.
    #[allow(clippy::type_complexity)]
    fn nonzero<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(
        Bound<'py, PyByteArray>,
        Bound<'py, PyByteArray>,
        Bound<'py, PyByteArray>,
        Bound<'py, PyByteArray>,
    )> {
        guard(|| {
            let (mut f, mut c, mut t, mut d) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for id in 0..self.nb.store.rows() as u32 {
                self.nb.store.for_each_cell(id, |class, tokens, docs| {
                    f.push(id as i64);
                    c.push(class as i64);
                    t.push(tokens);
                    d.push(docs);
                });
            }
            Ok((
                i64_bytes(py, f.into_iter())?,
                i64_bytes(py, c.into_iter())?,
                f64_bytes(py, &t)?,
                f64_bytes(py, &d)?,
            ))
        })
    }

    /// Which ids are features in V.
    fn known(&self, ids: Vec<i64>) -> Vec<bool> {
        ids.iter()
            .map(|&id| id >= 0 && id < u32::MAX as i64 && self.nb.store.known(id as u32))
            .collect()
    }

    /// (born, last_seen) stamps of features (0 for ids not in V).
    fn stamps(&self, ids: Vec<u32>) -> (Vec<u64>, Vec<u64>) {
        let born = ids.iter().map(|&id| self.nb.store.born(id).unwrap_or(0)).collect();
        let seen = ids.iter().map(|&id| self.nb.store.last_seen(id).unwrap_or(0)).collect();
        (born, seen)
    }

    /// The documents merged in from models that had pruned, as the file's arrays
    /// (`snapshot::FORGOTTEN_ARRAYS`, `snapshot::MERGED_ARRAYS`): [(name, ints)], empty when
    /// there are none.
    fn merged_arrays(&self) -> Vec<(&'static str, Vec<u64>)> {
        let mut out = Vec::new();
        let forgotten = &self.nb.store.forgotten_merges;
        if !forgotten.is_empty() {
            out.push((snapshot::FORGOTTEN_ARRAYS[0], forgotten.iter().map(|r| r.0).collect()));
            out.push((snapshot::FORGOTTEN_ARRAYS[1], forgotten.iter().map(|r| r.1).collect()));
        }
        let merged = &self.nb.store.merged_prunings;
        if merged.is_empty() {
            return out;
        }
        let mut end = 0u64;
        let mut columns: [Vec<u64>; 5] = Default::default();
        for record in merged {
            end += record.exceptions.len() as u64;
            columns[0].push(record.first);
            columns[1].push(record.last);
            columns[2].push(end);
            columns[3].extend(record.exceptions.iter().map(|&(id, _)| u64::from(id)));
            columns[4].extend(record.exceptions.iter().map(|&(_, from)| from));
        }
        out.extend(snapshot::MERGED_ARRAYS.into_iter().zip(columns));
        out
    }

    /// Remove whole features (pruning); returns how many were in V.
    fn drop_features(&mut self, ids: Vec<i64>) -> PyResult<usize> {
        guard(|| {
            let ids: Vec<u32> = ids
                .into_iter()
                .filter(|&id| id >= 0 && id < u32::MAX as i64)
                .map(|id| id as u32)
                .collect();
            Ok(self.nb.drop_features(&ids))
        })
    }

    /// Age every count by `factor` and move the document clock on by `n_docs`.
    fn advance_clock(&mut self, n_docs: u64, factor: f64) -> PyResult<()> {
        guard(|| {
            if !(0.0..=1.0).contains(&factor) {
                return Err(error(
                    ErrorKind::InvalidParameter,
                    format!("decay factor must be in [0, 1], got {factor}"),
                ));
            }
            self.nb.advance_clock(n_docs, factor);
            Ok(())
        })
    }

    /// Fold the global scale into the stored counts.
    fn rescale(&mut self) -> PyResult<()> {
        guard(|| {
            self.nb.rescale();
            Ok(())
        })
    }

    /// Per feature of `ids` and class, the log-linear weights (float64 bytes n x K); the
    /// Bernoulli model also gives log(1 - p_cw) as the second array.
    fn feature_weights<'py>(
        &mut self,
        py: Python<'py>,
        ids: Vec<u32>,
        alpha: Option<f64>,
    ) -> PyResult<(Bound<'py, PyByteArray>, Option<Bound<'py, PyByteArray>>)> {
        guard(|| {
            let smoothing = self.smoothing(alpha)?;
            let (first, second) = self.nb.feature_weights(&ids, smoothing);
            Ok((f64_bytes(py, &first)?, second.map(|s| f64_bytes(py, &s)).transpose()?))
        })
    }

    // -- the vocabulary ----------------------------------------------------------------------

    /// Ids of the tokens (-1: not in the vocabulary; hashed models: the buckets).
    fn find(&self, tokens: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
        guard(|| {
            let mut scratch = Vec::new();
            let mut out = Vec::new();
            for token in tokens.try_iter()? {
                let token = token?;
                out.push(match (self.nb.vocabulary(), self.nb.n_buckets()) {
                    (Some(v), _) => v.find(key_of(&token, &mut scratch)?).map_or(-1, |id| id as i64),
                    (None, Some(n)) => crate::vocab::bucket(bucket_text(&token, &mut scratch)?, n) as i64,
                    (None, None) => -1,
                });
            }
            Ok(out)
        })
    }

    /// The names of feature ids (hashed models: '#<bucket>').
    fn tokens_of<'py>(&self, py: Python<'py>, ids: Vec<u32>) -> PyResult<Bound<'py, PyList>> {
        guard(|| self.tokens(py, &ids))
    }

    /// The vocabulary as a model file stores it: the keys of `ids`' tokens back to back, and
    /// where each ends (uint32 bytes). Refused for a hashed model or a free id.
    fn feature_keys<'py>(
        &self,
        py: Python<'py>,
        ids: Vec<u32>,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        guard(|| {
            let vocabulary = self
                .nb
                .vocabulary()
                .ok_or_else(|| error(ErrorKind::InvalidParameter, "a hashed model has no vocabulary"))?;
            let keys = ids
                .iter()
                .map(|&id| {
                    vocabulary
                        .token(id)
                        .ok_or_else(|| error(ErrorKind::InvalidParameter, format!("feature id {id} is free")))
                })
                .collect::<PyResult<Vec<&[u8]>>>()?;
            key_arrays(py, keys.into_iter())
        })
    }

    /// Ids free for reuse (the last is reused first).
    fn free_ids(&self) -> Vec<u32> {
        self.nb.vocabulary().map_or_else(Vec::new, |v| v.free_ids().to_vec())
    }

    /// Tokens in the vocabulary (|V| of an exact model).
    fn vocabulary_size(&self) -> usize {
        self.nb.vocabulary().map_or(self.nb.store.n_features, |v| v.len())
    }

    // -- loading -----------------------------------------------------------------------------

    /// Restore a saved store: labels, the store's arrays as `{name: (dtype, shape, buffer,
    /// start, end)}` (each `.npy` payload is `buffer[start:end]`, so the file's bytes are
    /// read in place; checked in `snapshot::check`; an exact model's vocabulary is among
    /// them), and the clocks (checked by the caller).
    fn load(
        &mut self,
        labels: &Bound<'_, PyList>,
        arrays: &Bound<'_, PyDict>,
        scale: f64,
        n_learned: u64,
        pruned_at: u64,
    ) -> PyResult<()> {
        guard(|| {
            if self.nb.n_classes() != 0 {
                return Err(error(ErrorKind::ModelFormat, "a store loads into an empty model only"));
            }
            let mut raw = Vec::with_capacity(arrays.len());
            for (name, value) in arrays.iter() {
                let name: String = name.extract()?;
                let (dtype, shape, buffer, start, end) = value
                    .extract::<(String, Vec<usize>, Bound<'_, PyBytes>, usize, usize)>()
                    .ok()
                    .filter(|(_, _, buffer, start, end)| start <= end && *end <= buffer.as_bytes().len())
                    .ok_or_else(|| {
                        error(
                            ErrorKind::ModelFormat,
                            format!("array '{name}' is not (dtype, shape, buffer, start, end)"),
                        )
                    })?;
                raw.push((name, dtype, shape, buffer, start, end));
            }
            let map = raw
                .iter()
                .map(|(name, dtype, shape, buffer, start, end)| {
                    (
                        name.as_str(),
                        RawArray {
                            dtype: dtype.as_str(),
                            shape: shape.clone(),
                            data: &buffer.as_bytes()[*start..*end],
                        },
                    )
                })
                .collect();
            // The heavy parts run without the GIL: persist.loads verifies the file's checksum
            // in another thread meanwhile.
            let py = labels.py();
            let (k, n_buckets) = (labels.len(), self.nb.n_buckets());
            let docs_bounded = self.nb.store.keeps_histograms();
            let snapshot = py
                .detach(|| snapshot::check(&map, k, n_learned, pruned_at, n_buckets, docs_bounded))
                .map_err(|m| error(ErrorKind::ModelFormat, m))?;
            if let (Some(keys), Some(vocabulary)) = (snapshot.keys, self.nb.vocabulary_mut()) {
                if !keys.all_utf8() {
                    if let Some(position) = first_foreign_key(py, keys.iter())? {
                        return Err(error(
                            ErrorKind::ModelFormat,
                            format!("vocabulary key {position} is not the key of a feature name"),
                        ));
                    }
                }
                py.detach(|| vocabulary.restore(snapshot.ids.ids().zip(keys.iter()), &snapshot.free))
                    .map_err(|m| error(ErrorKind::ModelFormat, m))?;
            }
            for label in labels.iter() {
                let weight = self.prior_weight(&label)?;
                self.nb.add_class(weight);
                self.push_label(&label)?;
            }
            let store = &mut self.nb.store;
            py.detach(|| {
                let cells = (snapshot.cell_feature.ids().zip(snapshot.cell_class.iter()))
                    .zip(snapshot.cell_tokens.iter().zip(snapshot.cell_docs.iter()));
                for ((feature, class), (tokens, docs)) in cells {
                    store.load_cell(feature, class as usize, tokens, docs);
                }
                for c in 0..k {
                    store.load_class(c, snapshot.class_docs[c], snapshot.class_tokens[c]);
                }
                let stamps = snapshot.born.iter().zip(snapshot.last_seen.iter());
                for (id, (born, seen)) in snapshot.ids.ids().zip(stamps) {
                    store.set_stamps(id, Some(born as u64), Some(seen as u64));
                }
            });
            store.scale = scale;
            store.n_learned = n_learned;
            store.pruned_at = pruned_at;
            store.merged_prunings = snapshot.merged_prunings;
            store.forgotten_merges = snapshot.forgotten_merges;
            self.last = None;
            Ok(())
        })
    }

    /// Bytes the model holds in the core (vocabulary, counts, stamps, derived sums, and the
    /// document of the last text or mapping, kept for predict-then-learn: a huge one is no small part).
    fn nbytes(&self) -> usize {
        self.nb.heap_bytes() + self.last.as_ref().map_or(0, |last| last.doc.heap_bytes())
    }

    /// Bytes of the count cells alone.
    fn cells_nbytes(&self) -> usize {
        self.nb.store.cells_heap_bytes()
    }

    /// Internal state for tests: the complement normaliser for alpha, if in step with the
    /// counts (sums, incremental updates since derived, derivations so far).
    fn _normaliser<'py>(&mut self, py: Python<'py>, alpha: f64) -> PyResult<Option<Bound<'py, PyTuple>>> {
        guard(|| {
            Ok(match self.nb.normaliser_state(alpha) {
                Some((sums, updates)) => Some(PyTuple::new(
                    py,
                    [
                        PyList::new(py, sums)?.into_any(),
                        updates.into_pyobject(py)?.into_any(),
                        self.nb.derivations.into_pyobject(py)?.into_any(),
                    ],
                )?),
                None => None,
            })
        })
    }

    /// Internal state for tests: per class, the (stored D_cf, number of features) pairs of
    /// the Bernoulli histogram, sorted; None for models that keep none.
    fn _histograms(&self) -> Option<Vec<Vec<(f64, u64)>>> {
        (0..self.nb.n_classes())
            .map(|c| {
                self.nb.store.histogram(c).map(|h| {
                    let mut pairs: Vec<(f64, u64)> = h.iter().map(|(&bits, &n)| (f64::from_bits(bits), n)).collect();
                    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
                    pairs
                })
            })
            .collect::<Option<Vec<_>>>()
            .filter(|_| matches!(self.nb.kind, Kind::Bernoulli { .. }))
    }

    fn __len__(&self) -> usize {
        self.vocabulary_size()
    }
}
