//! Forgetting: the clock and its decay, the rescale of the store, dropping features and the
//! pruning policies' selection.

use super::NaiveBayes;

impl NaiveBayes {
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
}
