//! The model's errors (`NbError`, `StoreError`, `EvidenceError`) as the `streamnb.errors`
//! exceptions that name what was wrong: the features and classes by their Python names.

use super::errors::{error, Kind};
use super::keys::{doc_feature_name, feature_names};
use super::labels::Labels;
use super::values::{describe, g, repr};
use crate::doc::Doc;
use crate::nb::NbError;
use crate::smoothing::EvidenceError;
use crate::space::Features;
use crate::store::StoreError;
use pyo3::prelude::*;
use pyo3::types::PyList;

/// An error of the model as the Python exception that names what was wrong.
pub fn nb_error(
    py: Python<'_>,
    space: &Features,
    labels: &Labels,
    e: NbError,
    x: &Bound<'_, PyAny>,
    doc: Option<&Doc>,
    row: Option<usize>,
) -> PyErr {
    match e {
        NbError::EmptyDocument => match row {
            Some(row) => error(
                Kind::InvalidInput,
                format!("empty document at row {row}: no feature above the threshold"),
            ),
            None => error(
                Kind::InvalidInput,
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
                    if let Ok(t) = doc_feature_name(py, space, doc, i) {
                        let _ = names.append(t);
                    }
                }
            }
            error(
                Kind::InvalidInput,
                format!("cannot unlearn feature(s) {}: never learned", repr(&names.into_any())),
            )
        }
        NbError::StampNeeded => error(
            Kind::InvalidInput,
            "this model has dropped features (pruning, or a merged model's), so only when a \
             message was learned tells which counts still hold it: keep a ledger that holds the \
             message, or give unlearn_one / unlearn_many its stamp (learned_at=, the n_learned \
             right after it was learned)",
        ),
        NbError::VocabularyFull => error(
            Kind::InvalidInput,
            "the vocabulary is full (2^32 - 1 ids or 4 GiB of token bytes)",
        ),
        NbError::MergeForgotten { learned_at } => error(
            Kind::InvalidInput,
            format!(
                "cannot unlearn the document learned at {learned_at} exactly: it was merged in from a model \
                 that had pruned, and which features it still holds was forgotten to bound memory \
                 (a model keeps max({}, 2 x its features) merged exceptions)",
                crate::store::MERGED_EXCEPTIONS_BUDGET
            ),
        ),
        NbError::Evidence(e) => evidence_error(e),
        NbError::Store(e) => store_error(py, space, labels, e),
    }
}

fn store_error(py: Python<'_>, space: &Features, labels: &Labels, e: StoreError) -> PyErr {
    match e {
        StoreError::NegativeCounts { class, ids } => {
            let names = feature_names(py, space, &ids)
                .map(|l| repr(&l.into_any()))
                .unwrap_or_default();
            error(
                Kind::InvalidInput,
                format!(
                    "counts of feature(s) {names} in class {} would become negative: they were never learned \
                     with that much weight",
                    repr(&labels.label(py, class))
                ),
            )
        }
        StoreError::TooFewDocuments { class, has, remove } => error(
            Kind::InvalidInput,
            format!(
                "class {} has {} documents; cannot remove {}",
                repr(&labels.label(py, class)),
                g(py, has),
                g(py, remove)
            ),
        ),
        StoreError::CellsWithoutDocuments { class, left } => {
            let label = repr(&labels.label(py, class));
            error(
                Kind::InvalidInput,
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
            let label = repr(&labels.label(py, class));
            error(
                Kind::InvalidInput,
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
                Some(c) => format!("class {}", repr(&labels.label(py, c))),
                None => "a new class".to_string(),
            };
            error(
                Kind::InvalidInput,
                format!(
                    "counts of {label} would overflow (weight x values too large: {} tokens, {} documents)",
                    g(py, tokens),
                    g(py, docs)
                ),
            )
        }
        StoreError::ClockFull => error(
            Kind::InvalidInput,
            "the model has learned 2^32 - 2 documents, the most its document clock counts",
        ),
    }
}

pub fn unknown_class(label: &Bound<'_, PyAny>) -> PyErr {
    error(
        Kind::UnknownClass,
        format!("cannot unlearn from class {}: it was never learned", repr(label)),
    )
}

pub fn evidence_error(e: EvidenceError) -> PyErr {
    match e {
        EvidenceError::DifferentCandidates => error(
            Kind::IncompatibleModels,
            "cannot merge models that choose their smoothing among different candidates (or only one of them chooses)",
        ),
        EvidenceError::Malformed(message) => error(Kind::ModelFormat, message),
    }
}
