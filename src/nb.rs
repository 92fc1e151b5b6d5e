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

use crate::doc::{Doc, UNKNOWN};
use crate::smoothing::{AutoSmoothing, CandidateScores, EvidenceError};
pub use crate::space::{Encoder, Features};
use crate::store::{MergedPruning, Removal, Store, StoreError, MAX_DOCUMENTS, NEVER};
use crate::vocab::{bucket, VocabularyError};
use std::sync::Arc;
/// Hash maps keyed by feature ids inside one call (no seed needed: the keys are ours).
type HashMap<K, V> = hashbrown::HashMap<K, V, foldhash::fast::FixedState>;

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

/// The smoothing of one prediction: additive `alpha`, and with `mu` (multinomial models
/// only) Dirichlet-prior smoothing toward the pooled distribution smoothed by alpha.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Smoothing {
    pub alpha: f64,
    pub mu: Option<f64>,
}

impl Smoothing {
    pub fn additive(alpha: f64) -> Self {
        Smoothing { alpha, mu: None }
    }
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

/// Reads a feature's row of stored counts (no copy for dense rows) and scales it.
struct RowScratch {
    tokens: Vec<f64>,
    docs: Vec<f64>,
}

impl RowScratch {
    fn new(k: usize) -> Self {
        RowScratch {
            tokens: vec![0.0; k],
            docs: vec![0.0; k],
        }
    }

    /// True (tokens, docs) of feature `id` in every class: a dense row as it stands when
    /// the scale is 1, else a scaled copy.
    #[inline]
    fn read<'a>(&'a mut self, store: &'a Store, id: u32) -> (&'a [f64], &'a [f64]) {
        let scale = store.scale;
        if scale == 1.0 {
            if let Some(row) = store.dense_row(id, self.tokens.len()) {
                return row;
            }
        }
        store.gather(id, &mut self.tokens, &mut self.docs);
        if scale != 1.0 {
            self.tokens
                .iter_mut()
                .chain(self.docs.iter_mut())
                .for_each(|v| *v *= scale);
        }
        (&self.tokens, &self.docs)
    }
}

/// One prediction's per-class constants under each of J smoothings (the candidates of a
/// smoothing chosen online, or the one smoothing of a call); `add_terms` is each model's
/// per-feature formula. Per-class arrays are class-major, "K x J": the J smoothings of class c
/// side by side (so the inner loops run over J contiguous values). Each smoothing's score is
/// computed with the same operations, in the same order, as if it were scored alone.
struct Scorer {
    /// The J alphas, and ln(n + alpha) looked up for small integers n where a table is kept.
    logs: LnGrid,
    terms: Terms,
    /// The Dirichlet backgrounds of one feature, per smoothing.
    scratch: Vec<f64>,
}

enum Terms {
    /// log P(w|c) = log(T_cw + alpha) - denominator_c (additive smoothing); `unseen`: log alpha.
    Additive { denominator: Vec<f64>, unseen: Vec<f64> },
    /// log P(w|c) = log(T_cw + mu P(w)) - denominator_c, mu P(w) = (mu / (T + alpha*|V|))
    /// (T_w + alpha) (Dirichlet: `mu_over_pooled` per smoothing); `unseen`: log(mu P(unseen)).
    Dirichlet {
        mu_over_pooled: Vec<f64>,
        denominator: Vec<f64>,
        unseen: Vec<f64>,
    },
    /// A present word adds log(D_cw + alpha) - log(D_c - D_cw + alpha).
    Bernoulli { binarize: f64, class_docs: Vec<f64> },
    /// x_w theta_cw = x_w (log(T_w - T_cw + alpha) - log_denominator_c), negated or, with
    /// norm, divided by sum_k theta_ck (`sums`).
    Complement {
        log_denominator: Vec<f64>,
        sums: Option<Vec<f64>>,
        n_features: usize,
    },
}

impl Scorer {
    fn new(logs: LnGrid, terms: Terms) -> Self {
        let j = logs.alphas.len();
        Scorer {
            logs,
            terms,
            scratch: vec![0.0; j],
        }
    }

    /// J, the number of smoothings.
    fn width(&self) -> usize {
        self.logs.alphas.len()
    }

    /// Does a feature with value x have a term (Bernoulli: only present words)?
    #[inline]
    fn counts(&self, x: f64) -> bool {
        match &self.terms {
            Terms::Bernoulli { binarize, .. } => x > *binarize,
            _ => true,
        }
    }

    /// acc[c][j] += the term of a known feature with value x and true counts (tokens, docs)
    /// under smoothing j (`acc` is K x J).
    #[inline]
    fn add_terms(&mut self, x: f64, tokens: &[f64], docs: &[f64], acc: &mut [f64]) {
        // compiled twice: for one smoothing (every fixed-alpha prediction, whose loops over J
        // the compiler then drops) and for any number
        if self.width() == 1 {
            self.add_terms_of::<1>(x, tokens, docs, acc);
        } else {
            self.add_terms_of::<0>(x, tokens, docs, acc);
        }
    }

    /// `add_terms` for WIDTH smoothings (0: as many as the scorer has). With one, no table is
    /// read (a fixed alpha has none), so the compiler is left a plain loop over the classes.
    #[inline(always)]
    fn add_terms_of<const WIDTH: usize>(&mut self, x: f64, tokens: &[f64], docs: &[f64], acc: &mut [f64]) {
        let width = if WIDTH == 0 { self.width() } else { WIDTH };
        let logs = &self.logs;
        let row = |t: f64| if WIDTH == 1 { None } else { logs.row(t) };
        let classes = acc.chunks_exact_mut(width);
        match &self.terms {
            Terms::Additive { denominator, .. } => {
                for ((acc, denominator), &t) in classes.zip(denominator.chunks_exact(width)).zip(tokens) {
                    let row = row(t);
                    for (j, (a, &d)) in acc.iter_mut().zip(denominator).enumerate() {
                        *a += x * logs.ln_plus(t, row, j) - x * d;
                    }
                }
            }
            Terms::Dirichlet {
                mu_over_pooled,
                denominator,
                ..
            } => {
                let pooled: f64 = tokens.iter().sum();
                let backgrounds = &mut self.scratch;
                for ((b, &m), &alpha) in backgrounds.iter_mut().zip(mu_over_pooled).zip(&logs.alphas) {
                    *b = m * (pooled + alpha);
                }
                for ((acc, denominator), &t) in classes.zip(denominator.chunks_exact(width)).zip(tokens) {
                    for ((a, &d), &background) in acc.iter_mut().zip(denominator).zip(backgrounds.iter()) {
                        *a += x * (t + background).ln() - x * d;
                    }
                }
            }
            Terms::Bernoulli { class_docs, .. } => {
                for ((acc, &d), &n) in classes.zip(docs).zip(class_docs) {
                    let without = documents_without(n, d);
                    let (present, absent) = (row(d), row(without));
                    for (j, a) in acc.iter_mut().enumerate() {
                        *a += logs.ln_plus(d, present, j) - logs.ln_plus(without, absent, j);
                    }
                }
            }
            Terms::Complement {
                log_denominator,
                sums,
                n_features,
            } => {
                let total: f64 = tokens.iter().sum();
                for (c, (acc, denominator)) in classes.zip(log_denominator.chunks_exact(width)).enumerate() {
                    let f = complement_count(tokens, c, total);
                    let row = row(f);
                    for (j, (a, &d)) in acc.iter_mut().zip(denominator).enumerate() {
                        let theta = x * (logs.ln_plus(f, row, j) - d);
                        *a += complement_weight(theta, sums.as_ref().map(|s| s[c * width + j]), *n_features);
                    }
                }
            }
        }
    }

    /// rest[c][j] += what unseen words add with unseen="score", each one a zero-count word:
    /// multinomial sum(x) (log P(unseen|c)), T_cw = T_w = 0; Bernoulli, per unseen present
    /// word, log p_cw at D_cw = 0 (it has no absent term: it is not in V); complement, an
    /// F_notc,w = 0 in every class.
    fn add_unseen(&self, unseen_sum: f64, unseen_present: usize, rest: &mut [f64]) {
        let width = self.width();
        for (i, r) in rest.iter_mut().enumerate() {
            let (c, j) = (i / width, i % width);
            let alpha = self.logs.alphas[j];
            match &self.terms {
                Terms::Additive { denominator, unseen }
                | Terms::Dirichlet {
                    denominator, unseen, ..
                } => {
                    if unseen_sum != 0.0 {
                        *r += unseen_sum * (unseen[j] - denominator[i]);
                    }
                }
                Terms::Bernoulli { class_docs, .. } => {
                    if unseen_present > 0 {
                        *r += unseen_present as f64 * (alpha.ln() - (class_docs[c] + 2.0 * alpha).ln());
                    }
                }
                Terms::Complement {
                    log_denominator,
                    sums,
                    n_features,
                } => {
                    if unseen_sum != 0.0 {
                        let theta = unseen_sum * (alpha.ln() - log_denominator[i]);
                        *r += complement_weight(theta, sums.as_ref().map(|s| s[i]), *n_features);
                    }
                }
            }
        }
    }
}

/// ln(t + alpha_j) for J alphas. A model choosing its smoothing online keeps, for its
/// candidates, a table of ln(n + alpha_j) for the integers n below `LN_TABLE_SIZE`, the J
/// values of each n side by side (one cache line for eight candidates): scoring a document
/// under every candidate takes these logs most (its words' counts: mostly small integers).
/// The values are libm's, so a lookup gives the very bits `(n + alpha).ln()` gives.
#[derive(Clone, Default)]
pub struct LnGrid {
    alphas: Vec<f64>,
    table: Option<Arc<[f64]>>,
}

/// Entries of the table per candidate (8 KiB each). On 20 Newsgroups 94% of the counts a
/// prediction reads are below it; on SpamAssassin 74% (its header words are in every message).
pub const LN_TABLE_SIZE: usize = 4096;

impl LnGrid {
    /// The alphas with a table (a model's candidates).
    fn tabled(alphas: Vec<f64>) -> Self {
        let table = (0..LN_TABLE_SIZE)
            .flat_map(|n| alphas.iter().map(move |&a| (n as f64 + a).ln()))
            .collect();
        LnGrid {
            alphas,
            table: Some(table),
        }
    }

    /// The alphas, every log computed.
    fn computed(alphas: Vec<f64>) -> Self {
        LnGrid { alphas, table: None }
    }

    /// The row of the table for t (its J logs), when t is an integer the table holds.
    #[inline]
    fn row(&self, t: f64) -> Option<&[f64]> {
        let table = self.table.as_ref()?;
        let n = t as usize; // saturates; NaN gives 0, which differs from t
        let j = self.alphas.len();
        (n < LN_TABLE_SIZE && n as f64 == t).then(|| &table[n * j..(n + 1) * j])
    }

    /// ln(t + alpha_j), `row` being `self.row(t)`.
    #[inline(always)]
    fn ln_plus(&self, t: f64, row: Option<&[f64]>, j: usize) -> f64 {
        match row {
            Some(row) => row[j],
            None => (t + self.alphas[j]).ln(),
        }
    }

    /// This grid's logs for one of its alphas (a grid of that alpha alone, with no table).
    fn one(&self, alpha: f64) -> (Self, usize) {
        match self.alphas.iter().position(|&a| a.to_bits() == alpha.to_bits()) {
            Some(j) => (self.clone(), j),
            None => (LnGrid::computed(vec![alpha]), 0),
        }
    }

    fn heap_bytes(&self) -> usize {
        self.alphas.capacity() * 8 + self.table.as_ref().map_or(0, |t| t.len() * 8)
    }
}

/// N_c - D_cw, the documents of class c without word w (Bernoulli's 1 - P(w|c) numerator):
/// never below 0. D_cw <= N_c holds up to rounding (Store::prepare_removal refuses an
/// unlearning that breaks it), but with counts 2^53 apart the rounding of N_c alone is
/// more than alpha, and log(N_c - D_cw + alpha) would be NaN (found by fuzz/core.rs).
#[inline]
fn documents_without(class_docs: f64, docs: f64) -> f64 {
    (class_docs - docs).max(0.0)
}

/// F_notc = sum over the other classes of counts[c'] (total = the sum of all counts):
/// total - counts[c] where that is exact enough, summed over the others where class c holds
/// most of the total, since total - counts[c] then cancels away whatever the others hold
/// past 2^53 apart (a class total of 1e17 and one of 1 gave F = 0, log 0, NaN).
#[inline]
fn complement_count(counts: &[f64], c: usize, total: f64) -> f64 {
    if counts[c] * 2.0 <= total {
        total - counts[c]
    } else {
        counts
            .iter()
            .enumerate()
            .filter(|&(other, _)| other != c)
            .map(|(_, v)| v)
            .sum()
    }
}

/// Complement weight of a theta term of class c: -theta, or Rennie's normalisation
/// theta / sum_k theta_ck (`sum`) (with |V| <= 1 a single theta is log 1 = 0 and 0/0 is taken
/// as 0: one word tells the classes nothing; scikit-learn gives NaN).
#[inline]
fn complement_weight(theta: f64, sum: Option<f64>, n_features: usize) -> f64 {
    match sum {
        None => -theta,
        Some(_) if n_features <= 1 => 0.0,
        Some(sum) => theta / sum,
    }
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

    // -- vocabulary ------------------------------------------------------------------------

    // -- classes and the prior ----------------------------------------------------------

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

    // -- documents -----------------------------------------------------------------------

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

    // -- smoothing ---------------------------------------------------------------------------

    /// The smoothing of a call: `alpha` with the model's mu (fixed, or chosen online), or
    /// with None the smoothing chosen online (None when the model chooses none).
    pub fn smoothing(&self, alpha: Option<f64>) -> Option<Smoothing> {
        let fixed_mu = match self.kind {
            Kind::Multinomial { mu } => mu,
            _ => None,
        };
        match (&self.auto, alpha) {
            (Some(auto), None) => Some(auto.chosen()),
            (Some(auto), Some(alpha)) => Some(Smoothing {
                alpha,
                mu: auto.chosen().mu,
            }),
            (None, Some(alpha)) => Some(Smoothing { alpha, mu: fixed_mu }),
            (None, None) => None,
        }
    }

    /// Choose the smoothing online among `auto`'s candidates from now on.
    pub fn choose_online(&mut self, auto: AutoSmoothing) {
        self.candidate_logs = LnGrid::tabled(auto.candidates.iter().map(|s| s.alpha).collect());
        self.auto = Some(auto);
    }

    /// The logs of these alphas: the candidates' table when they are the candidates' alphas.
    fn ln_grid(&self, alphas: Vec<f64>) -> LnGrid {
        if alphas == self.candidate_logs.alphas {
            self.candidate_logs.clone()
        } else {
            LnGrid::computed(alphas)
        }
    }

    /// Derived sums (Bernoulli's absent-word sums, complement normalisers) are cached per
    /// alpha for this many alphas: every candidate's, and one more (a view's).
    fn cache_size(&self) -> usize {
        self.auto.as_ref().map_or(0, |a| a.candidates.len()).max(3) + 1
    }

    /// Make sure the document holds every candidate's scores for the counts as they are
    /// (computed now unless a prediction left them). False on a model choosing no smoothing.
    pub fn score_candidates(&mut self, doc: &mut Doc) -> bool {
        let Some(auto) = &self.auto else {
            return false;
        };
        let version = self.store.version;
        if doc.scores.as_ref().is_some_and(|s| s.version == version) {
            return true;
        }
        let candidates = auto.candidates.clone();
        let jll = self.joint_log_likelihoods(doc, &candidates);
        doc.scores = Some(CandidateScores::new(version, jll, self.active(), self.n_classes()));
        true
    }

    /// The joint log-likelihood of every class under the smoothing chosen online, for a
    /// prediction whose document may be learned next: every candidate scores it and the
    /// document keeps their scores, so learning it records them at no further cost. The
    /// chosen candidate's row is bit for bit what scoring with that smoothing alone gives.
    /// None on a model choosing no smoothing.
    pub fn remembered_scores(&mut self, doc: &mut Doc) -> Option<Vec<f64>> {
        if !self.score_candidates(doc) {
            return None;
        }
        let k = self.n_classes();
        let chosen = self.auto.as_ref()?.chosen_index();
        let scores = doc.scores.as_ref()?;
        Some(scores.jll[chosen * k..(chosen + 1) * k].to_vec())
    }

    /// Add the document about to be learned into class `c` to the evidence (models choosing
    /// their smoothing online): its candidates' scores for the counts before the learning.
    fn record_evidence(&mut self, doc: &mut Doc, c: usize, weight: f64) {
        if self.score_candidates(doc) {
            if let (Some(auto), Some(scores)) = (self.auto.as_mut(), doc.scores.as_ref()) {
                auto.record(scores, c, weight);
            }
        }
    }

    // -- scoring ---------------------------------------------------------------------------

    /// True token counts of known features: row-major (n x K).
    fn gather_tokens(&self, ids: &[u32]) -> Vec<f64> {
        let k = self.n_classes();
        let mut tokens = vec![0.0; ids.len() * k];
        let mut docs = vec![0.0; k];
        let scale = self.store.scale;
        for (row, &id) in tokens.chunks_exact_mut(k.max(1)).zip(ids) {
            self.store.gather(id, &mut row[..k], &mut docs);
            row.iter_mut().for_each(|t| *t *= scale);
        }
        tokens
    }

    /// True document counts of known features: row-major (n x K).
    pub fn gather_docs(&self, ids: &[u32]) -> Vec<f64> {
        let k = self.n_classes();
        let mut docs = vec![0.0; ids.len() * k];
        let mut tokens = vec![0.0; k];
        let scale = self.store.scale;
        for (row, &id) in docs.chunks_exact_mut(k.max(1)).zip(ids) {
            self.store.gather(id, &mut tokens, &mut row[..k]);
            row.iter_mut().for_each(|d| *d *= scale);
        }
        docs
    }

    /// Both true count tables of known features (row-major n x K each).
    pub fn gather(&self, ids: &[u32]) -> (Vec<f64>, Vec<f64>) {
        let k = self.n_classes();
        let mut tokens = vec![0.0; ids.len() * k];
        let mut docs = vec![0.0; ids.len() * k];
        let scale = self.store.scale;
        for (i, &id) in ids.iter().enumerate() {
            let (t, d) = (&mut tokens[i * k..(i + 1) * k], &mut docs[i * k..(i + 1) * k]);
            self.store.gather(id, t, d);
            t.iter_mut().for_each(|x| *x *= scale);
            d.iter_mut().for_each(|x| *x *= scale);
        }
        (tokens, docs)
    }

    /// The per-class constants of one prediction under each smoothing of `smoothings` (all
    /// with mu or all without), and what the document's unseen words and the class prior add
    /// (`rest`): everything but the per-feature terms.
    fn scorer(&mut self, smoothings: &[Smoothing]) -> Scorer {
        let k = self.n_classes();
        let n_features = self.store.n_features as f64;
        let logs = self.ln_grid(smoothings.iter().map(|s| s.alpha).collect());
        let terms = match self.kind {
            Kind::Multinomial { .. } => {
                let class_tokens: Vec<f64> = (0..k).map(|c| self.store.true_class_tokens(c)).collect();
                if smoothings.iter().all(|s| s.mu.is_none()) {
                    let mut denominator = Vec::with_capacity(smoothings.len() * k);
                    for &t in &class_tokens {
                        denominator.extend(smoothings.iter().map(|s| (t + s.alpha * n_features).ln()));
                    }
                    let unseen = smoothings
                        .iter()
                        .map(|s| if s.alpha > 0.0 { s.alpha.ln() } else { f64::NEG_INFINITY })
                        .collect();
                    Terms::Additive { denominator, unseen }
                } else {
                    let (mut mu_over_pooled, mut unseen) = (Vec::new(), Vec::new());
                    for s in smoothings {
                        let (alpha, mu) = (s.alpha, s.mu.unwrap_or(0.0));
                        let pooled = class_tokens.iter().sum::<f64>() + alpha * n_features;
                        unseen.push(if pooled <= 0.0 {
                            mu.ln()
                        } else if alpha > 0.0 {
                            (mu * alpha / pooled).ln()
                        } else {
                            f64::NEG_INFINITY
                        });
                        mu_over_pooled.push(if pooled > 0.0 { mu / pooled } else { 0.0 });
                    }
                    let mut denominator = Vec::with_capacity(smoothings.len() * k);
                    for &t in &class_tokens {
                        denominator.extend(smoothings.iter().map(|s| (t + s.mu.unwrap_or(0.0)).ln()));
                    }
                    Terms::Dirichlet {
                        mu_over_pooled,
                        denominator,
                        unseen,
                    }
                }
            }
            Kind::Bernoulli { binarize } => Terms::Bernoulli {
                binarize,
                class_docs: (0..k).map(|c| self.store.true_class_docs(c)).collect(),
            },
            Kind::Complement { norm } => {
                let width = smoothings.len();
                let mut log_denominator = vec![0.0; width * k];
                let mut sums = norm.then(|| vec![0.0; width * k]);
                for (j, s) in smoothings.iter().enumerate() {
                    let row = self.complement_log_denominator(s.alpha);
                    if let Some(sums) = sums.as_mut() {
                        for (c, sum) in self.theta_sums(s.alpha, &row).into_iter().enumerate() {
                            sums[c * width + j] = sum;
                        }
                    }
                    for (c, d) in row.into_iter().enumerate() {
                        log_denominator[c * width + j] = d;
                    }
                }
                Terms::Complement {
                    log_denominator,
                    sums,
                    n_features: self.store.n_features,
                }
            }
        };
        Scorer::new(logs, terms)
    }

    /// rest[c][j] (K x J): the class prior (not for complement models, but while a single
    /// class is seen), Bernoulli's sum over absent words, and the unseen words' terms.
    fn rest(&mut self, scorer: &Scorer, unseen_sum: f64, unseen_present: usize) -> Vec<f64> {
        let k = self.n_classes();
        let width = scorer.width();
        let mut rest = vec![0.0; width * k];
        if let Terms::Bernoulli { .. } = scorer.terms {
            for (j, alpha) in scorer.logs.alphas.clone().into_iter().enumerate() {
                for (c, sum) in self.absent_log_sum(alpha).into_iter().enumerate() {
                    rest[c * width + j] = sum;
                }
            }
        }
        // With an empty vocabulary (every feature pruned, or hashed buckets dropped) the
        // multinomial and complement P(unseen|c) = alpha / (T_c + alpha |V|) is 0/0 in every
        // class alike: unseen words then tell the classes nothing (found by fuzz/core.rs).
        let defined = self.store.n_features > 0 || matches!(scorer.terms, Terms::Bernoulli { .. });
        if self.unseen_score && defined {
            scorer.add_unseen(unseen_sum, unseen_present, &mut rest);
        }
        if !matches!(self.kind, Kind::Complement { .. }) || self.active().len() == 1 {
            let mut prior = Vec::new();
            self.log_prior(&mut prior);
            for (class, p) in rest.chunks_exact_mut(width.max(1)).zip(&prior) {
                class.iter_mut().for_each(|r| *r += p);
            }
        }
        rest
    }

    /// The joint log-likelihood log P(c) + log P(x | c) of every class, split by known
    /// feature (see `Contributions`; Bernoulli: the present features).
    pub fn contributions(&mut self, known: &Known, s: Smoothing) -> Contributions {
        let k = self.n_classes();
        let mut scorer = self.scorer(&[s]);
        let rest = self.rest(&scorer, known.unseen_sum, known.unseen_present);
        let (mut ids, mut positions, mut terms) = (Vec::new(), Vec::new(), Vec::new());
        let mut row = RowScratch::new(k);
        for i in 0..known.ids.len() {
            let x = known.values[i];
            if !scorer.counts(x) {
                continue;
            }
            let at = terms.len();
            terms.resize(at + k, 0.0);
            let (tokens, docs) = row.read(&self.store, known.ids[i]);
            scorer.add_terms(x, tokens, docs, &mut terms[at..]);
            ids.push(known.ids[i]);
            positions.push(known.positions[i]);
        }
        Contributions {
            ids,
            positions,
            terms,
            rest,
        }
    }

    /// log P(x | c) - log U(x) of a multinomial model, U uniform over the vocabulary (every
    /// feature 1/|V| per unit of mass), summed over the document's known features with their
    /// values (None for Bernoulli and complement models, whose terms are not per unit of mass).
    ///
    /// U is what additive smoothing gives a class that has learned nothing: alpha / (alpha |V|).
    /// So this is the log-odds of c against such a class with equal priors: how much more
    /// likely x is under what c learned than under no knowledge at all. A two-class filter
    /// that has learned only one class scores with it: the first message of the other class
    /// is unlike what was learned and gets a low value, where the posterior of the only class
    /// would give every message the same, infinite log-odds.
    pub fn log_odds_against_uniform(&mut self, known: &Known, c: usize, s: Smoothing) -> Option<f64> {
        if !matches!(self.kind, Kind::Multinomial { .. }) {
            return None;
        }
        if known.ids.is_empty() {
            return Some(0.0); // nothing known to compare (and |V| may be 0: no log 0)
        }
        let k = self.n_classes();
        let mut scorer = self.scorer(&[s]);
        let mut log_likelihood = vec![0.0; k];
        let mut mass = 0.0;
        let mut row = RowScratch::new(k);
        for (&id, &x) in known.ids.iter().zip(&known.values) {
            let (tokens, docs) = row.read(&self.store, id);
            scorer.add_terms(x, tokens, docs, &mut log_likelihood);
            mass += x;
        }
        Some(log_likelihood[c] + mass * (self.store.n_features as f64).ln())
    }

    /// The joint log-likelihood of every class (inactive ones included, as computed):
    /// `contributions` summed, without materialising the per-feature terms.
    pub fn joint_log_likelihood(&mut self, doc: &mut Doc, s: Smoothing) -> Vec<f64> {
        self.joint_log_likelihoods(doc, &[s])
    }

    /// `joint_log_likelihood` under each smoothing of `smoothings`, row-major (one row of K
    /// per smoothing): each feature's counts are read once for all of them.
    pub fn joint_log_likelihoods(&mut self, doc: &mut Doc, smoothings: &[Smoothing]) -> Vec<f64> {
        self.features.resolve(doc);
        let k = self.n_classes();
        let mut scorer = self.scorer(smoothings);
        let hashed = matches!(self.features, Features::Hashed(_));
        let threshold = self.threshold();
        let (mut unseen_sum, mut unseen_present) = (0.0, 0usize);
        for (&id, &x) in doc.ids.iter().zip(&doc.values) {
            let inside = if hashed { self.store.known(id) } else { id != UNKNOWN };
            if !inside {
                unseen_sum += x;
                unseen_present += (x > threshold) as usize;
            }
        }
        let mut acc = self.rest(&scorer, unseen_sum, unseen_present);
        let mut row = RowScratch::new(k);
        for (&id, &x) in doc.ids.iter().zip(&doc.values) {
            let inside = if hashed { self.store.known(id) } else { id != UNKNOWN };
            if inside && scorer.counts(x) {
                let (tokens, docs) = row.read(&self.store, id);
                scorer.add_terms(x, tokens, docs, &mut acc);
            }
        }
        let width = smoothings.len();
        if width == 1 {
            return acc;
        }
        // K x J -> J x K
        (0..width * k).map(|i| acc[(i % k) * width + i / k]).collect()
    }

    /// log P(c | x) over the active classes (in index order), see `log_posterior`.
    pub fn log_posterior(&mut self, doc: &mut Doc, s: Smoothing, normalise: bool) -> (Vec<usize>, Vec<f64>) {
        let full = self.joint_log_likelihood(doc, s);
        self.log_posterior_of(&full, normalise)
    }

    /// `log_posterior` from the joint log-likelihood of every class (`joint_log_likelihood`).
    pub fn log_posterior_of(&mut self, full: &[f64], normalise: bool) -> (Vec<usize>, Vec<f64>) {
        let active = self.active();
        let mut jll: Vec<f64> = active.iter().map(|&c| full[c]).collect();
        let prior = || {
            let mut prior = Vec::new();
            self.log_prior(&mut prior);
            active.iter().map(|&c| prior[c]).collect()
        };
        log_posterior(&mut jll, prior, normalise);
        (active, jll)
    }

    /// sum over w in V of log(1 - p_cw) for every class:
    /// sum_w log(D_c - D_cw + alpha) - |V| log(D_c + 2*alpha), where the first sum needs,
    /// per class, only how many features share each value of D_cw (the store's histogram):
    /// words with D_cw = 0 all contribute log(D_c + alpha). O(distinct values), cached.
    fn absent_log_sum(&mut self, alpha: f64) -> Vec<f64> {
        let k = self.n_classes();
        let n_features = self.store.n_features as f64;
        (0..k)
            .map(|c| {
                let class_docs = self.store.true_class_docs(c);
                let (seen, n_seen) = self.absent_terms(c, alpha);
                seen + (n_features - n_seen) * (class_docs + alpha).ln() - n_features * (class_docs + 2.0 * alpha).ln()
            })
            .collect()
    }

    /// (sum over w with D_cw > 0 of log(D_c - D_cw + alpha), number of such w), cached
    /// until class c's counts, alpha or the scale change. Summed in increasing order of
    /// D_cw, so a loaded or merged model scores bit for bit like the original.
    fn absent_terms(&mut self, c: usize, alpha: f64) -> (f64, f64) {
        if self.absent.len() < self.n_classes() {
            self.absent.resize_with(self.n_classes(), Vec::new);
        }
        let key = (
            alpha.to_bits(),
            self.store.scale.to_bits(),
            self.store.class_version()[c],
        );
        if let Some(hit) = self.absent[c].iter().find(|a| (a.alpha, a.scale, a.version) == key) {
            return (hit.total, hit.n_seen);
        }
        // A miss: this alpha, and with it every candidate's (one walk, one sort of the histogram)
        let logs = match self.candidate_logs.alphas.iter().any(|a| a.to_bits() == key.0) {
            true => self.candidate_logs.clone(),
            false => LnGrid::computed(vec![alpha]),
        };
        let histogram = self
            .store
            .histogram(c)
            .expect("a Bernoulli store keeps document-count histograms");
        let mut values: Vec<(f64, u64)> = histogram.iter().map(|(&bits, &n)| (f64::from_bits(bits), n)).collect();
        values.sort_by(|a, b| a.0.total_cmp(&b.0));
        let scale = self.store.scale;
        let class_docs = self.store.true_class_docs(c);
        let mut totals = vec![0.0; logs.alphas.len()];
        let mut n_seen = 0.0;
        for (value, n) in values {
            let without = documents_without(class_docs, value * scale);
            let row = logs.row(without);
            for (j, total) in totals.iter_mut().enumerate() {
                *total += n as f64 * logs.ln_plus(without, row, j);
            }
            n_seen += n as f64;
        }
        let cache_size = self.cache_size();
        let cache = &mut self.absent[c];
        for (&a, &total) in logs.alphas.iter().zip(&totals) {
            cache.retain(|entry| entry.alpha != a.to_bits());
            if cache.len() >= cache_size {
                cache.remove(0);
            }
            cache.push(AbsentSum {
                alpha: a.to_bits(),
                scale: key.1,
                version: key.2,
                total,
                n_seen,
            });
        }
        let at = logs.alphas.iter().position(|a| a.to_bits() == key.0).unwrap_or(0);
        (totals[at], n_seen)
    }

    /// log(F_notc + alpha*|V|) for every class, F_notc = T - T_c (`complement_count`).
    fn complement_log_denominator(&self, alpha: f64) -> Vec<f64> {
        let k = self.n_classes();
        let class_tokens: Vec<f64> = (0..k).map(|c| self.store.true_class_tokens(c)).collect();
        let total: f64 = class_tokens.iter().sum();
        let n_features = self.store.n_features as f64;
        (0..k)
            .map(|c| (complement_count(&class_tokens, c, total) + alpha * n_features).ln())
            .collect()
    }

    /// sum_{k in V} theta_ck = L_c - |V| log(F_notc + alpha*|V|) for every class, L_c kept
    /// incrementally (`update`, `remove`) and re-derived every REDERIVE_EVERY updates or
    /// when the counts changed behind it (pruning, rescaling, decay, a load).
    fn theta_sums(&mut self, alpha: f64, log_denominator: &[f64]) -> Vec<f64> {
        let n_features = self.store.n_features as f64;
        let at = match self.synced_normaliser(alpha) {
            Some(i) if self.normalisers[i].updates < REDERIVE_EVERY => i,
            _ => self.derive_normaliser(alpha),
        };
        let state = &self.normalisers[at];
        state
            .sums
            .iter()
            .zip(log_denominator)
            .map(|(&l, &d)| l - n_features * d)
            .collect()
    }

    /// Over the features among ids that are in V: (sum of log(T_k - T_ck + alpha) per class,
    /// sum of log(T_k + alpha): the terms of a class with no counts).
    fn log_terms(&self, ids: &[u32], alpha: f64) -> (Vec<f64>, f64) {
        let k = self.n_classes();
        let inside: Vec<u32> = ids.iter().copied().filter(|&id| self.store.known(id)).collect();
        let tokens = self.gather_tokens(&inside);
        let (logs, j) = self.candidate_logs.one(alpha);
        let mut sums = vec![0.0; k];
        let mut zero = 0.0;
        for row in tokens.chunks_exact(k.max(1)) {
            let total: f64 = row.iter().sum();
            for (c, sum) in sums.iter_mut().enumerate() {
                let f = complement_count(row, c, total);
                *sum += logs.ln_plus(f, logs.row(f), j);
            }
            zero += logs.ln_plus(total, logs.row(total), j);
        }
        (sums, zero)
    }

    /// The normaliser for alpha if it still matches the counts. Classes added since have
    /// no counts yet, so their L is the zero-class sum.
    fn synced_normaliser(&mut self, alpha: f64) -> Option<usize> {
        let k = self.n_classes();
        let versions = self.store.class_version();
        let scale = self.store.scale.to_bits();
        let at = self.normalisers.iter().position(|n| n.alpha == alpha.to_bits())?;
        let state = &mut self.normalisers[at];
        let known = state.versions.len();
        if state.scale != scale || versions[..known] != state.versions[..] || versions[known..].iter().any(|&v| v != 0)
        {
            self.normalisers.remove(at);
            return None;
        }
        if k > known {
            state.sums.resize(k, state.zero_sum);
            state.versions = versions.to_vec();
        }
        Some(at)
    }

    /// The normaliser for alpha, if in step with the counts: (L_c per class, incremental
    /// updates since it was derived).
    pub fn normaliser_state(&mut self, alpha: f64) -> Option<(Vec<f64>, u64)> {
        let at = self.synced_normaliser(alpha)?;
        Some((self.normalisers[at].sums.clone(), self.normalisers[at].updates))
    }

    /// L_c from scratch: O(|V| K).
    fn derive_normaliser(&mut self, alpha: f64) -> usize {
        self.derivations += 1;
        let ids = self.store.feature_ids();
        let (sums, zero_sum) = self.log_terms(&ids, alpha);
        let state = Normaliser {
            alpha: alpha.to_bits(),
            scale: self.store.scale.to_bits(),
            versions: self.store.class_version().to_vec(),
            sums,
            zero_sum,
            updates: 0,
        };
        self.normalisers.retain(|n| n.alpha != state.alpha);
        if self.normalisers.len() >= self.cache_size() {
            self.normalisers.remove(0);
        }
        self.normalisers.push(state);
        self.normalisers.len() - 1
    }

    // -- changing counts -------------------------------------------------------------------

    /// The normalisers to move along with a count change (complement models with `norm`):
    /// those still in step with the counts; the others are dropped (re-derived when needed).
    fn before_change(&mut self, ids: &[u32]) -> Vec<(usize, Vec<f64>, f64)> {
        if self.kind != (Kind::Complement { norm: true }) {
            return Vec::new();
        }
        let alphas: Vec<u64> = self.normalisers.iter().map(|n| n.alpha).collect();
        for alpha in alphas {
            self.synced_normaliser(f64::from_bits(alpha)); // drops it when out of step
        }
        (0..self.normalisers.len())
            .map(|i| {
                let (sums, zero) = self.log_terms(ids, f64::from_bits(self.normalisers[i].alpha));
                (i, sums, zero)
            })
            .collect()
    }

    fn after_change(&mut self, ids: &[u32], before: Vec<(usize, Vec<f64>, f64)>) {
        for (i, old_sums, old_zero) in before {
            let alpha = f64::from_bits(self.normalisers[i].alpha);
            let (new_sums, new_zero) = self.log_terms(ids, alpha);
            let versions = self.store.class_version().to_vec();
            let state = &mut self.normalisers[i];
            state.sums.resize(new_sums.len(), state.zero_sum);
            for (c, (sum, new)) in state.sums.iter_mut().zip(&new_sums).enumerate() {
                *sum += new - old_sums.get(c).copied().unwrap_or(0.0);
            }
            state.zero_sum += new_zero - old_zero;
            state.versions = versions;
            state.updates += 1;
        }
    }

    /// Add counts to class c (true units; the caller checked the room).
    pub fn update(&mut self, c: usize, ids: &[u32], token_delta: &[f64], doc_delta: &[f64], docs_delta: f64) {
        let before = self.before_change(ids);
        self.store.add(c, ids, token_delta, doc_delta, docs_delta);
        self.after_change(ids, before);
    }

    /// Write a checked removal; features left without counts leave V.
    pub fn remove(&mut self, removal: Removal, ids: &[u32]) {
        let before = self.before_change(ids);
        let gone = self.store.commit(removal);
        self.after_change(ids, before);
        self.features.release(&gone);
    }

    /// Age every count by `factor` (the document clock moves on by `n_docs`).
    pub fn advance_clock(&mut self, n_docs: u64, factor: f64) {
        let gone = self.store.decay(factor);
        self.features.release(&gone);
        self.store.n_learned += n_docs;
    }

    pub fn drop_features(&mut self, ids: &[u32]) -> usize {
        let gone = self.store.drop_features(ids);
        self.features.release(&gone);
        gone.len()
    }

    /// The features a pruning pass drops (`crate::pruning::select`): each feature's total
    /// true count over the classes and the stamp of the last document that held it.
    pub fn prune_selection(&self, policy: &crate::pruning::Policy) -> Vec<u32> {
        let ids = self.store.feature_ids();
        let scale = self.store.scale;
        let candidates: Vec<crate::pruning::Candidate> = ids
            .iter()
            .map(|&id| {
                let mut total = 0.0;
                self.store.for_each_cell(id, |_, tokens, _| total += tokens);
                crate::pruning::Candidate {
                    id,
                    total: total * scale,
                    last_seen: self.store.last_seen(id).unwrap_or(0),
                }
            })
            .collect();
        crate::pruning::select(candidates, policy, self.store.n_learned)
    }

    pub fn rescale(&mut self) {
        let gone = self.store.rescale();
        self.features.release(&gone);
    }

    /// Age every count by `factor` (the clock moves on by `n_docs`), keeping the keys of
    /// the documents about to be learned if ageing is going to fold the scale (which may
    /// take features out of V).
    fn advance_clock_for(&mut self, docs: &mut [&mut Doc], n_docs: u64, factor: f64) {
        if self.store.decay_folds(factor) {
            for doc in docs.iter_mut() {
                self.features.keep_keys(doc);
            }
        }
        self.advance_clock(n_docs, factor);
    }

    /// Would `learn` accept this document? Changes nothing.
    pub fn check_learn(&self, doc: &mut Doc, c: Option<usize>, weight: f64, factor: f64) -> Result<(), NbError> {
        let (positions, values) = self.present(doc);
        if positions.is_empty() && !self.empty_learn {
            return Err(NbError::EmptyDocument);
        }
        self.store
            .check_room(c, weight * values.iter().sum::<f64>(), weight, factor)?;
        if self.store.n_learned >= MAX_DOCUMENTS {
            return Err(StoreError::ClockFull.into());
        }
        self.features.resolve(doc);
        Ok(self.features.check_room(std::iter::once((&*doc, &positions[..])))?)
    }

    /// Would `unlearn` accept this document? Changes nothing.
    pub fn check_unlearn(&self, doc: &mut Doc, c: usize, weight: f64, learned_at: Option<u64>) -> Result<(), NbError> {
        let (ids, deltas) = self.prepare_unlearn(doc, weight, learned_at)?;
        self.store
            .prepare_removal(c, &ids, &deltas, &vec![-weight; ids.len()], -weight)?;
        Ok(())
    }

    /// Learn one document into class `c` (None: a new class, added with `prior_weight`),
    /// with `weight`, after ageing every count by `factor` (the clock moves on by one).
    /// Everything is checked before anything changes. Returns the class index.
    pub fn learn(
        &mut self,
        doc: &mut Doc,
        c: Option<usize>,
        prior_weight: f64,
        weight: f64,
        factor: f64,
    ) -> Result<usize, NbError> {
        let (positions, values) = self.present(doc);
        if positions.is_empty() && !self.empty_learn {
            return Err(NbError::EmptyDocument);
        }
        let token_sum = weight * values.iter().sum::<f64>();
        self.store.check_room(c, token_sum, weight, factor)?;
        if self.store.n_learned >= MAX_DOCUMENTS {
            return Err(StoreError::ClockFull.into());
        }
        self.features.resolve(doc);
        self.features.check_room(std::iter::once((&*doc, &positions[..])))?;
        // Nothing has changed so far. The evidence scores the document against the counts
        // it is predicted from (before the clock moves), then the clock: ageing may empty
        // features (rescale), whose ids the document's new tokens may then reuse.
        if let Some(c) = c {
            self.record_evidence(doc, c, weight);
        }
        self.advance_clock_for(&mut [&mut *doc], 1, factor);
        if weight == 0.0 {
            return Ok(c.unwrap_or(usize::MAX)); // so old that nothing of it is left
        }
        self.features.add_tokens(doc, &positions)?;
        let c = match c {
            Some(c) => c,
            None => self.add_class(prior_weight),
        };
        let ids: Vec<u32> = positions.iter().map(|&i| doc.ids[i]).collect();
        let token_delta: Vec<f64> = values.iter().map(|&v| weight * v).collect();
        self.update(c, &ids, &token_delta, &vec![weight; ids.len()], weight);
        Ok(c)
    }

    /// The removal of one learned document from class c with `weight` (already aged):
    /// checked and computed, nothing written. With `learned_at` and pruning since then,
    /// only the features whose counts still hold the document are taken (in V without
    /// interruption since it, and kept by the model it came from if it was merged in:
    /// `Store::holds_document`); otherwise every present feature must be in V.
    pub fn prepare_unlearn(
        &self,
        doc: &mut Doc,
        weight: f64,
        learned_at: Option<u64>,
    ) -> Result<(Vec<u32>, Vec<f64>), NbError> {
        let (positions, values) = self.present(doc);
        if positions.is_empty() && !self.empty_learn {
            return Err(NbError::EmptyDocument);
        }
        self.features.resolve(doc);
        let hashed = matches!(self.features, Features::Hashed(_));
        let inside = |id: u32| if hashed { self.store.known(id) } else { id != UNKNOWN };
        let mut ids = Vec::with_capacity(positions.len());
        let mut deltas = Vec::with_capacity(positions.len());
        // pruned_at > 0 also after merging a model that had pruned (merge sets it, and the
        // merged records lie within it, as loading checks)
        if learned_at.is_none() && self.store.pruned_at > 0 {
            return Err(NbError::StampNeeded);
        }
        let pruned_since = learned_at.is_some_and(|at| self.store.pruned_at >= at);
        if let Some(at) = learned_at.filter(|&at| pruned_since && self.store.merge_forgotten(at)) {
            return Err(NbError::MergeForgotten { learned_at: at });
        }
        let mut missing = Vec::new();
        for (&i, &v) in positions.iter().zip(&values) {
            let id = doc.ids[i];
            if pruned_since {
                if inside(id) && self.store.holds_document(id, learned_at.unwrap_or(0)) {
                    ids.push(id);
                    deltas.push(-weight * v);
                }
            } else if inside(id) {
                ids.push(id);
                deltas.push(-weight * v);
            } else if missing.len() < 3 {
                missing.push(i);
            }
        }
        if !missing.is_empty() {
            return Err(NbError::NeverLearned { features: missing });
        }
        Ok((ids, deltas))
    }

    /// Unlearn one document: the exact inverse of `learn` (see `prepare_unlearn`).
    pub fn unlearn(&mut self, doc: &mut Doc, c: usize, weight: f64, learned_at: Option<u64>) -> Result<(), NbError> {
        let (ids, deltas) = self.prepare_unlearn(doc, weight, learned_at)?;
        let removal = self
            .store
            .prepare_removal(c, &ids, &deltas, &vec![-weight; ids.len()], -weight)?;
        self.remove(removal, &ids);
        Ok(())
    }

    /// Unlearn many documents, all or nothing: the removals are summed per class and every
    /// class is checked before the first is written (unlearning only subtracts, so the batch
    /// fails exactly when some document in turn would).
    pub fn unlearn_many(
        &mut self,
        docs: &mut [Doc],
        classes: &[usize],
        weights: &[f64],
        learned_at: &[Option<u64>],
    ) -> Result<(), (usize, NbError)> {
        // per class: (class, summed (token, doc) deltas per feature, documents removed)
        type ClassRemoval = (usize, HashMap<u32, (f64, f64)>, f64);
        let mut per_class: Vec<ClassRemoval> = Vec::new();
        for (row, doc) in docs.iter_mut().enumerate() {
            let (c, weight) = (classes[row], weights[row]);
            let (ids, deltas) = self
                .prepare_unlearn(doc, weight, learned_at[row])
                .map_err(|e| (row, e))?;
            let slot = match per_class.iter().position(|(k, _, _)| *k == c) {
                Some(i) => i,
                None => {
                    per_class.push((c, HashMap::default(), 0.0));
                    per_class.len() - 1
                }
            };
            let (_, cells, docs_delta) = &mut per_class[slot];
            for (id, dt) in ids.into_iter().zip(deltas) {
                let cell = cells.entry(id).or_insert((0.0, 0.0));
                cell.0 += dt;
                cell.1 -= weight;
            }
            *docs_delta -= weight;
        }
        let mut removals = Vec::new();
        for (c, cells, docs_delta) in per_class {
            let mut ids: Vec<u32> = cells.keys().copied().collect();
            ids.sort_unstable();
            let tokens: Vec<f64> = ids.iter().map(|id| cells[id].0).collect();
            let doc_deltas: Vec<f64> = ids.iter().map(|id| cells[id].1).collect();
            let removal = self
                .store
                .prepare_removal(c, &ids, &tokens, &doc_deltas, docs_delta)
                .map_err(|e| (usize::MAX, e.into()))?;
            removals.push((removal, ids));
        }
        for (removal, ids) in removals {
            self.remove(removal, &ids);
        }
        Ok(())
    }

    /// Would `learn_many` accept these documents (`n_new` new classes)? Changes nothing but
    /// the documents' lookups; returns each document's present features. A batch it accepts
    /// is also accepted learned one document at a time in turn (counts only grow on the way).
    pub fn check_learn_many(
        &self,
        docs: &mut [Doc],
        classes: &[usize],
        n_new: usize,
        weights: &[f64],
        factor: f64,
    ) -> Result<Vec<Present>, (usize, NbError)> {
        let n = docs.len();
        let k = self.n_classes();
        let present: Vec<Present> = docs.iter().map(|d| self.present(d)).collect();
        for (row, (positions, _)) in present.iter().enumerate() {
            if positions.is_empty() && !self.empty_learn {
                return Err((row, NbError::EmptyDocument));
            }
        }
        let mut totals = vec![(0.0, 0.0); k + n_new];
        for row in 0..n {
            let sum: f64 = present[row].1.iter().sum();
            let total = &mut totals[classes[row]];
            total.0 += weights[row] * sum;
            total.1 += weights[row];
        }
        for (c, &(tokens, docs_sum)) in totals.iter().enumerate() {
            self.store
                .check_room((c < k).then_some(c), tokens, docs_sum, factor)
                .map_err(|e| (usize::MAX, e.into()))?;
        }
        if self.store.n_learned + n as u64 > MAX_DOCUMENTS {
            return Err((usize::MAX, StoreError::ClockFull.into()));
        }
        for doc in docs.iter_mut() {
            self.features.resolve(doc);
        }
        let counted = |row: usize| weights[row] > 0.0;
        self.features
            .check_room(
                docs.iter()
                    .zip(&present)
                    .enumerate()
                    .filter(|&(row, _)| counted(row))
                    .map(|(_, (d, p))| (d, &p.0[..])),
            )
            .map_err(|e| (usize::MAX, e.into()))?;
        Ok(present)
    }

    /// Learn many documents: equal to `learn` of each in turn (counts add up), with the
    /// documents of each class summed first. `classes[i]` is a class index, where indices
    /// from n_classes on are new classes (added in order, with `new_prior_weights`);
    /// `weights` are already aged (row i is n-1-i documents older than the last), `factor`
    /// ages the counts held before. Features born in the batch get the stamp of its first
    /// row; `last_seen` is the stamp of the last row holding the feature.
    pub fn learn_many(
        &mut self,
        docs: &mut [Doc],
        classes: &[usize],
        new_prior_weights: &[f64],
        weights: &[f64],
        factor: f64,
    ) -> Result<(), (usize, NbError)> {
        let n = docs.len();
        let k = self.n_classes();
        let n_new = new_prior_weights.len();
        let present = self.check_learn_many(docs, classes, n_new, weights, factor)?;
        let counted = |row: usize| weights[row] > 0.0;
        let n0 = self.store.n_learned;
        {
            let mut all: Vec<&mut Doc> = docs.iter_mut().collect();
            self.advance_clock_for(&mut all, n as u64, factor);
        }
        // Ids for every new token of the batch's counted rows (rows so old that nothing of
        // them is left add nothing; their features already in V still get seen).
        for (row, (doc, (positions, _))) in docs.iter_mut().zip(&present).enumerate() {
            if counted(row) {
                self.features
                    .add_tokens(doc, positions)
                    .map_err(|e| (usize::MAX, e.into()))?;
            } else {
                self.features.resolve(doc);
            }
        }
        for &w in new_prior_weights {
            self.add_class(w);
        }
        // Per class: summed cells, in order of first appearance of each feature.
        // per class: (ids, position of each id, token sums, document sums, documents)
        type ClassSums = (Vec<u32>, HashMap<u32, usize>, Vec<f64>, Vec<f64>, f64);
        let mut sums: Vec<ClassSums> = (0..k + n_new)
            .map(|_| (Vec::new(), HashMap::default(), Vec::new(), Vec::new(), 0.0))
            .collect();
        let mut last_row: HashMap<u32, usize> = HashMap::default();
        for (row, doc) in docs.iter().enumerate() {
            let weight = weights[row];
            if !counted(row) {
                for &i in &present[row].0 {
                    if doc.ids[i] != UNKNOWN && self.store.known(doc.ids[i]) {
                        last_row.insert(doc.ids[i], row);
                    }
                }
                continue;
            }
            let (ids, index, tokens, doc_counts, total) = &mut sums[classes[row]];
            *total += weight;
            for (&i, &v) in present[row].0.iter().zip(&present[row].1) {
                let id = doc.ids[i];
                last_row.insert(id, row);
                let at = *index.entry(id).or_insert_with(|| {
                    ids.push(id);
                    tokens.push(0.0);
                    doc_counts.push(0.0);
                    ids.len() - 1
                });
                tokens[at] += weight * v;
                doc_counts[at] += weight;
            }
        }
        self.store.n_learned = n0 + 1; // features born in this batch get its first row's stamp
        for (c, (ids, _, tokens, doc_counts, total)) in sums.into_iter().enumerate() {
            if total == 0.0 {
                continue; // rows so old that nothing of them is left
            }
            self.update(c, &ids, &tokens, &doc_counts, total);
        }
        self.store.n_learned = n0 + n as u64;
        for (id, row) in last_row {
            self.store.set_stamps(id, None, Some(n0 + 1 + row as u64));
        }
        Ok(())
    }

    /// Everything `merge` reads from another model, copied (the other may be this one).
    pub fn snapshot(&self) -> Snapshot {
        let ids = self.store.feature_ids();
        let position: HashMap<u32, usize> = ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();
        let scale = self.store.scale;
        let mut cells = Vec::new();
        for &id in &ids {
            self.store
                .for_each_cell(id, |c, t, d| cells.push((position[&id], c, t * scale, d * scale)));
        }
        let k = self.n_classes();
        Snapshot {
            keys: self
                .features
                .vocabulary()
                .map(|v| ids.iter().map(|&id| v.token(id).unwrap_or_default().to_vec()).collect()),
            born: ids.iter().map(|&id| self.store.born(id).unwrap_or(0)).collect(),
            last_seen: ids.iter().map(|&id| self.store.last_seen(id).unwrap_or(0)).collect(),
            ids,
            cells,
            class_docs: (0..k).map(|c| self.store.true_class_docs(c)).collect(),
            class_tokens: (0..k).map(|c| self.store.true_class_tokens(c)).collect(),
            n_learned: self.store.n_learned,
            pruned_at: self.store.pruned_at,
            merged_prunings: self.store.merged_prunings.clone(),
            forgotten_merges: self.store.forgotten_merges.clone(),
            auto: self.auto.clone(),
        }
    }

    /// Add another model's counts: the model trained on this one's data, then the other's.
    /// This model's counts first age by `own_factor` (the clock moves on by the other's
    /// n_learned documents), the other's by `their_factor`; `classes[oc]` is this model's
    /// class for the other's class oc (None: a new class, added in order with
    /// `new_prior_weights`). The other's feature stamps follow this model's clock.
    pub fn merge(
        &mut self,
        other: &Snapshot,
        classes: &[Option<usize>],
        new_prior_weights: &[f64],
        own_factor: f64,
        their_factor: f64,
    ) -> Result<(), NbError> {
        for (oc, &c) in classes.iter().enumerate() {
            self.store.check_room(
                c,
                their_factor * other.class_tokens[oc],
                their_factor * other.class_docs[oc],
                own_factor,
            )?;
        }
        if self.store.n_learned + other.n_learned > MAX_DOCUMENTS {
            return Err(StoreError::ClockFull.into());
        }
        let mut evidence = self.auto.clone();
        match (&mut evidence, &other.auto) {
            (Some(mine), Some(theirs)) => mine.merge(theirs).map_err(NbError::Evidence)?,
            (None, None) => {}
            _ => return Err(NbError::Evidence(EvidenceError::DifferentCandidates)),
        }
        if let (Features::Exact(vocabulary), Some(keys)) = (&self.features, &other.keys) {
            let new: Vec<&Vec<u8>> = keys.iter().filter(|k| vocabulary.find(k).is_none()).collect();
            if !vocabulary.has_room(new.len(), new.iter().map(|k| k.len()).sum()) {
                return Err(NbError::VocabularyFull);
            }
        }
        let n0 = self.store.n_learned;
        self.auto = evidence;
        self.advance_clock(other.n_learned, own_factor);
        if their_factor > 0.0 {
            let mine: Vec<u32> = match (&mut self.features, &other.keys) {
                (Features::Exact(vocabulary), Some(keys)) => keys
                    .iter()
                    .map(|k| vocabulary.find_or_add(k))
                    .collect::<Result<_, _>>()?,
                _ => other.ids.clone(),
            };
            let was_known: Vec<bool> = mine.iter().map(|&id| self.store.known(id)).collect();
            // this model's features before the merge, when the other had pruned (see add_merged_pruning)
            let known_before = (other.pruned_at > 0).then(|| self.store.feature_ids());
            let seen_before: Vec<u64> = mine.iter().map(|&id| self.store.last_seen(id).unwrap_or(0)).collect();
            let mut next_new = new_prior_weights.iter();
            for (oc, &c) in classes.iter().enumerate() {
                let c = match c {
                    Some(c) => c,
                    None => self.add_class(*next_new.next().unwrap_or(&1.0)),
                };
                let mut ids = Vec::new();
                let mut tokens = Vec::new();
                let mut docs = Vec::new();
                for &(f, class, t, d) in &other.cells {
                    if class == oc {
                        ids.push(mine[f]);
                        tokens.push(their_factor * t);
                        docs.push(their_factor * d);
                    }
                }
                self.update(c, &ids, &tokens, &docs, their_factor * other.class_docs[oc]);
            }
            for (f, &id) in mine.iter().enumerate() {
                let born = (!was_known[f]).then_some(other.born[f] + n0);
                let last_seen = seen_before[f].max(other.last_seen[f] + n0);
                self.store.set_stamps(id, born, Some(last_seen));
            }
            if let Some(known_before) = known_before {
                self.add_merged_pruning(other, &mine, &known_before, n0);
            }
        }
        if other.pruned_at > 0 {
            self.store.pruned_at = self.store.pruned_at.max(other.pruned_at + n0);
        }
        Ok(())
    }

    /// Record what a merge of a model that had pruned needs for exact unlearning (see
    /// `MergedPruning`): its documents before its last pruning (stamps from `n0 + 1`) hold a
    /// feature this model held before (`known_before`) only from the other's born stamp, or
    /// never if the other did not hold it; the other's own records come along, on this
    /// clock and these ids (`mine[f]` is this model's id of the other's f-th feature).
    fn add_merged_pruning(&mut self, other: &Snapshot, mine: &[u32], known_before: &[u32], n0: u64) {
        let born_there: HashMap<u32, u64> = mine.iter().copied().zip(other.born.iter().copied()).collect();
        let exceptions: Vec<(u32, u64)> = known_before
            .iter()
            .filter_map(|id| match born_there.get(id) {
                None => Some((*id, NEVER)),
                Some(&born) if born > 1 => Some((*id, born + n0)),
                Some(_) => None,
            })
            .collect();
        let here: HashMap<u32, u32> = other.ids.iter().copied().zip(mine.iter().copied()).collect();
        for merged in &other.merged_prunings {
            // a feature the other no longer holds is not in `here`: the new record's NEVER
            // (this model held it) or its born stamp (it did not) already covers it
            let mut exceptions: Vec<(u32, u64)> = (merged.exceptions.iter())
                .filter_map(|&(id, from)| {
                    here.get(&id)
                        .map(|&id| (id, if from == NEVER { NEVER } else { from + n0 }))
                })
                .collect();
            exceptions.sort_unstable();
            self.store.add_merged_pruning(MergedPruning {
                first: merged.first + n0,
                last: merged.last + n0,
                exceptions,
            });
        }
        self.store.add_merged_pruning(MergedPruning {
            first: n0 + 1,
            last: n0 + other.pruned_at,
            exceptions,
        });
        for &(first, last) in &other.forgotten_merges {
            self.store.forget_merge(first + n0, last + n0);
        }
    }

    /// Per feature of `ids` (in V) and class, the weights of the log-linear view:
    /// multinomial log P(w|c); complement w_cw; Bernoulli (log p_cw, log(1 - p_cw)) in
    /// `second`. Row-major (n x K).
    pub fn feature_weights(&mut self, ids: &[u32], s: Smoothing) -> (Vec<f64>, Option<Vec<f64>>) {
        let alpha = s.alpha;
        match self.kind {
            Kind::Multinomial { .. } | Kind::Complement { .. } => {
                let k = self.n_classes();
                let mut scorer = self.scorer(&[s]);
                let mut weights = vec![0.0; ids.len() * k];
                let mut row = RowScratch::new(k);
                for (i, &id) in ids.iter().enumerate() {
                    let (tokens, docs) = row.read(&self.store, id);
                    scorer.add_terms(1.0, tokens, docs, &mut weights[i * k..(i + 1) * k]);
                }
                (weights, None)
            }
            Kind::Bernoulli { .. } => {
                let k = self.n_classes();
                let docs = self.gather_docs(ids);
                let class_docs: Vec<f64> = (0..k).map(|c| self.store.true_class_docs(c)).collect();
                let mut log_p = vec![0.0; docs.len()];
                let mut log_not_p = vec![0.0; docs.len()];
                for (i, &d) in docs.iter().enumerate() {
                    let n_c = class_docs[i % k.max(1)];
                    let denominator = (n_c + 2.0 * alpha).ln();
                    log_p[i] = (d + alpha).ln() - denominator;
                    log_not_p[i] = (documents_without(n_c, d) + alpha).ln() - denominator;
                }
                (log_p, Some(log_not_p))
            }
        }
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A document of these (feature, value) pairs, encoded in the model's feature space.
    pub(crate) fn doc(model: &NaiveBayes, features: &[(&str, f64)]) -> Doc {
        let mut encoder = model.features.encoder(features.len(), 64);
        for &(key, value) in features {
            encoder.add(key.as_bytes(), value);
        }
        encoder.finish()
    }

    fn china_japan(kind: Kind) -> NaiveBayes {
        let mut m = NaiveBayes::new(kind, Prior::Mle, false, false, None, 4);
        let china = [
            vec![("chinese", 2.0), ("beijing", 1.0)],
            vec![("chinese", 2.0), ("shanghai", 1.0)],
            vec![("chinese", 1.0), ("macao", 1.0)],
        ];
        let mut c = None;
        for features in &china {
            let mut d = doc(&m, features);
            c = Some(m.learn(&mut d, c, 1.0, 1.0, 1.0).unwrap());
        }
        let mut d = doc(&m, &[("tokyo", 1.0), ("japan", 1.0), ("chinese", 1.0)]);
        m.learn(&mut d, None, 1.0, 1.0, 1.0).unwrap();
        m
    }

    /// Manning, Raghavan & Schütze, Introduction to Information Retrieval, ch. 13:
    /// P(china | d5) = 0.6898 for the multinomial model with alpha = 1.
    #[test]
    fn multinomial_reproduces_the_textbook_example() {
        let mut m = china_japan(Kind::Multinomial { mu: None });
        let mut d = doc(&m, &[("chinese", 3.0), ("tokyo", 1.0), ("japan", 1.0)]);
        let (active, log_proba) = m.log_posterior(&mut d, m.smoothing(Some(1.0)).unwrap(), true);
        assert_eq!(active, vec![0, 1]);
        assert!((log_proba[0].exp() - 0.6898).abs() < 1e-4);
    }

    /// The same chapter's Bernoulli example: P(china | d5) = 0.19 (0.005 vs 0.022).
    #[test]
    fn bernoulli_reproduces_the_textbook_example() {
        let mut m = china_japan(Kind::Bernoulli { binarize: 0.0 });
        let mut d = doc(&m, &[("chinese", 3.0), ("tokyo", 1.0), ("japan", 1.0)]);
        let (_, log_proba) = m.log_posterior(&mut d, m.smoothing(Some(1.0)).unwrap(), true);
        let expected = 0.005 / (0.005 + 0.022);
        assert!((log_proba[0].exp() - expected).abs() < 0.01, "{}", log_proba[0].exp());
    }

    #[test]
    fn learn_then_unlearn_restores_predictions_and_vocabulary() {
        for kind in [
            Kind::Multinomial { mu: Some(3.0) },
            Kind::Bernoulli { binarize: 0.0 },
            Kind::Complement { norm: true },
        ] {
            let mut m = china_japan(kind);
            let mut probe = doc(&m, &[("chinese", 1.0), ("tokyo", 2.0)]);
            let before = m.log_posterior(&mut probe, m.smoothing(Some(0.5)).unwrap(), true);
            let mut extra = doc(&m, &[("new", 1.0), ("tokyo", 0.3)]);
            m.learn(&mut extra, Some(1), 1.0, 0.7, 1.0).unwrap();
            let mut extra = doc(&m, &[("new", 1.0), ("tokyo", 0.3)]);
            m.unlearn(&mut extra, 1, 0.7, None).unwrap();
            assert_eq!(m.features.vocabulary().unwrap().find(b"new"), None);
            let mut probe = doc(&m, &[("chinese", 1.0), ("tokyo", 2.0)]); // tokens left V: encode again
            let after = m.log_posterior(&mut probe, m.smoothing(Some(0.5)).unwrap(), true);
            for (a, b) in before.1.iter().zip(&after.1) {
                assert!((a - b).abs() < 1e-12, "{kind:?}: {a} vs {b}");
            }
        }
    }

    /// One read of a document's counts for several smoothings (with the candidates' log table)
    /// gives each the very bits scoring with it alone (no table) gives.
    #[test]
    fn scoring_several_smoothings_at_once_gives_each_ones_scores_bit_for_bit() {
        for kind in [
            Kind::Multinomial { mu: None },
            Kind::Multinomial { mu: Some(3.0) },
            Kind::Bernoulli { binarize: 0.0 },
            Kind::Complement { norm: false },
            Kind::Complement { norm: true },
        ] {
            for unseen in [false, true] {
                let mu = match kind {
                    Kind::Multinomial { mu } => mu,
                    _ => None,
                };
                let smoothings: Vec<Smoothing> = [0.01, 0.5, 1.0, 7.0].map(|alpha| Smoothing { alpha, mu }).to_vec();
                let mut alone = china_japan(kind);
                let mut together = china_japan(kind);
                alone.unseen_score = unseen;
                together.unseen_score = unseen;
                together.choose_online(AutoSmoothing::new(smoothings.clone(), 1.0));
                let words = [("chinese", 3.0), ("tokyo", 1.0), ("japan", 0.5), ("nowhere", 2.0)];
                let mut d = doc(&together, &words);
                let all = together.joint_log_likelihoods(&mut d, &smoothings);
                let k = together.n_classes();
                for (j, &s) in smoothings.iter().enumerate() {
                    let mut d = doc(&alone, &words);
                    let one = alone.joint_log_likelihood(&mut d, s);
                    assert_eq!(&all[j * k..(j + 1) * k], &one[..], "{kind:?}, unseen {unseen}, {s:?}");
                }
            }
        }
    }

    #[test]
    fn empty_documents_and_unknown_features_are_refused() {
        let mut m = china_japan(Kind::Multinomial { mu: None });
        let mut empty = doc(&m, &[("chinese", 0.0)]);
        assert_eq!(m.learn(&mut empty, Some(0), 1.0, 1.0, 1.0), Err(NbError::EmptyDocument));
        let mut unknown = doc(&m, &[("chinese", 1.0), ("nowhere", 1.0)]);
        assert_eq!(
            m.unlearn(&mut unknown, 0, 1.0, None),
            Err(NbError::NeverLearned { features: vec![1] })
        );
    }

    /// fuzz/core.rs: a hashed model whose only buckets were dropped, scoring unseen words.
    #[test]
    fn unseen_words_tell_nothing_once_the_vocabulary_is_empty() {
        for kind in [
            Kind::Multinomial { mu: None },
            Kind::Complement { norm: false },
            Kind::Complement { norm: true },
        ] {
            let mut m = NaiveBayes::new(kind, Prior::Mle, true, false, Some(16), 1);
            let mut d = doc(&m, &[("x y", 1.0), ("b", 2.0)]);
            m.learn(&mut d, None, 1.0, 0.5, 1.0).unwrap();
            let d = doc(&m, &[("x y", 1.0), ("b", 2.0)]);
            m.drop_features(&d.ids);
            let mut probe = doc(&m, &[("a", 1.0), ("cheap", 3.0)]);
            let (_, log_proba) = m.log_posterior(&mut probe, m.smoothing(Some(0.5)).unwrap(), true);
            assert_eq!(log_proba, vec![0.0], "{kind:?}");
        }
    }

    /// fuzz/core.rs: Bernoulli counts 2^53 apart; whatever an unlearning is allowed to leave,
    /// every probability stays a number.
    #[test]
    fn bernoulli_scores_stay_numbers_when_counts_are_2_53_apart() {
        let mut m = NaiveBayes::new(Kind::Bernoulli { binarize: 0.0 }, Prior::Mle, true, false, Some(16), 4);
        let mut d = doc(&m, &[("a", 1.0), ("meeting", 1.0)]);
        let spam = m.learn(&mut d, None, 1.0, 0.3, 1.0).unwrap();
        let mut d = doc(&m, &[("b", 1.0)]);
        m.learn(&mut d, None, 1.0, 1.0, 1.0).unwrap();
        let mut d = doc(&m, &[("b", 2.0), ("x y", 1.0)]);
        m.learn(&mut d, Some(spam), 1.0, 1e17, 1.0).unwrap();
        let mut d = doc(&m, &[("meeting", 1.0)]);
        let _ = m.unlearn(&mut d, spam, 1e3, None);
        let mut probe = doc(&m, &[("a", 1.0), ("cheap", 1.0)]);
        let (_, log_proba) = m.log_posterior(&mut probe, m.smoothing(Some(0.5)).unwrap(), true);
        assert!(log_proba.iter().all(|p| !p.is_nan() && *p <= 0.0), "{log_proba:?}");
    }

    #[test]
    fn logsumexp_and_argmax_handle_infinities_and_nan() {
        assert_eq!(logsumexp(&[f64::NEG_INFINITY, f64::NEG_INFINITY]), f64::NEG_INFINITY);
        assert!((logsumexp(&[0.0, 0.0]) - 2f64.ln()).abs() < 1e-15);
        assert!(logsumexp(&[1.0, f64::NAN]).is_nan());
        assert_eq!(argmax(&[1.0, 3.0, 3.0]), 1);
        assert_eq!(argmax(&[1.0, f64::NAN, 5.0]), 1);
    }
}
