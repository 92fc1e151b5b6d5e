//! `_core.LogisticCore`: one online logistic regression model (`crate::logistic`) over a
//! feature space (`crate::space`), as `streamnb.LogisticRegression` sees it. Documents are
//! read as the naive Bayes models read them (`Reader`): one call per document or batch.

use super::errors::{error, guard, Kind as ErrorKind};
use super::keys::{doc_feature_name, feature_names, find_ids, key_arrays};
use super::labels::Labels;
use super::output::Output;
use super::reader::{borrowed, counted_apart, Reader};
use super::records;
use super::values::{describe, f64_bytes};
use crate::doc::{Doc, UNKNOWN};
use crate::evidence::strongest;
use crate::logistic::{
    balanced_omega, check_doc_freqs, check_parameters, check_state, Logistic, Schedule, Settings, Step,
};
use crate::records::{Entry, Fingerprint, Records};
use crate::space::{Features, RowsError};
use crate::vocab::Vocabulary;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList};

/// The little-endian values of a model file's array (its raw bytes), N bytes each, read by
/// `from` (`u32::from_le_bytes` ...); `kind` names them for the error.
pub(super) fn little_endian<T, const N: usize>(bytes: &[u8], kind: &str, from: fn([u8; N]) -> T) -> PyResult<Vec<T>> {
    if !bytes.len().is_multiple_of(N) {
        return Err(error(
            ErrorKind::ModelFormat,
            format!("an array of {kind} holds a whole number of values"),
        ));
    }
    Ok(bytes
        .chunks_exact(N)
        .map(|chunk| {
            let mut value = [0u8; N];
            value.copy_from_slice(chunk);
            from(value)
        })
        .collect())
}

/// The little-endian u32 values of a model file's array (its raw bytes).
pub(super) fn little_endian_u32(bytes: &[u8]) -> PyResult<Vec<u32>> {
    little_endian(bytes, "uint32", u32::from_le_bytes)
}

/// The little-endian f64 values of a model file's array (its raw bytes).
pub(super) fn little_endian_f64(bytes: &[u8]) -> PyResult<Vec<f64>> {
    little_endian(bytes, "float64", f64::from_le_bytes)
}

/// How a class weighs in the gradient (times the sample weight).
pub(super) enum ClassWeight {
    /// Every class 1.
    Equal,
    /// N / (K N_c) over the documents learned so far, this one included (scikit-learn's
    /// "balanced", online): a rare class weighs as much in total as a common one.
    Balanced,
    /// A fixed weight per label (labels it does not name: 1).
    Fixed(Py<PyDict>),
}

#[pyclass(module = "streamnb._core")]
pub struct LogisticCore {
    pub(super) space: Features,
    pub(super) model: Logistic,
    pub(super) labels: Labels,
    /// Documents (sum of sample weights) learned per class.
    pub(super) class_docs: Vec<f64>,
    pub(super) class_weight: ClassWeight,
    pub(super) reader: Reader,
    /// Bumped by every change of the weights or the classes.
    pub(super) version: u64,
    /// The dot products of the last document predicted, at `version`: a learn of the same
    /// document right after uses them instead of reading the weights again.
    last_dots: Option<(u64, Vec<f64>)>,
    /// The steps kept per message, and the newest documents (`crate::records`; None: none
    /// kept). The methods that read and change them are in `super::records`.
    pub(super) records: Option<Records>,
}

fn parse_schedule(schedule: &str) -> PyResult<Schedule> {
    match schedule {
        "constant" => Ok(Schedule::Constant),
        "adagrad" => Ok(Schedule::AdaGrad),
        other => Err(error(
            ErrorKind::InvalidParameter,
            format!("schedule must be 'adagrad' or 'constant', got {other:?}"),
        )),
    }
}

impl LogisticCore {
    /// The class of a label, added when new (labels first: the model's columns follow in
    /// `reach`, when a document of the class is learned).
    fn class_or_add(&mut self, label: &Bound<'_, PyAny>) -> PyResult<usize> {
        if let Some(c) = self.labels.class_of(label)? {
            return Ok(c);
        }
        self.labels.push(label)?;
        self.class_docs.push(0.0);
        Ok(self.labels.len() - 1)
    }

    /// Give the model the classes up to c: a class takes part in the softmax from its first
    /// document on, so a batch learns exactly as its documents learned one by one.
    fn reach(model: &mut Logistic, c: usize) {
        while model.n_classes() <= c {
            model.add_class();
        }
    }

    /// The fixed weight of a label (1 when the mapping does not name it).
    pub(super) fn fixed_weight(&self, label: &Bound<'_, PyAny>) -> PyResult<f64> {
        match &self.class_weight {
            ClassWeight::Fixed(weights) => match weights.bind(label.py()).get_item(label)? {
                Some(w) => w.extract(),
                None => Ok(1.0),
            },
            _ => Ok(1.0),
        }
    }

    /// The weight of a document of class c in the gradient, its class counted already.
    fn omega(&self, c: usize, weight: f64, fixed: f64) -> f64 {
        match self.class_weight {
            ClassWeight::Balanced => balanced_omega(&self.class_docs, c, weight),
            _ => weight * fixed,
        }
    }

    /// Give the document's new features ids and the model rows for them.
    fn make_room(&mut self, doc: &mut Doc) -> PyResult<()> {
        let all: Vec<usize> = (0..doc.len()).collect();
        self.space.check_room(std::iter::once((&*doc, &all[..]))).map_err(|_| {
            error(
                ErrorKind::InvalidInput,
                "the vocabulary is full (2^32 - 1 ids or 4 GiB of token bytes)",
            )
        })?;
        self.space
            .add_tokens(doc, &all)
            .map_err(|_| error(ErrorKind::InvalidInput, "the vocabulary is full"))?;
        self.model.reserve_rows(self.space.capacity());
        Ok(())
    }

    /// Learn one read document of class c (counted in N_c first); `reused`: the document is
    /// the one predicted last, whose dot products may still hold. Returns what the step used.
    fn learn_doc(&mut self, doc: &mut Doc, c: usize, weight: f64, fixed: f64, reused: bool) -> PyResult<Step> {
        let dots = match self.last_dots.take() {
            Some((version, dots)) if reused && version == self.version => Some(dots),
            _ => None,
        };
        if self.model.n_classes() <= c {
            Self::reach(&mut self.model, c);
            self.version += 1;
        }
        let dots = dots.filter(|d| d.len() + 1 == self.model.n_classes());
        self.make_room(doc)?; // new features get rows of zeros: the dot products still hold
        self.class_docs[c] += weight;
        let omega = self.omega(c, weight, fixed);
        self.version += 1;
        Ok(self.model.learn(&doc.ids, &doc.values, c, omega, dots, weight))
    }

    /// The steps of a batch whose room was checked: every document's new features added,
    /// then `passes` passes in order (a document counts once, in N_c and the IDF, at its
    /// first step: one pass learns as `learn_one` in order, to rounding).
    fn learn_batch(
        &mut self,
        docs: &mut [Doc],
        all_positions: &[Vec<usize>],
        classes: &[usize],
        weights: &[f64],
        fixed: &[f64],
        passes: usize,
    ) {
        for (doc, positions) in docs.iter_mut().zip(all_positions) {
            // room was checked for the whole batch
            let _ = self.space.add_tokens(doc, positions);
        }
        self.model.reserve_rows(self.space.capacity());
        for pass in 0..passes {
            for (i, doc) in docs.iter().enumerate() {
                let c = classes[i];
                Self::reach(&mut self.model, c);
                if pass == 0 {
                    self.class_docs[c] += weights[i];
                }
                let omega = self.omega(c, weights[i], fixed[i]);
                let count = if pass == 0 { weights[i] } else { 0.0 };
                self.model.learn(&doc.ids, &doc.values, c, omega, None, count);
            }
        }
    }

    fn known(&self, doc: &mut Doc) {
        self.space.resolve(doc);
    }

    fn predict_doc<'py>(&mut self, py: Python<'py>, doc: &mut Doc, output: Output) -> PyResult<Bound<'py, PyAny>> {
        self.known(doc);
        if self.model.n_classes() == 0 {
            return Ok(output.nothing(py));
        }
        let dots = self.model.dots(&doc.ids, &doc.values);
        let log_proba = self.model.log_posterior_of(&dots);
        self.last_dots = Some((self.version, dots));
        let classes: Vec<usize> = (0..log_proba.len()).collect();
        output.of(py, &self.labels, &classes, &log_proba)
    }

    /// Take x, learned as `label` with sample weight `weight`, back out: its kept `step`
    /// undone exactly, or without one the reverse step (`Logistic::unlearn`). Checked first:
    /// an error changes nothing.
    pub(super) fn take_back(
        &mut self,
        x: &Bound<'_, PyAny>,
        label: &Bound<'_, PyAny>,
        weight: f64,
        step: Option<Step>,
    ) -> PyResult<()> {
        Self::check_weight(weight)?;
        let Some(c) = self.labels.class_of(label)? else {
            return Err(error(
                ErrorKind::UnknownClass,
                format!("cannot unlearn from class {}: it was never learned", describe(label)),
            ));
        };
        if self.class_docs[c] < weight * (1.0 - 1e-9) {
            return Err(error(
                ErrorKind::InvalidInput,
                format!(
                    "class {} holds {} documents' weight; cannot remove {weight}",
                    describe(label),
                    self.class_docs[c]
                ),
            ));
        }
        if let Some(step) = &step {
            self.model
                .check_step(step)
                .map_err(|m| error(ErrorKind::InvalidInput, m))?;
        }
        let fixed = self.fixed_weight(label)?;
        let mut reading = self.reader.read(&self.space, x)?;
        self.known(&mut reading.doc);
        let known: Vec<usize> = (0..reading.doc.len())
            .filter(|&i| reading.doc.ids[i] != UNKNOWN)
            .collect();
        let ids: Vec<u32> = known.iter().map(|&i| reading.doc.ids[i]).collect();
        let values: Vec<f64> = known.iter().map(|&i| reading.doc.values[i]).collect();
        match step {
            Some(step) => self.model.undo(&ids, &values, &step, weight),
            None => {
                let omega = self.omega(c, weight, fixed);
                self.model.unlearn(&ids, &values, c, omega, weight);
            }
        }
        self.version += 1;
        self.class_docs[c] = (self.class_docs[c] - weight).max(0.0);
        self.reader.keep(x, reading)?;
        Ok(())
    }

    /// A known class's index, or UnknownClass naming what is wrong (`doing`: "learn
    /// provisionally", "undo").
    pub(super) fn known_class(&self, label: &Bound<'_, PyAny>, doing: &str) -> PyResult<usize> {
        self.labels.class_of(label)?.ok_or_else(|| {
            error(
                ErrorKind::UnknownClass,
                format!("cannot {doing} class {}: it was never learned", describe(label)),
            )
        })
    }

    /// A provisional step on x as the known class `label` with sample weight `weight` at the
    /// constant rate `rate` (`Logistic::provisional`), kept in the records with its
    /// document under `keep` (fingerprint, stamp) when given; returns its gradient. Checked
    /// first: an error changes nothing.
    pub(super) fn provisional_doc(
        &mut self,
        x: &Bound<'_, PyAny>,
        label: &Bound<'_, PyAny>,
        weight: f64,
        rate: f64,
        keep: Option<(Fingerprint, u64)>,
    ) -> PyResult<Vec<f64>> {
        Self::check_weight(weight)?;
        if !(rate.is_finite() && rate > 0.0) {
            return Err(error(
                ErrorKind::InvalidParameter,
                format!("a provisional step's rate must be a finite number > 0, got {rate}"),
            ));
        }
        let c = self.known_class(label, "learn provisionally")?;
        let fixed = self.fixed_weight(label)?;
        let mut reading = self.reader.read(&self.space, x)?;
        self.make_room(&mut reading.doc)?;
        let omega = self.omega(c, weight, fixed);
        let step = self
            .model
            .provisional(&reading.doc.ids, &reading.doc.values, c, omega, rate);
        if let (Some((fp, stamp)), Some(records)) = (keep, self.records.as_mut()) {
            let doc = Some((&reading.doc.ids[..], &reading.doc.values[..]));
            let classes = self.model.n_classes();
            records.keep(fp, Entry::new(Some(c), weight, step.clone(), stamp, classes), doc);
        }
        self.version += 1;
        self.reader.keep(x, reading)?;
        Ok(step.g)
    }

    fn check_weight(weight: f64) -> PyResult<()> {
        if weight.is_finite() && weight > 0.0 {
            Ok(())
        } else {
            Err(error(
                ErrorKind::InvalidParameter,
                format!("sample weights must be finite and > 0, got {weight}"),
            ))
        }
    }
}

#[pymethods]
impl LogisticCore {
    // The bindings only convert: Python values in, Rust calls, Python values out. What a method
    // would otherwise compute lives in the core (`crate::logistic`: `check_parameters`,
    // `check_state`; `Features::rows_from`; `Vocabulary::from_keys`) or in the plain
    // `impl LogisticCore` above (`learn_batch`, `learn_doc`, `omega` ...). One `#[pymethods]`
    // block per class: PyO3 allows no more without its `multiple-pymethods` feature.
    #[new]
    #[pyo3(signature = (*, rate, schedule, l2, margin, sublinear, idf_power, normalize, n_buckets, class_weight,
                        tokenizer, in_core, binary))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        rate: f64,
        schedule: &str,
        l2: f64,
        margin: Option<f64>,
        sublinear: bool,
        idf_power: f64,
        normalize: bool,
        n_buckets: Option<u32>,
        class_weight: Option<Bound<'_, PyAny>>,
        tokenizer: Option<Bound<'_, PyAny>>,
        in_core: Option<Bound<'_, PyAny>>,
        binary: bool,
    ) -> PyResult<Self> {
        guard(|| {
            check_parameters(rate, l2, margin, idf_power).map_err(|m| error(ErrorKind::InvalidParameter, m))?;
            let class_weight = match class_weight {
                None => ClassWeight::Equal,
                Some(value) => match value.cast_into::<PyDict>() {
                    Ok(weights) => ClassWeight::Fixed(weights.unbind()),
                    Err(other) => match other.into_inner().extract::<String>().as_deref() {
                        Ok("balanced") => ClassWeight::Balanced,
                        _ => {
                            return Err(error(
                                ErrorKind::InvalidParameter,
                                "class_weight must be None, 'balanced' or a dict label -> weight",
                            ))
                        }
                    },
                },
            };
            let settings = Settings {
                rate,
                schedule: parse_schedule(schedule)?,
                l2,
                margin,
                sublinear,
                idf_power,
                normalize,
            };
            let mut core = LogisticCore {
                space: Features::new(n_buckets),
                model: Logistic::new(settings),
                labels: Labels::new(py),
                class_docs: Vec::new(),
                class_weight,
                reader: Reader::new(true),
                version: 0,
                last_dots: None,
                records: None,
            };
            core.reader.set_featurizer(tokenizer, in_core, binary);
            Ok(core)
        })
    }

    /// Change how raw text becomes features (see `Reader::set_featurizer`).
    #[pyo3(signature = (tokenizer, in_core, binary))]
    fn set_featurizer(&mut self, tokenizer: Option<Bound<'_, PyAny>>, in_core: Option<Bound<'_, PyAny>>, binary: bool) {
        self.reader.set_featurizer(tokenizer, in_core, binary);
    }

    /// The most probable class, or None before anything is learned (`what` 0); {label:
    /// P(c|x)} (1) or {label: log P(c|x)} (2) over the classes learned.
    fn predict<'py>(slf: &Bound<'py, Self>, x: &Bound<'py, PyAny>, what: u8) -> PyResult<Bound<'py, PyAny>> {
        guard(|| {
            let output = Output::from_code(what)?;
            let py = x.py();
            let mut this = counted_apart(slf, x, |core| (&mut core.reader, &core.space))?;
            let this = &mut *this;
            let mut reading = this.reader.read(&this.space, x)?;
            let result = this.predict_doc(py, &mut reading.doc, output);
            this.reader.keep(x, reading)?;
            result
        })
    }

    /// The scores of x split by feature over every class: (features, terms as float64
    /// bytes (n x K), the rest per class, the labels); see `Logistic::contributions`.
    #[allow(clippy::type_complexity)]
    fn contributions<'py>(
        slf: &Bound<'py, Self>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<(
        Bound<'py, PyList>,
        Bound<'py, PyByteArray>,
        Vec<f64>,
        Bound<'py, PyList>,
    )> {
        guard(|| {
            let py = x.py();
            let mut this = counted_apart(slf, x, |core| (&mut core.reader, &core.space))?;
            let this = &mut *this;
            let mut reading = this.reader.read(&this.space, x)?;
            this.known(&mut reading.doc);
            let doc = &reading.doc;
            let (positions, terms, rest) = this.model.contributions(&doc.ids, &doc.values);
            let names = PyList::empty(py);
            for &i in &positions {
                names.append(doc_feature_name(py, &this.space, doc, i)?)?;
            }
            let labels = PyList::new(py, (0..rest.len()).map(|c| this.labels.label(py, c)))?;
            let out = (names, f64_bytes(py, &terms)?, rest, labels);
            this.reader.keep(x, reading)?;
            Ok(out)
        })
    }

    /// The `top` features of x that push its log-odds of `positive` against `negative`
    /// most, strongest first: [(feature, weight)] (see `crate::evidence::strongest`, over
    /// the terms of `contributions`).
    fn strongest<'py>(
        slf: &Bound<'py, Self>,
        x: &Bound<'py, PyAny>,
        positive: &Bound<'py, PyAny>,
        negative: &Bound<'py, PyAny>,
        top: usize,
    ) -> PyResult<Vec<(Bound<'py, PyAny>, f64)>> {
        guard(|| {
            let py = x.py();
            let mut this = counted_apart(slf, x, |core| (&mut core.reader, &core.space))?;
            let this = &mut *this;
            let (pos, neg) = (
                this.known_class(positive, "explain a verdict of")?,
                this.known_class(negative, "explain a verdict of")?,
            );
            if pos.max(neg) >= this.model.n_classes() {
                return Err(error(
                    ErrorKind::UnknownClass,
                    "cannot explain a verdict of a class that has learned nothing",
                ));
            }
            let mut reading = this.reader.read(&this.space, x)?;
            this.known(&mut reading.doc);
            let doc = &reading.doc;
            let (positions, terms, _) = this.model.contributions(&doc.ids, &doc.values);
            let out = strongest(&terms, this.model.n_classes(), pos, neg, top)
                .into_iter()
                .map(|(i, w)| Ok((doc_feature_name(py, &this.space, doc, positions[i])?, w)))
                .collect::<PyResult<Vec<_>>>();
            this.reader.keep(x, reading)?;
            out
        })
    }

    /// `predict` of every document of a batch (raw texts read on several threads).
    fn predict_many<'py>(&mut self, xs: &Bound<'py, PyAny>, what: u8) -> PyResult<Bound<'py, PyList>> {
        guard(|| {
            let output = Output::from_code(what)?;
            let py = xs.py();
            let items: Vec<Bound<'py, PyAny>> = xs.try_iter()?.collect::<PyResult<_>>()?;
            let docs = self.reader.encode_batch(&self.space, &items)?;
            let out = PyList::empty(py);
            for mut doc in docs {
                out.append(self.predict_doc(py, &mut doc, output)?)?;
            }
            self.last_dots = None; // the batch's last document is not the one the reader remembers first
            Ok(out)
        })
    }

    /// One online step on x of class `label` with sample weight `weight`; returns what the
    /// step used, (g, decay) (`crate::logistic::Step`: g empty when the margin was met), for
    /// `undo_one`. With a `fingerprint`, the records keep the step and the document as the
    /// model read it (a message kept already: its record is replaced; move it first).
    #[pyo3(signature = (x, label, weight, fingerprint=None))]
    fn learn_one(
        slf: &Bound<'_, Self>,
        x: &Bound<'_, PyAny>,
        label: &Bound<'_, PyAny>,
        weight: f64,
        fingerprint: Option<&[u8]>,
    ) -> PyResult<(Vec<f64>, f64)> {
        guard(|| {
            let mut this = borrowed(slf)?;
            let this = &mut *this;
            Self::check_weight(weight)?;
            let fp = match fingerprint {
                Some(bytes) => {
                    this.records()?; // refused before anything is learned
                    Some(records::fingerprint(bytes)?)
                }
                None => None,
            };
            let fixed = this.fixed_weight(label)?;
            let mut reading = this.reader.read(&this.space, x)?;
            let c = this.class_or_add(label)?;
            let reused = reading.reused;
            let result = this.learn_doc(&mut reading.doc, c, weight, fixed, reused);
            if let (Ok(step), Some(fp)) = (&result, fp) {
                this.keep_lesson(fp, c, weight, step.clone(), &reading.doc);
            }
            this.reader.keep(x, reading)?;
            result.map(|step| (step.g, step.decay))
        })
    }

    /// The features of x as the model reads them (names, values), those of value 0 left
    /// out: what a ledger's fingerprint of a mapping is made of.
    fn present_features<'py>(&mut self, x: &Bound<'py, PyAny>) -> PyResult<(Bound<'py, PyList>, Vec<f64>)> {
        guard(|| {
            let py = x.py();
            let reading = self.reader.read(&self.space, x)?;
            let names = PyList::empty(py);
            let mut values = Vec::new();
            let doc = &reading.doc;
            for (i, &v) in doc.values.iter().enumerate() {
                if v != 0.0 {
                    names.append(doc_feature_name(py, &self.space, doc, i)?)?;
                    values.push(v);
                }
            }
            self.reader.keep(x, reading)?;
            Ok((names, values))
        })
    }

    /// Learn a batch in order, `passes` times over (the documents count once in N_c): every
    /// document is read and checked first (raw texts on several threads), then the steps
    /// run with the GIL released.
    fn learn_many(
        &mut self,
        py: Python<'_>,
        xs: &Bound<'_, PyAny>,
        labels: &Bound<'_, PyAny>,
        weights: Vec<f64>,
        passes: usize,
    ) -> PyResult<()> {
        guard(|| {
            let items: Vec<Bound<'_, PyAny>> = xs.try_iter()?.collect::<PyResult<_>>()?;
            let labels: Vec<Bound<'_, PyAny>> = labels.try_iter()?.collect::<PyResult<_>>()?;
            if items.len() != labels.len() || weights.len() != labels.len() {
                return Err(error(
                    ErrorKind::InvalidInput,
                    format!(
                        "X has {} documents, y {} labels and w {} weights",
                        items.len(),
                        labels.len(),
                        weights.len()
                    ),
                ));
            }
            weights.iter().try_for_each(|&w| Self::check_weight(w))?;
            let mut docs = self.reader.encode_batch(&self.space, &items)?;
            let fixed: Vec<f64> = labels.iter().map(|l| self.fixed_weight(l)).collect::<PyResult<_>>()?;
            let all_positions: Vec<Vec<usize>> = docs.iter().map(|d| (0..d.len()).collect()).collect();
            self.space
                .check_room(docs.iter().zip(&all_positions).map(|(d, p)| (d, &p[..])))
                .map_err(|_| error(ErrorKind::InvalidInput, "the vocabulary is full"))?;
            let classes: Vec<usize> = labels.iter().map(|l| self.class_or_add(l)).collect::<PyResult<_>>()?;
            py.detach(|| self.learn_batch(&mut docs, &all_positions, &classes, &weights, &fixed, passes));
            self.reader.forget();
            self.version += 1;
            Ok(())
        })
    }

    /// The reverse step of learning x as `label` (see `crate::logistic`): approximate, for
    /// a document whose step was not kept.
    fn unlearn_one(&mut self, x: &Bound<'_, PyAny>, label: &Bound<'_, PyAny>, weight: f64) -> PyResult<()> {
        guard(|| self.take_back(x, label, weight, None))
    }

    /// Undo exactly the step `learn_one` took on x as `label` with sample weight `weight`
    /// and returned as (g, decay) (see `crate::logistic`). Raises InvalidInputError, changing
    /// nothing, for a step this model could not have taken.
    fn undo_one(
        &mut self,
        x: &Bound<'_, PyAny>,
        label: &Bound<'_, PyAny>,
        weight: f64,
        g: Vec<f64>,
        decay: f64,
    ) -> PyResult<()> {
        guard(|| self.take_back(x, label, weight, Some(Step { g, decay })))
    }
    /// A provisional step on x (a message seen without a label) as the known class `label`
    /// with sample weight `weight`, at the constant rate `rate`, outside the schedule
    /// (`crate::logistic`, `Logistic::provisional`); returns its gradient g, for
    /// `undo_provisional_one`. Counts nothing (no class count, no IDF count, no step).
    fn provisional_one(
        &mut self,
        x: &Bound<'_, PyAny>,
        label: &Bound<'_, PyAny>,
        weight: f64,
        rate: f64,
    ) -> PyResult<Vec<f64>> {
        guard(|| self.provisional_doc(x, label, weight, rate, None))
    }

    /// Parameter mixing of other into target (see `Logistic::mix`): the weights averaged,
    /// each model weighing by the documents it learned. Same settings, same space kind.
    #[staticmethod]
    fn mix(target: &Bound<'_, LogisticCore>, other: &Bound<'_, LogisticCore>) -> PyResult<()> {
        guard(|| {
            let py = target.py();
            if target.is(other) {
                return Ok(()); // the average of a model with itself
            }
            let other = other.borrow();
            let mut target = target.borrow_mut();
            let their_records = records::entries_of(&other);
            let mut classes = Vec::new();
            for label in other.labels.owned(py) {
                classes.push(target.class_or_add(label.bind(py))?);
            }
            if let Some(&last) = classes.iter().max() {
                Self::reach(&mut target.model, last);
            }
            // other's rows as target's rows: the same bucket, or the same token
            let other_rows = other.model.rows();
            let rows = target.space.rows_from(&other.space, other_rows).map_err(|e| match e {
                RowsError::HashedAndExact => {
                    error(ErrorKind::InvalidParameter, "cannot mix a hashed and an exact model")
                }
                RowsError::Full => error(ErrorKind::InvalidInput, "the vocabulary is full"),
            })?;
            let capacity = target.space.capacity();
            target.model.reserve_rows(capacity);
            let mine: f64 = target.class_docs.iter().sum();
            let theirs: f64 = other.class_docs.iter().sum();
            target.model.mix(&other.model, &rows, &classes, mine, theirs);
            for (k, &c) in classes.iter().enumerate() {
                target.class_docs[c] += other.class_docs[k];
            }
            target.merge_records(their_records, &classes);
            target.reader.forget();
            target.version += 1;
            Ok(())
        })
    }

    #[getter]
    fn labels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.labels.list(py)
    }

    // -- the records (`crate::records`, `super::records`) --------------------------------

    /// Keep the steps of the last `max_entries` messages learned with a fingerprint, and the
    /// documents of the newest `window` of them (any records kept before are dropped).
    fn keep_records(&mut self, max_entries: usize, window: usize) {
        self.records = Some(Records::new(max_entries, window));
    }

    /// (records kept, their bound, the window, documents kept), or None without records.
    fn records_info(&self) -> Option<(usize, usize, usize, usize)> {
        self.records
            .as_ref()
            .map(|r| (r.len(), r.max_entries(), r.window(), r.documents()))
    }

    /// The message x (`fingerprint`) seen without a label, stamped `stamp` (> 0): its
    /// provisional lesson `lesson` = (label, weight) taken at the provisional rate
    /// (`crate::feedback`) and kept with its document, or with no lesson, kept as
    /// `delivered`. Returns the lesson's g (empty: none).
    #[pyo3(signature = (x, fingerprint, stamp, lesson=None, delivered=None))]
    fn observe(
        &mut self,
        x: &Bound<'_, PyAny>,
        fingerprint: &[u8],
        stamp: u64,
        lesson: Option<(Bound<'_, PyAny>, f64)>,
        delivered: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Vec<f64>> {
        guard(|| self.observe_message(x, records::fingerprint(fingerprint)?, stamp, lesson, delivered))
    }

    /// A message's record: (class index or None, weight, g, decay, stacker (input_nb,
    /// input_lr, g) or None, seen_at, has its document), or None.
    fn record(&self, fingerprint: &[u8]) -> PyResult<Option<records::RecordView>> {
        guard(|| self.record_view(&records::fingerprint(fingerprint)?))
    }

    /// Every record, oldest first: (fingerprint, record).
    fn record_items<'py>(&self, py: Python<'py>) -> PyResult<Vec<(Bound<'py, PyBytes>, records::RecordView)>> {
        guard(|| self.record_views(py))
    }

    /// Unlearn the message x whose lesson the records keep: by replay when its document is
    /// kept, else by undoing its kept step (`crate::replay`); its record is forgotten.
    /// InvalidInputError, changing nothing, when it cannot.
    fn unlearn_kept(&mut self, x: &Bound<'_, PyAny>, fingerprint: &[u8]) -> PyResult<()> {
        guard(|| self.unlearn_record(x, records::fingerprint(fingerprint)?, None))
    }

    /// Take back exactly the provisional lesson of the observed message x and forget its
    /// record; returns its stamp.
    fn take_back_provisional(&mut self, x: &Bound<'_, PyAny>, fingerprint: &[u8]) -> PyResult<u64> {
        guard(|| self.take_back_observed(x, records::fingerprint(fingerprint)?))
    }

    /// The positions of `fingerprints` in the order to unlearn them: the messages learned
    /// last first, then those not kept, in the order given.
    fn newest_first(&self, fingerprints: Vec<Vec<u8>>) -> PyResult<Vec<usize>> {
        guard(|| {
            let fps = fingerprints
                .iter()
                .map(|f| records::fingerprint(f))
                .collect::<PyResult<Vec<_>>>()?;
            Ok(self.records()?.newest_first(&fps))
        })
    }

    /// A fingerprint both models keep (a merge would count its message twice), or None.
    fn records_overlap<'py>(&self, py: Python<'py>, other: &LogisticCore) -> Option<Bound<'py, PyBytes>> {
        self.shared_fingerprint(py, other)
    }

    /// The records as a model file keeps them (see `super::records`, `export_records`).
    fn records_state<'py>(&self, py: Python<'py>) -> PyResult<records::RecordsState<'py>> {
        guard(|| self.export_records(py))
    }

    /// Records from a model file (`records_state`'s arrays; `classes` as the file numbers
    /// them and `class_map` this model's class of each (-1: one it does not know); `known`
    /// None for a file from before they were kept, `stacker` None without a stacker,
    /// `documents` None for a file from before documents were kept; `clock`: a fusion's
    /// clock of messages seen, its observations' stamps checked against it). Raises
    /// ModelFormatError for anything inconsistent.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (max_entries, window, fingerprints, classes, class_map, weights, g, decays, stamps, known,
                        stacker, documents, clock=None))]
    fn load_records(
        &mut self,
        max_entries: usize,
        window: usize,
        fingerprints: &[u8],
        classes: &[u8],
        class_map: Vec<i64>,
        weights: &[u8],
        g: &[u8],
        decays: &[u8],
        stamps: &[u8],
        known: Option<&[u8]>,
        stacker: Option<&[u8]>,
        documents: Option<(Vec<u8>, Vec<u8>)>,
        clock: Option<u64>,
    ) -> PyResult<()> {
        guard(|| {
            let documents = documents.as_ref().map(|(l, d)| (&l[..], &d[..]));
            let arrays = records::RecordArrays {
                fingerprints,
                classes,
                class_map: &class_map,
                weights,
                g,
                decays,
                stamps,
                known,
                stacker,
                documents,
                clock,
            };
            self.import_records(max_entries, window, arrays)
        })
    }

    /// N_c per class, in the order of `labels`.
    fn class_docs(&self) -> Vec<f64> {
        self.class_docs.clone()
    }

    /// Learning steps taken (each pass of a batch counts).
    #[getter]
    fn n_steps(&self) -> u64 {
        self.model.steps
    }

    /// The factor every step decays the weights by (1 - rate * l2; 1 without L2): what a
    /// kept step's decay must be.
    #[getter]
    fn decay(&self) -> f64 {
        self.model.decay()
    }

    /// Features with a nonzero weight (or AdaGrad history).
    fn feature_ids(&self) -> Vec<u32> {
        self.model.nonzero_rows()
    }

    /// The names of feature ids (hashed models: '#<bucket>').
    fn tokens_of<'py>(&self, py: Python<'py>, ids: Vec<u32>) -> PyResult<Bound<'py, PyList>> {
        guard(|| feature_names(py, &self.space, &ids))
    }

    /// The ids of tokens (-1: unknown; hashed models: their buckets).
    fn find(&self, tokens: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
        guard(|| find_ids(&self.space, tokens))
    }

    /// The true weights of some features, row-major (n x (K-1)) float64 bytes, and the biases.
    fn weights<'py>(&self, py: Python<'py>, ids: Vec<u32>) -> PyResult<(Bound<'py, PyByteArray>, Vec<f64>)> {
        guard(|| {
            let rows: Vec<f64> = ids.iter().flat_map(|&id| self.model.row(id)).collect();
            Ok((f64_bytes(py, &rows)?, self.model.bias().to_vec()))
        })
    }

    /// The model as a file stores it: (ids, stored weights, AdaGrad sums) of the nonzero rows
    /// as bytes (u32, f64, f64), the biases and their sums, the global scale, the steps, for
    /// an exact vocabulary the keys of its tokens in id order (bytes, u32 ends), and with an
    /// IDF the documents counted and the rows' document frequencies (f64 bytes).
    #[allow(clippy::type_complexity)]
    fn state<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(
        Bound<'py, PyBytes>,
        Bound<'py, PyByteArray>,
        Bound<'py, PyByteArray>,
        (Vec<f64>, Vec<f64>),
        f64,
        u64,
        Option<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)>,
        Option<(f64, Bound<'py, PyByteArray>)>,
    )> {
        guard(|| {
            let ids = self.model.saved_rows();
            let doc_freqs = if self.model.settings.idf_power > 0.0 {
                Some((self.model.docs, f64_bytes(py, &self.model.doc_freqs(&ids))?))
            } else {
                None
            };
            let (weights, squares) = self.model.export_rows(&ids);
            let id_bytes: Vec<u8> = ids.iter().flat_map(|id| id.to_le_bytes()).collect();
            let keys = match self.space.vocabulary() {
                Some(v) => {
                    let n = v.capacity() as u32;
                    let tokens = (0..n)
                        .map(|id| v.token(id).ok_or_else(|| error(ErrorKind::Internal, "a free id")))
                        .collect::<PyResult<Vec<&[u8]>>>()?;
                    Some(key_arrays(py, tokens.into_iter())?)
                }
                None => None,
            };
            Ok((
                PyBytes::new(py, &id_bytes),
                f64_bytes(py, &weights)?,
                f64_bytes(py, &squares)?,
                self.model.export_bias(),
                self.model.scale,
                self.model.steps,
                keys,
                doc_freqs,
            ))
        })
    }

    /// Restore a model saved by `state` (this one is new: its labels given in order,
    /// class_docs per label; `doc_freqs` exactly when it has an IDF). Raises
    /// ModelFormatError for anything inconsistent.
    #[allow(clippy::too_many_arguments)]
    fn load(
        &mut self,
        labels: &Bound<'_, PyList>,
        class_docs: Vec<f64>,
        ids: &[u8],
        weights: &[u8],
        squares: &[u8],
        bias: (Vec<f64>, Vec<f64>),
        scale: f64,
        steps: u64,
        keys: Option<(Vec<u8>, &[u8])>,
        doc_freqs: Option<(f64, &[u8])>,
    ) -> PyResult<()> {
        guard(|| {
            let bad = |what: &str| error(ErrorKind::ModelFormat, what.to_string());
            let (ids, weights, squares) = (
                little_endian_u32(ids)?,
                little_endian_f64(weights)?,
                little_endian_f64(squares)?,
            );
            let keys = match keys {
                Some((bytes, ends)) => Some((bytes, little_endian_u32(ends)?)),
                None => None,
            };
            if self.labels.len() != 0 {
                return Err(bad("load needs a new model"));
            }
            if class_docs.len() != labels.len() || class_docs.iter().any(|&n| !(n.is_finite() && n >= 0.0)) {
                return Err(bad("class_docs must hold one finite count >= 0 per label"));
            }
            for label in labels.iter() {
                if self.labels.class_of(&label)?.is_some() {
                    return Err(bad("a label is listed twice"));
                }
                self.class_or_add(&label)?;
            }
            if !labels.is_empty() {
                Self::reach(&mut self.model, labels.len() - 1);
            }
            self.class_docs = class_docs;
            let schedule = self.model.settings.schedule;
            check_state(schedule, labels.len(), ids.len(), &weights, &squares, &bias, scale).map_err(bad)?;
            match (&mut self.space, keys) {
                (Features::Exact(vocabulary), Some((bytes, ends))) => {
                    *vocabulary = Vocabulary::from_keys(&bytes, &ends).map_err(|e| bad(&e))?;
                }
                (Features::Hashed(_), None) => {}
                _ => return Err(bad("the vocabulary does not match n_buckets")),
            }
            let capacity = self.space.capacity();
            if ids.iter().any(|&id| id as usize >= capacity) || ids.windows(2).any(|w| w[0] >= w[1]) {
                return Err(bad("feature ids must be increasing and inside the vocabulary"));
            }
            self.model.reserve_rows(capacity);
            self.model.import_rows(&ids, &weights, &squares);
            self.model.import_bias(&bias.0, &bias.1);
            self.model.scale = scale;
            self.model.steps = steps;
            match doc_freqs {
                Some((docs, freqs)) if self.model.settings.idf_power > 0.0 => {
                    let freqs = little_endian_f64(freqs)?;
                    check_doc_freqs(docs, &freqs, ids.len()).map_err(bad)?;
                    self.model.import_doc_freqs(docs, &ids, &freqs);
                }
                None if self.model.settings.idf_power == 0.0 => {}
                _ => return Err(bad("document frequencies are saved exactly when idf_power > 0")),
            }
            self.reader.forget();
            self.version += 1;
            Ok(())
        })
    }

    /// |V| for an exact vocabulary; features with a weight for a hashed model.
    fn n_features(&self) -> usize {
        match self.space.vocabulary() {
            Some(v) => v.len(),
            None => self.model.nonzero_rows().len(),
        }
    }

    /// Bytes held in the core (weights, AdaGrad sums, vocabulary, the last document read).
    fn nbytes(&self) -> usize {
        self.model.heap_bytes()
            + self.records.as_ref().map_or(0, Records::heap_bytes)
            + self.space.vocabulary().map_or(0, Vocabulary::heap_bytes)
            + self.class_docs.capacity() * 8
            + self.reader.heap_bytes()
    }
}
