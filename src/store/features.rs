//! The features in V: their stamps (born, last seen), which documents' counts a feature still
//! holds after pruning (`holds_document`, `MergedPruning`), and their ids.

use super::{MergedPruning, Store, MAX_DOCUMENTS, MERGED_EXCEPTIONS_BUDGET, NOT_IN_V};

impl Store {
    /// Is `id` a feature in V?
    #[inline]
    pub fn known(&self, id: u32) -> bool {
        self.meta.get(id as usize).is_some_and(|m| m[0].born != NOT_IN_V)
    }

    pub fn born(&self, id: u32) -> Option<u64> {
        self.meta
            .get(id as usize)
            .map(|m| m[0])
            .filter(|m| m.born != NOT_IN_V)
            .map(|m| m.born as u64)
    }

    pub fn last_seen(&self, id: u32) -> Option<u64> {
        self.meta
            .get(id as usize)
            .map(|m| m[0])
            .filter(|m| m.born != NOT_IN_V)
            .map(|m| m.last_seen as u64)
    }

    /// Do feature `id`'s counts hold the document learned at stamp `at`? Yes if it is in V,
    /// born no later, and no merged pruning says otherwise.
    /// (Whether pruning happened since `at` at all is the caller's question: without
    /// pruning every feature of a document still holds it.)
    pub fn holds_document(&self, id: u32, at: u64) -> bool {
        self.born(id).is_some_and(|born| born <= at)
            && self
                .merged_prunings
                .iter()
                .filter(|merged| merged.first <= at && at <= merged.last)
                .all(|merged| merged.holds(id, at))
    }

    /// Keep a merged pruning (empty ones say nothing), forgetting the oldest records past
    /// the budget (`MERGED_EXCEPTIONS_BUDGET`).
    pub fn add_merged_pruning(&mut self, merged: MergedPruning) {
        if merged.exceptions.is_empty() {
            return;
        }
        self.merged_prunings.push(merged);
        let budget = MERGED_EXCEPTIONS_BUDGET.max(2 * self.n_features);
        let mut total: usize = self.merged_prunings.iter().map(|m| m.exceptions.len()).sum();
        let mut cut = 0;
        while total > budget && cut < self.merged_prunings.len() {
            total -= self.merged_prunings[cut].exceptions.len();
            cut += 1;
        }
        let forgotten: Vec<(u64, u64)> = self.merged_prunings.drain(..cut).map(|m| (m.first, m.last)).collect();
        for (first, last) in forgotten {
            self.forget_merge(first, last);
        }
    }

    /// Forget what the documents at stamps `first..=last` still hold (see `merge_forgotten`).
    pub fn forget_merge(&mut self, first: u64, last: u64) {
        self.forgotten_merges.push((first, last));
        self.forgotten_merges.sort_unstable();
        let mut ranges: Vec<(u64, u64)> = Vec::with_capacity(self.forgotten_merges.len());
        for &(first, last) in &self.forgotten_merges {
            match ranges.last_mut() {
                Some(previous) if first <= previous.1.saturating_add(1) => previous.1 = previous.1.max(last),
                _ => ranges.push((first, last)),
            }
        }
        self.forgotten_merges = ranges;
    }

    /// Was the document learned at `at` merged in from a model that had pruned, with the
    /// record of what it still holds forgotten (`add_merged_pruning`)?
    pub fn merge_forgotten(&self, at: u64) -> bool {
        // ascending and disjoint: the last range starting at or before `at` is the only candidate
        let i = self.forgotten_merges.partition_point(|&(first, _)| first <= at);
        i > 0 && at <= self.forgotten_merges[i - 1].1
    }

    /// Set the stamps of a feature in V (merging, learn_many, loading).
    pub fn set_stamps(&mut self, id: u32, born: Option<u64>, last_seen: Option<u64>) {
        if !self.known(id) {
            return;
        }
        let meta = &mut self.meta.get_mut(id as usize)[0];
        if let Some(born) = born {
            meta.born = born.min(MAX_DOCUMENTS) as u32;
        }
        if let Some(seen) = last_seen {
            meta.last_seen = seen.min(MAX_DOCUMENTS) as u32;
        }
    }

    /// Ids of the features in V, ascending.
    pub fn feature_ids(&self) -> Vec<u32> {
        (0..self.rows as u32).filter(|&id| self.known(id)).collect()
    }
}
