//! The naive Bayes models over one count store: every formula of docs/design.md section 2 that
//! the discrete models use, written once, next to the code that evaluates it.
//!
//! A `NaiveBayes` holds the vocabulary (or feature hashing), the count store and the
//! sums derived from the counts that predictions need (Bernoulli's absent-word sums,
//! ComplementNB's normaliser). Learning, unlearning and merging change counts only through
//! `update`/`remove`, which keep the derived sums in step. Smoothing (`Smoothing`: alpha,
//! and mu for Dirichlet smoothing) is an argument of every prediction, so a view with another
//! alpha shares the counts, and one read of a document's counts scores it under several
//! smoothings at once (`joint_log_likelihoods`, what `alpha="auto"` needs: src/smoothing.rs).
//!
//! Split by concern, each file with its own `impl NaiveBayes`: this file holds the model, its
//! classes, prior and documents; `scorer` the per-feature formulas (`Scorer`, `LnGrid`);
//! `predict` scoring; `auto` smoothing chosen online; `sums` the derived sums (absent-word
//! sums, the complement normaliser); `learn`, `unlearn`, `forget` (decay, rescale, pruning)
//! and `merge` the count changes.

use crate::doc::{Doc, UNKNOWN};
pub use crate::smoothing::Smoothing;
use crate::smoothing::{AutoSmoothing, EvidenceError};
pub use crate::space::{Encoder, Features};
use crate::store::{MergedPruning, Store, StoreError};
use crate::vocab::{bucket, VocabularyError};
/// Hash maps keyed by feature ids inside one call (no seed needed: the keys are ours).
type HashMap<K, V> = hashbrown::HashMap<K, V, foldhash::fast::FixedState>;

mod auto;
mod forget;
mod learn;
mod merge;
mod predict;
mod scorer;
mod sums;
#[cfg(test)]
pub(crate) mod tests;
mod unlearn;

pub use scorer::{LnGrid, LN_TABLE_SIZE};

/// The sums a complement model re-derives exactly (O(|V| K)) after this many incremental
/// updates: each update adds about one rounding error to a running sum, whatever its size.
pub const REDERIVE_EVERY: u64 = 50_000;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// Multinomial; with `mu`, Dirichlet-prior smoothing toward the pooled distribution
    /// (the model's fixed mu: with mu chosen online, None here and each candidate's own).
    Multinomial { mu: Option<f64> },
    /// Bernoulli; a feature is present when its value exceeds `binarize`.
    Bernoulli { binarize: f64 },
    /// Complement (Rennie et al. 2003); `norm` for weight normalisation.
    Complement { norm: bool },
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Prior {
    Mle,
    Laplace,
    Uniform,
    /// A fixed prior: per-class weights given when each class is added.
    Fixed,
}

/// Why an operation was refused (nothing changed).
#[derive(Debug, PartialEq)]
pub enum NbError {
    Store(StoreError),
    /// No feature above the threshold in a document to learn.
    EmptyDocument,
    /// Features to unlearn that are not in V (their indices in the document, up to 3).
    NeverLearned {
        features: Vec<usize>,
    },
    /// An unlearning without the document's stamp on a model that has dropped features (or
    /// merged one that had): which counts still hold the document cannot be told.
    StampNeeded,
    /// A document merged in from a model that had pruned, whose record of the features it
    /// still holds was forgotten (`Store::add_merged_pruning`): it cannot be unlearned exactly.
    MergeForgotten {
        learned_at: u64,
    },
    /// The vocabulary cannot take the new tokens.
    VocabularyFull,
    /// Evidence that cannot be merged (models choosing among other candidates, or only one choosing).
    Evidence(EvidenceError),
}

impl From<StoreError> for NbError {
    fn from(e: StoreError) -> Self {
        NbError::Store(e)
    }
}

impl From<VocabularyError> for NbError {
    fn from(_: VocabularyError) -> Self {
        NbError::VocabularyFull
    }
}

/// Class prior, log P(c) for every class from the class counts N_c; classes with N_c = 0
/// are inactive and get -inf.
///
/// mle: log N_c - log N; laplace: log(N_c + 1) - log(N + K); uniform: -log K; fixed:
/// log p_c - log(sum of p over the active classes); K = the number of active classes.
pub fn class_log_prior(counts: &[f64], prior: Prior, fixed_weights: &[f64], out: &mut Vec<f64>) {
    out.clear();
    let mut total = 0.0;
    let mut all_active = true;
    for (c, &n) in counts.iter().enumerate() {
        let active = n > 0.0;
        all_active &= active;
        let weight = match prior {
            Prior::Mle => n,
            Prior::Laplace if active => n + 1.0,
            Prior::Uniform if active => 1.0,
            Prior::Fixed if active => fixed_weights.get(c).copied().unwrap_or(0.0),
            _ => 0.0,
        };
        total += weight;
        out.push(weight);
    }
    let log_total = total.ln();
    for (c, w) in out.iter_mut().enumerate() {
        *w = if total > 0.0 && (all_active || counts[c] > 0.0) {
            w.ln() - log_total
        } else {
            f64::NEG_INFINITY
        };
    }
}

/// log P(c | x) = jll_c - logsumexp(jll) (or jll itself, `normalise` false). When every
/// class is ruled out (jll = -inf everywhere: alpha = 0 and each class has a zero count
/// for some word), the class prior alone decides.
pub fn log_posterior(jll: &mut Vec<f64>, log_prior: impl FnOnce() -> Vec<f64>, normalise: bool) {
    if !jll.iter().any(|&v| v > f64::NEG_INFINITY) {
        *jll = log_prior();
    }
    if normalise {
        let total = logsumexp(jll);
        jll.iter_mut().for_each(|v| *v -= total);
    }
}

/// log-sum-exp of the values (the max itself when it is not finite, NaN included).
pub fn logsumexp(values: &[f64]) -> f64 {
    let mut top = f64::NEG_INFINITY;
    for &v in values {
        if v.is_nan() {
            return f64::NAN;
        }
        if v > top {
            top = v;
        }
    }
    if !top.is_finite() {
        return top;
    }
    top + values.iter().map(|&v| (v - top).exp()).sum::<f64>().ln()
}

/// The index of the largest value, the first one on ties; NaN counts as the largest.
pub fn argmax(values: &[f64]) -> usize {
    let mut best = 0;
    for (i, &v) in values.iter().enumerate() {
        if v.is_nan() {
            return i;
        }
        if v > values[best] {
            best = i;
        }
    }
    best
}

#[derive(Clone, Debug)]
struct AbsentSum {
    alpha: u64,
    scale: u64,
    version: u64,
    total: f64,
    n_seen: f64,
}

#[derive(Clone, Debug)]
struct Normaliser {
    alpha: u64,
    scale: u64,
    versions: Vec<u64>,
    /// L_c = sum over k in V of log(F_notc,k + alpha), per class.
    sums: Vec<f64>,
    /// L of a class with no counts: sum over k in V of log(total_k + alpha).
    zero_sum: f64,
    updates: u64,
}

/// The features a learned document contributes: their positions in it and learned values.
type Present = (Vec<usize>, Vec<f64>);

/// A document's known features (id, value) and what its unknown ones add up to.
pub struct Known {
    pub ids: Vec<u32>,
    pub values: Vec<f64>,
    /// Index in the document of each known feature.
    pub positions: Vec<usize>,
    pub unseen_sum: f64,
    pub unseen_present: usize,
}

impl Known {
    /// Keep only the features with a value > 0.
    pub fn retain_positive(&mut self) {
        let mut kept = 0;
        for i in 0..self.ids.len() {
            if self.values[i] > 0.0 {
                self.ids[kept] = self.ids[i];
                self.values[kept] = self.values[i];
                self.positions[kept] = self.positions[i];
                kept += 1;
            }
        }
        self.ids.truncate(kept);
        self.values.truncate(kept);
        self.positions.truncate(kept);
    }
}

/// What `merge` reads of another model (true counts; keys None for hashed models).
pub struct Snapshot {
    pub keys: Option<Vec<Vec<u8>>>,
    pub ids: Vec<u32>,
    pub born: Vec<u64>,
    pub last_seen: Vec<u64>,
    /// (index into ids, class, tokens, docs)
    pub cells: Vec<(usize, usize, f64, f64)>,
    pub class_docs: Vec<f64>,
    pub class_tokens: Vec<f64>,
    pub n_learned: u64,
    pub pruned_at: u64,
    pub merged_prunings: Vec<MergedPruning>,
    pub forgotten_merges: Vec<(u64, u64)>,
    /// Its smoothing candidates and their evidence (models choosing online).
    pub auto: Option<AutoSmoothing>,
}

/// A document's score split by known feature: jll_c = rest[c] + sum_i terms[i][c].
pub struct Contributions {
    pub ids: Vec<u32>,
    pub positions: Vec<usize>,
    /// Row-major (features x classes).
    pub terms: Vec<f64>,
    pub rest: Vec<f64>,
}

pub struct NaiveBayes {
    pub features: Features,
    pub store: Store,
    pub kind: Kind,
    pub unseen_score: bool,
    pub prior: Prior,
    prior_weights: Vec<f64>,
    pub empty_learn: bool,
    absent: Vec<Vec<AbsentSum>>,
    normalisers: Vec<Normaliser>,
    /// How many times a complement normaliser was derived from scratch (for the tests).
    pub derivations: u64,
    /// Smoothing chosen online among candidates (None: every call names its alpha).
    pub auto: Option<AutoSmoothing>,
    /// The candidates' alphas and their log table (`LnGrid`).
    candidate_logs: LnGrid,
}

impl NaiveBayes {
    pub fn new(
        kind: Kind,
        prior: Prior,
        unseen_score: bool,
        empty_learn: bool,
        n_buckets: Option<u32>,
        dense_max_classes: usize,
    ) -> Self {
        let histograms = matches!(kind, Kind::Bernoulli { .. });
        NaiveBayes {
            features: Features::new(n_buckets),
            store: Store::new(dense_max_classes, histograms),
            kind,
            unseen_score,
            prior,
            prior_weights: Vec::new(),
            empty_learn,
            absent: Vec::new(),
            normalisers: Vec::new(),
            derivations: 0,
            auto: None,
            candidate_logs: LnGrid::default(),
        }
    }

    pub fn n_classes(&self) -> usize {
        self.store.n_classes()
    }

    /// Add a class (fixed prior: its weight); returns its index.
    pub fn add_class(&mut self, prior_weight: f64) -> usize {
        self.prior_weights.push(prior_weight);
        self.store.add_class()
    }

    pub fn prior_weights(&self) -> &[f64] {
        &self.prior_weights
    }

    /// Classes with at least one document (N_c > 0), in index order.
    pub fn active(&self) -> Vec<usize> {
        (0..self.n_classes())
            .filter(|&c| self.store.class_docs()[c] > 0.0)
            .collect()
    }

    /// Class prior, log P(c) for every class (see `class_log_prior`).
    pub fn log_prior(&self, out: &mut Vec<f64>) {
        let counts: Vec<f64> = (0..self.n_classes()).map(|c| self.store.true_class_docs(c)).collect();
        class_log_prior(&counts, self.prior, &self.prior_weights, out);
    }

    /// The value above which a feature counts as present in a document.
    fn threshold(&self) -> f64 {
        match self.kind {
            Kind::Bernoulli { binarize } => binarize,
            _ => 0.0,
        }
    }

    /// The document's known features (resolved first).
    pub fn known(&self, doc: &mut Doc) -> Known {
        self.features.resolve(doc);
        let threshold = self.threshold();
        let mut known = Known {
            ids: Vec::with_capacity(doc.len()),
            values: Vec::with_capacity(doc.len()),
            positions: Vec::with_capacity(doc.len()),
            unseen_sum: 0.0,
            unseen_present: 0,
        };
        let hashed = matches!(self.features, Features::Hashed(_));
        for (i, (&id, &value)) in doc.ids.iter().zip(&doc.values).enumerate() {
            let inside = if hashed { self.store.known(id) } else { id != UNKNOWN };
            if inside {
                known.ids.push(id);
                known.values.push(value);
                known.positions.push(i);
            } else {
                known.unseen_sum += value;
                known.unseen_present += (value > threshold) as usize;
            }
        }
        known
    }

    /// The features a learned document contributes: positions of the present ones (value
    /// above the threshold) and their learned values (Bernoulli: 1).
    fn present(&self, doc: &Doc) -> Present {
        let threshold = self.threshold();
        let binary = matches!(self.kind, Kind::Bernoulli { .. });
        let mut positions = Vec::with_capacity(doc.len());
        let mut values = Vec::with_capacity(doc.len());
        for (i, &v) in doc.values.iter().enumerate() {
            if v > threshold {
                positions.push(i);
                values.push(if binary { 1.0 } else { v });
            }
        }
        (positions, values)
    }

    /// Bytes this model holds in the core.
    pub fn heap_bytes(&self) -> usize {
        let vocabulary = self
            .features
            .vocabulary()
            .map_or(0, crate::vocab::Vocabulary::heap_bytes);
        let normalisers: usize = self
            .normalisers
            .iter()
            .map(|n| n.sums.capacity() * 8 + n.versions.capacity() * 8)
            .sum();
        let auto = self.auto.as_ref().map_or(0, AutoSmoothing::heap_bytes) + self.candidate_logs.heap_bytes();
        vocabulary + self.store.heap_bytes() + normalisers + self.prior_weights.capacity() * 8 + auto
    }
}

/// A model's feature id for a key under hashing.
pub fn bucket_of(key: &[u8], n_buckets: u32) -> u32 {
    bucket(key, n_buckets)
}
