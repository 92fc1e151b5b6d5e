//! The per-prediction formulas: `Scorer` (each model's per-feature term under J smoothings
//! at once), `LnGrid` (the candidates' table of ln(n + alpha)), the reading of a feature's
//! row of counts, and the small formulas they share.

use crate::store::Store;
use std::sync::Arc;

/// Reads a feature's row of stored counts (no copy for dense rows) and scales it.
pub(super) struct RowScratch {
    tokens: Vec<f64>,
    docs: Vec<f64>,
}

impl RowScratch {
    pub(super) fn new(k: usize) -> Self {
        RowScratch {
            tokens: vec![0.0; k],
            docs: vec![0.0; k],
        }
    }

    /// True (tokens, docs) of feature `id` in every class: a dense row as it stands when
    /// the scale is 1, else a scaled copy.
    #[inline]
    pub(super) fn read<'a>(&'a mut self, store: &'a Store, id: u32) -> (&'a [f64], &'a [f64]) {
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
pub(super) struct Scorer {
    /// The J alphas, and ln(n + alpha) looked up for small integers n where a table is kept.
    pub(super) logs: LnGrid,
    pub(super) terms: Terms,
    /// The Dirichlet backgrounds of one feature, per smoothing.
    scratch: Vec<f64>,
}

pub(super) enum Terms {
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
    pub(super) fn new(logs: LnGrid, terms: Terms) -> Self {
        let j = logs.alphas.len();
        Scorer {
            logs,
            terms,
            scratch: vec![0.0; j],
        }
    }

    /// J, the number of smoothings.
    pub(super) fn width(&self) -> usize {
        self.logs.alphas.len()
    }

    /// Does a feature with value x have a term (Bernoulli: only present words)?
    #[inline]
    pub(super) fn counts(&self, x: f64) -> bool {
        match &self.terms {
            Terms::Bernoulli { binarize, .. } => x > *binarize,
            _ => true,
        }
    }

    /// acc[c][j] += the term of a known feature with value x and true counts (tokens, docs)
    /// under smoothing j (`acc` is K x J).
    #[inline]
    pub(super) fn add_terms(&mut self, x: f64, tokens: &[f64], docs: &[f64], acc: &mut [f64]) {
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
    pub(super) fn add_unseen(&self, unseen_sum: f64, unseen_present: usize, rest: &mut [f64]) {
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
    pub(super) alphas: Vec<f64>,
    table: Option<Arc<[f64]>>,
}

/// Entries of the table per candidate (8 KiB each). On 20 Newsgroups 94% of the counts a
/// prediction reads are below it; on SpamAssassin 74% (its header words are in every message).
pub const LN_TABLE_SIZE: usize = 4096;

impl LnGrid {
    /// The alphas with a table (a model's candidates).
    pub(super) fn tabled(alphas: Vec<f64>) -> Self {
        let table = (0..LN_TABLE_SIZE)
            .flat_map(|n| alphas.iter().map(move |&a| (n as f64 + a).ln()))
            .collect();
        LnGrid {
            alphas,
            table: Some(table),
        }
    }

    /// The alphas, every log computed.
    pub(super) fn computed(alphas: Vec<f64>) -> Self {
        LnGrid { alphas, table: None }
    }

    /// The row of the table for t (its J logs), when t is an integer the table holds.
    #[inline]
    pub(super) fn row(&self, t: f64) -> Option<&[f64]> {
        let table = self.table.as_ref()?;
        let n = t as usize; // saturates; NaN gives 0, which differs from t
        let j = self.alphas.len();
        (n < LN_TABLE_SIZE && n as f64 == t).then(|| &table[n * j..(n + 1) * j])
    }

    /// ln(t + alpha_j), `row` being `self.row(t)`.
    #[inline(always)]
    pub(super) fn ln_plus(&self, t: f64, row: Option<&[f64]>, j: usize) -> f64 {
        match row {
            Some(row) => row[j],
            None => (t + self.alphas[j]).ln(),
        }
    }

    /// This grid's logs for one of its alphas (a grid of that alpha alone, with no table).
    pub(super) fn one(&self, alpha: f64) -> (Self, usize) {
        match self.alphas.iter().position(|&a| a.to_bits() == alpha.to_bits()) {
            Some(j) => (self.clone(), j),
            None => (LnGrid::computed(vec![alpha]), 0),
        }
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.alphas.capacity() * 8 + self.table.as_ref().map_or(0, |t| t.len() * 8)
    }
}

/// N_c - D_cw, the documents of class c without word w (Bernoulli's 1 - P(w|c) numerator):
/// never below 0. D_cw <= N_c holds up to rounding (Store::prepare_removal refuses an
/// unlearning that breaks it), but with counts 2^53 apart the rounding of N_c alone is
/// more than alpha, and log(N_c - D_cw + alpha) would be NaN (found by fuzz/core.rs).
#[inline]
pub(super) fn documents_without(class_docs: f64, docs: f64) -> f64 {
    (class_docs - docs).max(0.0)
}

/// F_notc = sum over the other classes of counts[c'] (total = the sum of all counts):
/// total - counts[c] where that is exact enough, summed over the others where class c holds
/// most of the total, since total - counts[c] then cancels away whatever the others hold
/// past 2^53 apart (a class total of 1e17 and one of 1 gave F = 0, log 0, NaN).
#[inline]
pub(super) fn complement_count(counts: &[f64], c: usize, total: f64) -> f64 {
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
pub(super) fn complement_weight(theta: f64, sum: Option<f64>, n_features: usize) -> f64 {
    match sum {
        None => -theta,
        Some(_) if n_features <= 1 => 0.0,
        Some(sum) => theta / sum,
    }
}
