//! A `LogisticCore`'s records (`crate::records`): the steps it took per message, and the
//! documents of the newest, for `streamnb.LogisticRegression(ledger=...)` and a
//! `streamnb.models.Fusion`'s `records` (whose stacker steps are kept beside them). The
//! unlearning by replay is `crate::replay`; this converts and checks.

use super::errors::{error, Kind as ErrorKind};
use super::logistic::{little_endian, little_endian_f64, ClassWeight, LogisticCore};
use super::values::f64_bytes;
use crate::doc::{Doc, UNKNOWN};
use crate::feedback::PROVISIONAL_RATE;
use crate::fusion::Fusion;
use crate::logistic::Step;
use crate::records::{Entry, Fingerprint, Records, Stacked, FINGERPRINT_BYTES};
use crate::replay::{self, stacked_step, ClassWeighing, Learner, Stacking};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes};
use std::collections::HashSet;

/// A record as Python reads it: (class index or None, weight, g, decay, (input_nb, input_lr,
/// g) or None, seen_at, has its document).
pub(super) type RecordView = (Option<usize>, f64, Vec<f64>, f64, Option<(f64, f64, f64)>, u64, bool);

fn view(entry: &Entry) -> RecordView {
    (
        entry.class,
        entry.weight,
        entry.step.g.clone(),
        entry.step.decay,
        entry.stacker.map(|s| (s.inputs[0], s.inputs[1], s.g)),
        entry.seen_at,
        entry.has_document(),
    )
}

/// The little-endian i64 values of a model file's array (its raw bytes).
fn little_endian_i64(bytes: &[u8]) -> PyResult<Vec<i64>> {
    little_endian(bytes, "int64", i64::from_le_bytes)
}

/// The records as `export_records` gives them to Python (see there).
pub(super) type RecordsState<'py> = (
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Bound<'py, PyByteArray>,
    Bound<'py, PyByteArray>,
    Bound<'py, PyByteArray>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Bound<'py, PyByteArray>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
);

fn i64_bytes<'py>(py: Python<'py>, values: &[i64]) -> Bound<'py, PyBytes> {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    PyBytes::new(py, &bytes)
}

/// A message's fingerprint from Python bytes; InvalidInputError for another length.
pub(super) fn fingerprint(bytes: &[u8]) -> PyResult<Fingerprint> {
    bytes.try_into().map_err(|_| {
        error(
            ErrorKind::InvalidInput,
            format!("a fingerprint is {FINGERPRINT_BYTES} bytes, got {}", bytes.len()),
        )
    })
}

/// The known features of a read document (ids, values): what an undo reads.
fn known(doc: &Doc) -> (Vec<u32>, Vec<f64>) {
    (0..doc.len())
        .filter(|&i| doc.ids[i] != UNKNOWN)
        .map(|i| (doc.ids[i], doc.values[i]))
        .unzip()
}

/// A model file's record arrays, as `export_records` writes them (little-endian bytes).
pub(super) struct RecordArrays<'a> {
    pub fingerprints: &'a [u8],
    /// The classes as the file numbers them (-1: none), and `class_map`: logistic
    /// regression's class of each (-1: one it does not know).
    pub classes: &'a [u8],
    pub class_map: &'a [i64],
    pub weights: &'a [u8],
    pub g: &'a [u8],
    pub decays: &'a [u8],
    pub stamps: &'a [u8],
    /// None for a file from before they were kept (the classes the model knows).
    pub known: Option<&'a [u8]>,
    /// None for a model without a stacker.
    pub stacker: Option<&'a [u8]>,
    /// (lengths, bytes); None for a file from before documents were kept.
    pub documents: Option<(&'a [u8], &'a [u8])>,
    /// A fusion's clock of messages seen: every record of a message observed without a
    /// label has its own stamp, at most the clock, and no stacker step (only a lesson has
    /// one). None: a model without that clock.
    pub clock: Option<u64>,
}

impl LogisticCore {
    pub(super) fn records(&self) -> PyResult<&Records> {
        self.records
            .as_ref()
            .ok_or_else(|| error(ErrorKind::InvalidInput, "this model keeps no records of its steps"))
    }

    fn records_mut(&mut self) -> PyResult<&mut Records> {
        self.records
            .as_mut()
            .ok_or_else(|| error(ErrorKind::InvalidInput, "this model keeps no records of its steps"))
    }

    /// Keep a lesson's step with the document it read.
    pub(super) fn keep_lesson(&mut self, fp: Fingerprint, c: usize, weight: f64, step: Step, doc: &Doc) {
        if let Some(records) = self.records.as_mut() {
            let entry = Entry::new(Some(c), weight, step, 0, self.model.n_classes());
            records.keep(fp, entry, Some((&doc.ids, &doc.values)));
        }
    }

    /// The stacker step a fusion took on a message whose lesson is kept.
    pub(super) fn attach_stacker(&mut self, fp: &Fingerprint, stacked: Stacked) {
        if let Some(entry) = self.records.as_mut().and_then(|r| r.get_mut(fp)) {
            entry.stacker = Some(stacked);
        }
    }

    /// A message seen without a label, stamped `stamp`: its provisional lesson (label,
    /// weight) taken at the provisional rate and kept with its document, or none (kept as
    /// delivered). Returns the lesson's g (empty: none).
    pub(super) fn observe_message(
        &mut self,
        x: &Bound<'_, PyAny>,
        fp: Fingerprint,
        stamp: u64,
        lesson: Option<(Bound<'_, PyAny>, f64)>,
        delivered: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Vec<f64>> {
        if stamp == 0 {
            return Err(error(ErrorKind::InvalidInput, "an observed message's stamp is > 0"));
        }
        self.records()?;
        let fp_stamp = Some((fp, stamp));
        match lesson {
            Some((label, weight)) => self.provisional_doc(x, &label, weight, PROVISIONAL_RATE, fp_stamp),
            None => {
                let class = match delivered {
                    Some(label) => self.labels.class_of(&label)?,
                    None => None,
                };
                let entry = Entry::new(
                    class,
                    1.0,
                    Step {
                        g: Vec::new(),
                        decay: 1.0,
                    },
                    stamp,
                    self.model.n_classes(),
                );
                self.records_mut()?.keep(fp, entry, None);
                Ok(Vec::new())
            }
        }
    }

    /// How each class weighs in the gradient now (a replay's lessons).
    fn weighing(&self, py: Python<'_>) -> PyResult<ClassWeighing> {
        Ok(match &self.class_weight {
            ClassWeight::Balanced => ClassWeighing::Balanced,
            ClassWeight::Equal => ClassWeighing::Fixed(vec![1.0; self.labels.len()]),
            ClassWeight::Fixed(_) => ClassWeighing::Fixed(
                (0..self.labels.len())
                    .map(|c| self.fixed_weight(&self.labels.label(py, c)))
                    .collect::<PyResult<_>>()?,
            ),
        })
    }

    /// Unlearn the message x whose lesson is kept (fingerprint `fp`): by replay when its
    /// document is kept (`crate::replay`), else its kept step undone (and a fusion's stacker
    /// step, `stacking`); its record forgotten. Checked first: an error changes nothing.
    pub(super) fn unlearn_record(
        &mut self,
        x: &Bound<'_, PyAny>,
        fp: Fingerprint,
        stacking: Option<(&mut Fusion, [usize; 2])>,
    ) -> PyResult<()> {
        let py = x.py();
        let entry = self
            .records()?
            .get(&fp)
            .cloned()
            .ok_or_else(|| error(ErrorKind::InvalidInput, "this message's steps are not kept"))?;
        let Some(c) = entry.class.filter(|_| entry.is_lesson()) else {
            return Err(error(
                ErrorKind::InvalidInput,
                "this message was observed without a label and never learned: nothing to unlearn",
            ));
        };
        if entry.has_document() {
            let weighing = self.weighing(py)?;
            let mut records = self.records.take().unwrap_or_else(|| Records::new(0, 0));
            let mut learner = Learner {
                model: &mut self.model,
                class_docs: &mut self.class_docs,
                weighing,
            };
            let stacking = stacking.map(|(fusion, classes)| Stacking { fusion, classes });
            let done = replay::unlearn(&mut records, &fp, &mut learner, stacking);
            self.records = Some(records);
            done.map_err(|m| error(ErrorKind::InvalidInput, m))?;
            self.version += 1;
            return Ok(());
        }
        let stacked = match (&entry.stacker, stacking) {
            (Some(stacked), Some((fusion, pair))) => {
                fusion
                    .stacker
                    .check_step(&stacked_step(stacked))
                    .map_err(|m| error(ErrorKind::InvalidInput, m))?;
                Some((fusion, *stacked, c == pair[1]))
            }
            _ => None,
        };
        let label = self.labels.label(py, c);
        self.take_back(x, &label, entry.weight, Some(entry.step.clone()))?;
        if let Some((fusion, stacked, positive)) = stacked {
            fusion
                .undo(stacked.inputs, &stacked_step(&stacked), positive)
                .map_err(|m| error(ErrorKind::InvalidInput, m))?;
        }
        self.records_mut()?.forget(&fp);
        Ok(())
    }

    /// Take back exactly the provisional lesson of the observed message x (`fp`), when it
    /// took one (the move was rate g x: taken back as such, whatever came after), and forget
    /// its record; returns its stamp.
    pub(super) fn take_back_observed(&mut self, x: &Bound<'_, PyAny>, fp: Fingerprint) -> PyResult<u64> {
        let records = self.records()?;
        let entry = records
            .get(&fp)
            .cloned()
            .filter(|e| !e.is_lesson())
            .ok_or_else(|| error(ErrorKind::InvalidInput, "this message was not observed without a label"))?;
        if entry.step.moved() {
            let c = entry
                .class
                .ok_or_else(|| error(ErrorKind::Internal, "a provisional lesson without a class"))?;
            self.model
                .check_step(&Step {
                    g: entry.step.g.clone(),
                    decay: self.model.decay(),
                })
                .map_err(|m| error(ErrorKind::InvalidInput, m))?;
            let (ids, values) = match records.document(&entry) {
                Some(doc) => {
                    doc.map_err(|m| error(ErrorKind::InvalidInput, format!("a kept document is damaged: {m}")))?
                }
                None => {
                    let mut reading = self.reader.read(&self.space, x)?;
                    self.space.resolve(&mut reading.doc);
                    let doc = known(&reading.doc);
                    self.reader.keep(x, reading)?;
                    doc
                }
            };
            debug_assert!(c < self.model.n_classes());
            self.model
                .undo_provisional(&ids, &values, &entry.step, PROVISIONAL_RATE);
            self.version += 1;
        }
        self.records_mut()?.forget(&fp);
        Ok(entry.seen_at)
    }

    /// A record as Python reads it, or None.
    pub(super) fn record_view(&self, fp: &Fingerprint) -> PyResult<Option<RecordView>> {
        Ok(self.records()?.get(fp).map(view))
    }

    /// Every record, oldest first: (fingerprint, view).
    pub(super) fn record_views<'py>(&self, py: Python<'py>) -> PyResult<Vec<(Bound<'py, PyBytes>, RecordView)>> {
        Ok(self
            .records()?
            .iter()
            .map(|(fp, entry)| (PyBytes::new(py, fp), view(entry)))
            .collect())
    }

    /// The first fingerprint both models keep, or None.
    pub(super) fn shared_fingerprint<'py>(&self, py: Python<'py>, other: &LogisticCore) -> Option<Bound<'py, PyBytes>> {
        let (Some(mine), Some(theirs)) = (&self.records, &other.records) else {
            return None;
        };
        theirs
            .iter()
            .find(|(fp, _)| mine.get(fp).is_some())
            .map(|(fp, _)| PyBytes::new(py, fp))
    }

    /// After a merge: other's lessons' records join this model's as the newest (its classes
    /// by `classes`, other's class k being this one's classes[k]; a message both keep takes
    /// other's record: a `LogisticRegression`'s ledger refuses such a merge before, a
    /// fusion's naive Bayes ledger too when it has one), and the window empties: a replay
    /// cannot cross the mixing (`Logistic::mix`), so every kept step is undone as it was
    /// taken from now on. Other's messages seen without a label are not taken: their stamps
    /// are on the other fusion's clock, and their provisional lessons stay in the weights
    /// as the mixing scaled them (a label that comes for one is learned as a new message).
    pub(super) fn merge_records(&mut self, theirs: Option<Vec<(Fingerprint, Entry)>>, classes: &[usize]) {
        let Some(records) = self.records.as_mut() else {
            return;
        };
        for (fp, mut entry) in theirs.unwrap_or_default() {
            if !entry.is_lesson() {
                continue;
            }
            entry.class = entry.class.and_then(|k| classes.get(k).copied());
            records.keep(fp, entry, None);
        }
        records.drop_documents();
    }

    /// The records as a model file keeps them, oldest first: (fingerprints, class indices
    /// (-1: none), weights, g (one row per record, K-1 columns, zeros where a class came
    /// later or the step did not move), decays, stamps, the classes known at each step,
    /// stacker steps (three per record, zeros for none), document lengths (0: none),
    /// documents). See `crate::records`.
    pub(super) fn export_records<'py>(&self, py: Python<'py>) -> PyResult<RecordsState<'py>> {
        let records = self.records()?;
        let cols = self.model.n_classes().saturating_sub(1);
        let entries: Vec<&(Fingerprint, Entry)> = records.iter().collect();
        let fingerprints: Vec<u8> = entries.iter().flat_map(|(fp, _)| fp.iter().copied()).collect();
        let classes: Vec<i64> = entries.iter().map(|(_, e)| e.class.map_or(-1, |c| c as i64)).collect();
        let weights: Vec<f64> = entries.iter().map(|(_, e)| e.weight).collect();
        let mut g = vec![0.0; entries.len() * cols];
        for (row, (_, e)) in entries.iter().enumerate() {
            for (k, &v) in e.step.g.iter().take(cols).enumerate() {
                g[row * cols + k] = v;
            }
        }
        let decays: Vec<f64> = entries.iter().map(|(_, e)| e.step.decay).collect();
        let stamps: Vec<i64> = entries.iter().map(|(_, e)| e.seen_at as i64).collect();
        let known: Vec<i64> = entries.iter().map(|(_, e)| e.classes as i64).collect();
        let stacker: Vec<f64> = entries
            .iter()
            .flat_map(|(_, e)| e.stacker.map_or([0.0; 3], |s| [s.inputs[0], s.inputs[1], s.g]))
            .collect();
        let (lengths, documents) = records.export_documents();
        Ok((
            PyBytes::new(py, &fingerprints),
            i64_bytes(py, &classes),
            f64_bytes(py, &weights)?,
            f64_bytes(py, &g)?,
            f64_bytes(py, &decays)?,
            i64_bytes(py, &stamps),
            i64_bytes(py, &known),
            f64_bytes(py, &stacker)?,
            i64_bytes(py, &lengths),
            PyBytes::new(py, &documents),
        ))
    }

    /// Records from a model file's arrays (`export_records`; `known` None for a file from
    /// before they were kept (the classes the model knows), `stacker` None for a model
    /// without a stacker, `documents` None for a file from before documents were kept):
    /// this model keeps none yet. ModelFormatError names what is wrong.
    pub(super) fn import_records(
        &mut self,
        max_entries: usize,
        window: usize,
        arrays: RecordArrays<'_>,
    ) -> PyResult<()> {
        let bad = |what: String| error(ErrorKind::ModelFormat, what);
        let classes = little_endian_i64(arrays.classes)?
            .into_iter()
            .map(|c| match c {
                -1 => Some(-1),
                c if c >= 0 => arrays.class_map.get(c as usize).copied(),
                _ => None,
            })
            .collect::<Option<Vec<i64>>>()
            .ok_or_else(|| bad("step record classes out of range".into()))?;
        let m = classes.len();
        let (weights, g, decays, stamps) = (
            little_endian_f64(arrays.weights)?,
            little_endian_f64(arrays.g)?,
            little_endian_f64(arrays.decays)?,
            little_endian_i64(arrays.stamps)?,
        );
        let stacker = match arrays.stacker {
            Some(bytes) => little_endian_f64(bytes)?,
            None => vec![0.0; 3 * m],
        };
        let n_classes = self.model.n_classes();
        let known = match arrays.known {
            Some(bytes) => little_endian_i64(bytes)?,
            None => vec![n_classes as i64; m],
        };
        let cols = n_classes.saturating_sub(1);
        if known.len() != m || known.iter().any(|&k| k < 1 || k as usize > n_classes.max(1)) {
            return Err(bad(format!(
                "step record class counts must be one per record, each in [1, {n_classes}]"
            )));
        }
        if arrays.fingerprints.len() != FINGERPRINT_BYTES * m
            || weights.len() != m
            || g.len() != m * cols
            || decays.len() != m
            || stamps.len() != m
            || stacker.len() != 3 * m
        {
            return Err(bad(format!(
                "the step record arrays must hold {m} records: {FINGERPRINT_BYTES} fingerprint bytes, one weight, \
                 {cols} gradients, one decay, one stamp and three stacker numbers each"
            )));
        }
        if !weights.iter().all(|w| w.is_finite() && *w > 0.0) {
            return Err(bad("step record weights must be finite and > 0".into()));
        }
        if !(g.iter().chain(&stacker).all(|v| v.is_finite())) {
            return Err(bad("step record gradients and inputs must be finite".into()));
        }
        if stamps.iter().any(|&t| t < 0) {
            return Err(bad("step record stamps must be >= 0".into()));
        }
        let decay = self.model.decay();
        let mut entries = Vec::with_capacity(m);
        for i in 0..m {
            let mut row = g[i * cols..(i + 1) * cols].to_vec();
            while row.last() == Some(&0.0) {
                row.pop(); // classes that came after the step (g = 0 changes nothing)
            }
            let seen_at = stamps[i] as u64;
            if !(decays[i] == decay || (seen_at > 0 && decays[i] == 1.0)) {
                return Err(bad(format!(
                    "step record decays must be this model's, {decay:?} (1 for a provisional step)"
                )));
            }
            let class = match classes[i] {
                -1 if seen_at > 0 && row.is_empty() => None,
                c if c >= 0 && (c as usize) < self.labels.len() && c < known[i].max(1) => Some(c as usize),
                _ => return Err(bad("step record classes out of range".into())),
            };
            let s = &stacker[3 * i..3 * i + 3];
            let step = Step {
                g: row,
                decay: decays[i],
            };
            let mut entry = Entry::new(class, weights[i], step, seen_at, known[i] as usize);
            if s.iter().any(|&v| v != 0.0) {
                entry.stacker = Some(Stacked {
                    inputs: [s[0], s[1]],
                    g: s[2],
                });
            }
            let mut fp = [0u8; FINGERPRINT_BYTES];
            fp.copy_from_slice(&arrays.fingerprints[FINGERPRINT_BYTES * i..FINGERPRINT_BYTES * (i + 1)]);
            entries.push((fp, entry));
        }
        if let Some(clock) = arrays.clock {
            let mut stamps = HashSet::new();
            for (_, entry) in entries.iter().filter(|(_, entry)| !entry.is_lesson()) {
                if entry.seen_at > clock || entry.stacker.is_some() {
                    return Err(bad(format!(
                        "a record of a message observed without a label has a stamp above the clock {clock} \
                         or a stacker step"
                    )));
                }
                if !stamps.insert(entry.seen_at) {
                    return Err(bad(
                        "two records of messages observed without a label share a stamp".into()
                    ));
                }
            }
        }
        let lengths = match arrays.documents {
            Some((lengths, _)) => Some(little_endian_i64(lengths)?),
            None => None,
        };
        let documents = lengths.as_deref().zip(arrays.documents.map(|(_, bytes)| bytes));
        let records = Records::import(max_entries, window, entries, documents, self.model.rows()).map_err(bad)?;
        self.records = Some(records);
        Ok(())
    }
}

/// (fingerprint, entry) pairs of a model's records, to hand to another (`merge_records`).
pub(super) fn entries_of(core: &LogisticCore) -> Option<Vec<(Fingerprint, Entry)>> {
    core.records.as_ref().map(|r| r.iter().cloned().collect())
}
