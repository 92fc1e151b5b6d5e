//! `_core.Core`: one discrete naive Bayes model (vocabulary, count store, formulas) as
//! the Python models see it. One call per document: raw text or a mapping goes in,
//! log-probabilities or an updated store come out.

use super::errors::{error, guard, Kind as ErrorKind};
use super::keys::{doc_feature_name, feature_names, find_ids, first_foreign_key, key_arrays};
use super::labels::Labels;
use super::model_errors::{evidence_error, nb_error, unknown_class};
use super::output::Output;
use super::reader::{borrowed, counted_apart, Reader};
use super::values::{f64_bytes, i64_bytes, repr};
use super::weighting::EmailWeights;
use crate::doc::Doc;
use crate::evidence::strongest;
use crate::idf::idf_values;
use crate::nb::{Contributions, Kind, NaiveBayes, NbError, Prior, Smoothing};
use crate::smoothing::{inverse_temperature, AutoSmoothing};
use crate::snapshot::{self, RawArray};
use crate::weighting::MAX_IDF_OFFSET;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyTuple};

#[pyclass(module = "streamnb._core")]
pub struct Core {
    nb: NaiveBayes,
    labels: Labels,
    fixed_prior: Option<Py<PyDict>>,
    reader: Reader,
    /// EmailNB's scoring: each document reweighted by the IDF of the counts, field by field
    /// with these masses and this offset (`set_idf`); learning uses the document as it is.
    idf: Option<(Py<EmailWeights>, f64)>,
}

/// What `contributions` returns: (features, terms, rest, classes).
type Split<'py> = (
    Bound<'py, PyList>,
    Bound<'py, PyByteArray>,
    Vec<f64>,
    Bound<'py, PyList>,
);

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
        self.reader.forget();
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

    fn tokens<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
        feature_names(py, &self.nb.features, ids)
    }

    /// The name of a document's i-th feature.
    fn doc_token<'py>(&self, py: Python<'py>, doc: &Doc, i: usize) -> PyResult<Bound<'py, PyAny>> {
        doc_feature_name(py, &self.nb.features, doc, i)
    }

    /// The model, borrowed for a call on x once x is counted without it (when the core
    /// tokenizes x itself: `reader::counted_apart`, the GIL released meanwhile).
    fn apart<'py>(slf: &Bound<'py, Self>, x: &Bound<'py, PyAny>) -> PyResult<PyRefMut<'py, Self>> {
        counted_apart(slf, x, |core| (&mut core.reader, &core.nb.features))
    }

    /// The score of a read document split by known feature (`NaiveBayes::contributions`),
    /// as predictions score it.
    fn split(&mut self, doc: &mut Doc, smoothing: Smoothing) -> Contributions {
        self.scoring(doc, |core, doc| {
            let mut known = core.nb.known(doc);
            if core.idf.is_some() {
                known.retain_positive(); // what the reweighting leaves out is not in the split
            }
            core.nb.contributions(&known, smoothing)
        })
    }

    /// Run `body` on the document `x`, read once (see `Reader::read`).
    fn with_doc<R>(
        &mut self,
        x: &Bound<'_, PyAny>,
        body: impl FnOnce(&mut Self, &mut Doc) -> PyResult<R>,
    ) -> PyResult<R> {
        let mut reading = self.reader.read(&self.nb.features, x)?;
        let result = body(self, &mut reading.doc);
        self.reader.keep(x, reading)?;
        result
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
        nb_error(py, &self.nb.features, &self.labels, e, x, doc, row)
    }

    /// Run `body` on the document as predictions score it: with EmailNB's IDF (`set_idf`)
    /// its values are the scoring weights for the call, then the learned ones again.
    fn scoring<R>(&mut self, doc: &mut Doc, body: impl FnOnce(&mut Self, &mut Doc) -> R) -> R {
        let Some(values) = scoring_values(&self.nb, &self.idf, doc) else {
            return body(self, doc);
        };
        let learned = std::mem::replace(&mut doc.values, values);
        let result = body(self, doc);
        doc.values = learned;
        result
    }

    /// One prediction of `x`: the label, probabilities or log-probabilities (`output`).
    fn predict<'py>(
        &mut self,
        x: &Bound<'py, PyAny>,
        alpha: Option<f64>,
        output: Output,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = x.py();
        self.with_doc(x, |core, doc| core.predict_doc(py, doc, alpha, output, true))
    }

    /// One prediction. With `remember` and the smoothing chosen online, every candidate
    /// scores the document and it keeps their scores (it may be learned next: see
    /// `NaiveBayes::remembered_scores`); a batch has nothing to remember them for.
    fn predict_doc<'py>(
        &mut self,
        py: Python<'py>,
        doc: &mut Doc,
        alpha: Option<f64>,
        output: Output,
        remember: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let smoothing = self.smoothing(alpha)?;
        if self.nb.active().is_empty() {
            return Ok(output.nothing(py));
        }
        let remembered = remember && alpha.is_none();
        let (active, values) = self.scoring(doc, |core, doc| {
            let full = match remembered.then(|| core.nb.remembered_scores(doc)).flatten() {
                Some(full) => full,
                None => core.nb.joint_log_likelihood(doc, smoothing),
            };
            core.nb.log_posterior_of(&full, output != Output::Label)
        });
        output.of(py, &self.labels, &active, &values)
    }
}

/// The values a prediction scores a document with when they are not the learned ones: with
/// EmailNB's IDF (`set_idf`), its scoring weights.
fn scoring_values(nb: &NaiveBayes, idf: &Option<(Py<EmailWeights>, f64)>, doc: &mut Doc) -> Option<Vec<f64>> {
    let (weights, offset) = idf.as_ref()?;
    let weights = weights.get();
    Some(idf_values(nb, weights.features(), &weights.masses, *offset, doc))
}

/// Every candidate's scores of a document about to be learned, as a prediction computes
/// them (`Core::scoring`), so the evidence does not depend on whether it was predicted.
fn score_as_predicted(nb: &mut NaiveBayes, idf: &Option<(Py<EmailWeights>, f64)>, doc: &mut Doc) {
    match scoring_values(nb, idf, doc) {
        None => {
            nb.score_candidates(doc);
        }
        Some(values) => {
            let learned = std::mem::replace(&mut doc.values, values);
            nb.score_candidates(doc);
            doc.values = learned;
        }
    }
}

#[pymethods]
impl Core {
    // One block over ~400 lines, on purpose: PyO3 takes one `#[pymethods]` block per class
    // (more need its `multiple-pymethods` feature, which pulls in the `inventory` crate), and
    // `_core.Core` is the whole face of a naive Bayes model to Python, some seventy methods.
    // They only convert: Python values in, a call of the core, Python values out. What a
    // method would otherwise compute lives in the core (`crate::nb`: `NaiveBayes::learn`,
    // `log_likelihood` ...; `crate::snapshot`: `check`, `Snapshot::load_cells`,
    // `merged_arrays`; `AutoSmoothing::checked`), in `Labels` (`classes_or_next`) or in the
    // plain `impl Core` above (reading a document once, EmailNB's scoring IDF, a prediction).
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
                labels: Labels::new(py),
                fixed_prior: fixed_prior.map(Bound::unbind),
                reader: Reader::new(matches!(kind, "bernoulli")),
                idf: None,
            };
            core.reader.set_featurizer(tokenizer, in_core, binary);
            Ok(core)
        })
    }

    /// Change how raw text becomes features (`tokenizer` is then the model's new tokenizer).
    /// `in_core`: the tokenizer's core object (a `WordTokenizer`, or an `EmailTokenizer`)
    /// when the core can run it itself, with `binary` for word tokenizers.
    #[pyo3(signature = (tokenizer, in_core, binary))]
    fn set_featurizer(&mut self, tokenizer: Option<Bound<'_, PyAny>>, in_core: Option<Bound<'_, PyAny>>, binary: bool) {
        self.reader.set_featurizer(tokenizer, in_core, binary);
    }

    /// Score with EmailNB's IDF reweighting over these field masses, idf_f plus `offset`
    /// (None: as learned). The field of a feature comes from its name, so hashed models cannot.
    fn set_idf(&mut self, weights: Option<Bound<'_, EmailWeights>>, offset: f64) -> PyResult<()> {
        guard(|| {
            if weights.is_some() && self.nb.features.n_buckets().is_some() {
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
    /// of smoothing), the evidence aged by `decay` per document counted, documents learned
    /// without a prediction scored on the schedule when `sample` (see src/smoothing.rs).
    /// Only on a model that has learned nothing.
    fn set_auto_smoothing(&mut self, candidates: Vec<(f64, Option<f64>)>, decay: f64, sample: bool) -> PyResult<()> {
        guard(|| {
            if self.nb.n_classes() != 0 {
                return Err(error(
                    ErrorKind::InvalidParameter,
                    "the smoothing candidates are set before the model learns",
                ));
            }
            let auto =
                AutoSmoothing::checked(candidates, decay, sample).map_err(|m| error(ErrorKind::InvalidParameter, m))?;
            self.nb.choose_online(auto);
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
    fn predict_one<'py>(
        slf: &Bound<'py, Self>,
        x: &Bound<'py, PyAny>,
        alpha: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        guard(|| Self::apart(slf, x)?.predict(x, alpha, Output::Label))
    }

    /// {label: P(c | x)} over the active classes (from log space); {} when untrained.
    fn predict_proba_one<'py>(
        slf: &Bound<'py, Self>,
        x: &Bound<'py, PyAny>,
        alpha: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        guard(|| Self::apart(slf, x)?.predict(x, alpha, Output::Proba))
    }

    /// {label: log P(c | x)} over the active classes; {} when untrained.
    fn predict_log_proba_one<'py>(
        slf: &Bound<'py, Self>,
        x: &Bound<'py, PyAny>,
        alpha: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        guard(|| Self::apart(slf, x)?.predict(x, alpha, Output::LogProba))
    }

    /// One prediction per document (`what`: 0 labels, 1 probabilities, 2 log-probabilities).
    fn predict_many<'py>(
        &mut self,
        xs: &Bound<'py, PyAny>,
        alpha: Option<f64>,
        what: u8,
    ) -> PyResult<Bound<'py, PyList>> {
        guard(|| {
            let output = Output::from_code(what)?;
            let py = xs.py();
            let items: Vec<Bound<'py, PyAny>> = xs.try_iter()?.collect::<PyResult<_>>()?;
            let docs = self.reader.encode_batch(&self.nb.features, &items)?;
            let out = PyList::empty(py);
            for mut doc in docs {
                out.append(self.predict_doc(py, &mut doc, alpha, output, false)?)?;
            }
            Ok(out)
        })
    }

    /// {label: log P(c) + log P(x | c)} over the active classes (the unnormalised scores).
    fn joint_log_likelihood<'py>(
        slf: &Bound<'py, Self>,
        x: &Bound<'py, PyAny>,
        alpha: Option<f64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let mut this = Self::apart(slf, x)?;
            let this = &mut *this;
            let py = x.py();
            let smoothing = this.smoothing(alpha)?;
            this.with_doc(x, |core, doc| {
                let jll = core.scoring(doc, |core, doc| core.nb.joint_log_likelihood(doc, smoothing));
                let active = core.nb.active();
                let values: Vec<f64> = active.iter().map(|&c| jll[c]).collect();
                core.labels.dict(py, &active, &values, false)
            })
        })
    }

    /// log P(x | c) without the class prior, for every class of the store (NaN for the
    /// inactive ones): what a model using this one as a part sums.
    fn log_likelihood<'py>(slf: &Bound<'py, Self>, x: &Bound<'py, PyAny>, alpha: Option<f64>) -> PyResult<Vec<f64>> {
        guard(|| {
            let mut this = Self::apart(slf, x)?;
            let this = &mut *this;
            let smoothing = this.smoothing(alpha)?;
            this.with_doc(x, |core, doc| {
                let known = core.nb.known(doc);
                Ok(core.nb.log_likelihood(&known, smoothing))
            })
        })
    }

    /// log P(x | label) - log U(x), U uniform over the vocabulary: see
    /// `Nb::log_odds_against_uniform` (None for a model that is not multinomial).
    fn log_odds_against_uniform<'py>(
        slf: &Bound<'py, Self>,
        x: &Bound<'py, PyAny>,
        label: &Bound<'_, PyAny>,
        alpha: Option<f64>,
    ) -> PyResult<Option<f64>> {
        guard(|| {
            let mut this = Self::apart(slf, x)?;
            let this = &mut *this;
            let smoothing = this.smoothing(alpha)?;
            let c = match this.labels.class_of(label)? {
                Some(c) if this.nb.active().contains(&c) => c,
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
            this.with_doc(x, |core, doc| {
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
    fn contributions<'py>(slf: &Bound<'py, Self>, x: &Bound<'py, PyAny>, alpha: Option<f64>) -> PyResult<Split<'py>> {
        guard(|| {
            let mut this = Self::apart(slf, x)?;
            let this = &mut *this;
            let py = x.py();
            let smoothing = this.smoothing(alpha)?;
            this.with_doc(x, |core, doc| {
                let split = core.split(doc, smoothing);
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
                let labels = PyList::new(py, active.iter().map(|&c| core.labels.label(py, c)))?;
                Ok((
                    names,
                    f64_bytes(py, &terms)?,
                    active.iter().map(|&c| split.rest[c]).collect(),
                    labels,
                ))
            })
        })
    }

    /// The `top` features of x that push its log-odds of `positive` against `negative`
    /// most, strongest first: [(feature, weight)], weight the difference of the two classes'
    /// terms of `contributions` (see `crate::evidence::strongest`).
    fn strongest<'py>(
        slf: &Bound<'py, Self>,
        x: &Bound<'py, PyAny>,
        alpha: Option<f64>,
        positive: &Bound<'py, PyAny>,
        negative: &Bound<'py, PyAny>,
        top: usize,
    ) -> PyResult<Vec<(Bound<'py, PyAny>, f64)>> {
        guard(|| {
            let mut this = Self::apart(slf, x)?;
            let this = &mut *this;
            let py = x.py();
            let smoothing = this.smoothing(alpha)?;
            let active = this.nb.active();
            let class = |label: &Bound<'py, PyAny>| -> PyResult<usize> {
                match this.labels.class_of(label)? {
                    Some(c) if active.contains(&c) => Ok(c),
                    _ => Err(error(
                        ErrorKind::UnknownClass,
                        format!("class {} has not been learned; log-odds need both classes", repr(label)),
                    )),
                }
            };
            let (pos, neg) = (class(positive)?, class(negative)?);
            this.with_doc(x, |core, doc| {
                let split = core.split(doc, smoothing);
                strongest(&split.terms, core.nb.n_classes(), pos, neg, top)
                    .into_iter()
                    .map(|(i, w)| Ok((core.doc_token(py, doc, split.positions[i])?, w)))
                    .collect()
            })
        })
    }

    /// The known features of x with a value > 0 and their document counts D_cf for every
    /// class: (features, float64 bytes n x K). What chi-square combining reads.
    fn document_counts<'py>(
        slf: &Bound<'py, Self>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyByteArray>)> {
        guard(|| {
            let mut this = Self::apart(slf, x)?;
            let this = &mut *this;
            let py = x.py();
            this.with_doc(x, |core, doc| {
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
        slf: &Bound<'_, Self>,
        x: &Bound<'_, PyAny>,
        label: &Bound<'_, PyAny>,
        weight: f64,
        factor: f64,
        allow_empty: bool,
        check_only: bool,
    ) -> PyResult<()> {
        guard(|| {
            let mut this = borrowed(slf)?;
            let this = &mut *this;
            let py = x.py();
            let c = this.labels.class_of(label)?;
            let prior_weight = if c.is_none() { this.prior_weight(label)? } else { 1.0 };
            this.with_doc(x, |core, doc| {
                let empty_learn = core.nb.empty_learn;
                core.nb.empty_learn = empty_learn || allow_empty;
                let result = if check_only {
                    core.nb.check_learn(doc, c, weight, factor).map(|()| None)
                } else {
                    // the evidence scores the document as a prediction does (EmailNB: its
                    // IDF weights), unless a prediction left its candidates' scores or the
                    // schedule passes it over (src/smoothing.rs)
                    if c.is_some_and(|c| core.nb.wants_scores(doc, c, weight)) {
                        score_as_predicted(&mut core.nb, &core.idf, doc);
                    }
                    core.nb.learn(doc, c, prior_weight, weight, factor).map(Some)
                };
                core.nb.empty_learn = empty_learn;
                match result {
                    // a new class (usize::MAX: nothing was left to count, no class added)
                    Ok(Some(new_c)) if c.is_none() && new_c != usize::MAX => core.labels.push(label),
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
            let Some(c) = self.labels.class_of(label)? else {
                // the document is still read, so a bad one is reported as such
                self.with_doc(x, |_, _| Ok(()))?;
                return Err(unknown_class(label));
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
            let mut docs = self.reader.encode_batch(&self.nb.features, &items)?;
            let (classes, new_labels) = self.labels.classes_or_next(labels, self.nb.n_classes())?;
            let prior_weights: Vec<f64> = new_labels
                .iter()
                .map(|l| self.prior_weight(l))
                .collect::<PyResult<_>>()?;
            let result = if check_only {
                let n_new = prior_weights.len();
                self.nb
                    .check_learn_many(&mut docs, &classes, n_new, &weights, factor)
                    .map(|_| ())
            } else if self.nb.auto.is_some() {
                let idf = &self.idf;
                self.nb
                    .learn_many_choosing(&mut docs, &classes, &prior_weights, &weights, factor, |nb, doc| {
                        score_as_predicted(nb, idf, doc)
                    })
            } else {
                self.nb
                    .learn_many(&mut docs, &classes, &prior_weights, &weights, factor)
            };
            match result {
                Ok(()) if check_only => Ok(()),
                Ok(()) => {
                    for label in &new_labels {
                        self.labels.push(label)?;
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
                match self.labels.class_of(&label)? {
                    Some(c) => classes.push(c),
                    None => return Err(unknown_class(&label)),
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
                (other.nb.snapshot(), other.labels.owned(py))
            };
            let mut target = target.borrow_mut();
            let mut classes = Vec::with_capacity(other_labels.len());
            let mut new_labels = Vec::new();
            let mut prior_weights = Vec::new();
            for label in &other_labels {
                let label = label.bind(py);
                let c = target.labels.class_of(label)?;
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
                            target.labels.push(label)?;
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
        self.labels.list(py)
    }

    /// The index of a class, None when it was never seen.
    fn class_id(&self, label: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
        self.labels.class_of(label)
    }

    /// Add a class with zero counts (if new); returns its index.
    fn add_class(&mut self, label: &Bound<'_, PyAny>) -> PyResult<usize> {
        guard(|| {
            if let Some(c) = self.labels.class_of(label)? {
                return Ok(c);
            }
            let weight = self.prior_weight(label)?;
            let c = self.nb.add_class(weight);
            self.labels.push(label)?;
            Ok(c)
        })
    }

    /// N_c per class (true counts).
    fn class_docs(&self) -> Vec<f64> {
        (0..self.nb.n_classes())
            .map(|c| self.nb.store.true_class_docs(c))
            .collect()
    }

    /// {label: N_c} of the classes with documents (a filter reads it several times a message).
    fn class_counts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (classes, counts): (Vec<usize>, Vec<f64>) = (0..self.nb.n_classes())
            .map(|c| (c, self.nb.store.true_class_docs(c)))
            .filter(|&(_, n)| n > 0.0)
            .unzip();
        self.labels.dict(py, &classes, &counts, false)
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
        self.nb.features.epoch()
    }

    #[getter]
    fn capacity(&self) -> usize {
        self.nb.features.capacity()
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
        snapshot::merged_arrays(&self.nb.store)
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

    /// A pruning pass (see `crate::pruning`): drop the features the policies select; returns
    /// how many left V.
    #[pyo3(signature = (expire_after, min_count, max_features))]
    fn prune(
        &mut self,
        expire_after: Option<u64>,
        min_count: Option<f64>,
        max_features: Option<usize>,
    ) -> PyResult<usize> {
        guard(|| {
            let policy = crate::pruning::Policy {
                expire_after,
                min_count,
                max_features,
            };
            let ids = self.nb.prune_selection(&policy);
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
        guard(|| find_ids(&self.nb.features, tokens))
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
                .features
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
        self.nb
            .features
            .vocabulary()
            .map_or_else(Vec::new, |v| v.free_ids().to_vec())
    }

    /// Tokens in the vocabulary (|V| of an exact model).
    fn vocabulary_size(&self) -> usize {
        self.nb
            .features
            .vocabulary()
            .map_or(self.nb.store.n_features, |v| v.len())
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
            let (k, n_buckets) = (labels.len(), self.nb.features.n_buckets());
            let docs_bounded = self.nb.store.keeps_histograms();
            let mut snapshot = py
                .detach(|| snapshot::check(&map, k, n_learned, pruned_at, n_buckets, docs_bounded))
                .map_err(|m| error(ErrorKind::ModelFormat, m))?;
            if let (Some(keys), Some(vocabulary)) = (snapshot.keys.take(), self.nb.features.vocabulary_mut()) {
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
                self.labels.push(&label)?;
            }
            let store = &mut self.nb.store;
            py.detach(|| snapshot.load_cells(store, k));
            store.scale = scale;
            store.n_learned = n_learned;
            store.pruned_at = pruned_at;
            store.merged_prunings = snapshot.merged_prunings;
            store.forgotten_merges = snapshot.forgotten_merges;
            self.reader.forget();
            Ok(())
        })
    }

    /// Bytes the model holds in the core (vocabulary, counts, stamps, derived sums, and the
    /// document of the last text or mapping, kept for predict-then-learn: a huge one is no small part).
    fn nbytes(&self) -> usize {
        self.nb.heap_bytes() + self.reader.heap_bytes()
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
