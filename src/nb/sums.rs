//! The sums derived from the counts that predictions need: Bernoulli's absent-word sums and
//! ComplementNB's normaliser, kept in step with every count change (`before_change` /
//! `after_change`) and re-derived when out of step.

use super::scorer::{complement_count, documents_without, LnGrid};
use super::{AbsentSum, Kind, NaiveBayes, Normaliser, REDERIVE_EVERY};

impl NaiveBayes {
    /// sum over w in V of log(1 - p_cw) for every class:
    /// sum_w log(D_c - D_cw + alpha) - |V| log(D_c + 2*alpha), where the first sum needs,
    /// per class, only how many features share each value of D_cw (the store's histogram):
    /// words with D_cw = 0 all contribute log(D_c + alpha). O(distinct values), cached.
    pub(super) fn absent_log_sum(&mut self, alpha: f64) -> Vec<f64> {
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
    pub(super) fn complement_log_denominator(&self, alpha: f64) -> Vec<f64> {
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
    pub(super) fn theta_sums(&mut self, alpha: f64, log_denominator: &[f64]) -> Vec<f64> {
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

    /// The normalisers to move along with a count change (complement models with `norm`):
    /// those still in step with the counts; the others are dropped (re-derived when needed).
    pub(super) fn before_change(&mut self, ids: &[u32]) -> Vec<(usize, Vec<f64>, f64)> {
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

    pub(super) fn after_change(&mut self, ids: &[u32], before: Vec<(usize, Vec<f64>, f64)>) {
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
}
