//! Scoring: a document's joint log-likelihood under one smoothing or several at once (one
//! `Scorer`), its posterior, its score split by feature, and the features' weights.

use super::scorer::{documents_without, RowScratch, Scorer, Terms};
use super::{log_posterior, Contributions, Kind, Known, NaiveBayes, Smoothing};
use crate::doc::{Doc, UNKNOWN};
use crate::space::Features;
use crate::store::PREFETCH_AHEAD;

impl NaiveBayes {
    /// True token counts of known features: row-major (n x K).
    pub(super) fn gather_tokens(&self, ids: &[u32]) -> Vec<f64> {
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
        for (i, (row, &id)) in docs.chunks_exact_mut(k.max(1)).zip(ids).enumerate() {
            if let Some(&ahead) = ids.get(i + PREFETCH_AHEAD) {
                self.store.prefetch(ahead);
            }
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
        for (i, (&id, &x)) in doc.ids.iter().zip(&doc.values).enumerate() {
            if let Some(&ahead) = doc.ids.get(i + PREFETCH_AHEAD) {
                self.store.prefetch(ahead);
            }
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

    /// log P(x | c) without the class prior, for every class of the store (NaN for the
    /// inactive ones): the known features' terms plus the rest, the prior taken out where
    /// the joint log-likelihood holds it (ComplementNB's only with a single active class).
    pub fn log_likelihood(&mut self, known: &Known, s: Smoothing) -> Vec<f64> {
        let split = self.contributions(known, s);
        let k = self.n_classes();
        let mut prior = Vec::new();
        self.log_prior(&mut prior);
        let prior_added = !matches!(self.kind, Kind::Complement { .. }) || self.active().len() == 1;
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
        out
    }
}
