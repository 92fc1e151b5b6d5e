//! Changing counts: the room an addition needs, `add`, a removal prepared (checked
//! completely) then committed, and dropping features; features whose counts all return to
//! zero leave V.

use super::{
    most_documents_after, move_in_histogram, settle, Cells, Removal, Store, StoreError, CANCELLATION, MAX_DOCUMENTS,
    MAX_STORED, MIN_SCALE, NOT_IN_V, OUT_OF_V, PREFETCH_AHEAD, ROUNDING_TOLERANCE,
};

impl Store {
    /// Refuse an addition to class c (None: a new class) that would overflow: its totals
    /// after `decay(factor)` and the addition (true units) must stay below MAX_STORED.
    pub fn check_room(&self, c: Option<usize>, token_sum: f64, docs_sum: f64, factor: f64) -> Result<(), StoreError> {
        let (mut scale, mut kept) = (self.scale * factor, 1.0);
        if scale < MIN_SCALE {
            // decay folds the scale into the counts first
            kept = self.scale * factor;
            scale = 1.0;
        }
        let old_tokens = c.map_or(0.0, |c| self.class_tokens[c] * kept);
        let old_docs = c.map_or(0.0, |c| self.class_docs[c] * kept);
        let tokens = old_tokens + token_sum / scale;
        let docs = old_docs + docs_sum / scale;
        if tokens < MAX_STORED && docs < MAX_STORED {
            Ok(())
        } else {
            Err(StoreError::Overflow {
                class: c,
                tokens: token_sum,
                docs: docs_sum,
            })
        }
    }

    /// Add true-count deltas (all >= 0) to class c: `token_delta[i]` and `doc_delta[i]` to
    /// the cells of `ids[i]` (distinct), `docs_delta` to N_c. New features enter V stamped
    /// `born = last_seen = n_learned`; the others get `last_seen = n_learned`.
    /// The caller has checked the room (`check_room`); this cannot fail.
    pub fn add(&mut self, c: usize, ids: &[u32], token_delta: &[f64], doc_delta: &[f64], docs_delta: f64) {
        let unscaled = self.scale == 1.0;
        let stamp = self.n_learned.min(MAX_DOCUMENTS) as u32;
        let mut token_sum = 0.0;
        for (i, &id) in ids.iter().enumerate() {
            if let Some(&ahead) = ids.get(i + PREFETCH_AHEAD) {
                self.prefetch(ahead);
                self.meta.prefetch(ahead as usize);
            }
            let (dt, dd) = if unscaled {
                (token_delta[i], doc_delta[i])
            } else {
                (token_delta[i] / self.scale, doc_delta[i] / self.scale)
            };
            token_sum += dt;
            let old_d = match &mut self.cells {
                // dense rows: one access to the row (the common case, kept short)
                Cells::Dense { k_cap, rows } => {
                    if id as usize >= self.rows {
                        self.rows = id as usize + 1;
                    }
                    let row = rows.get_mut(id as usize);
                    let old_d = row[*k_cap + c];
                    row[c] += dt;
                    row[*k_cap + c] = old_d + dd;
                    old_d
                }
                Cells::Sparse { .. } => {
                    let (old_t, old_d) = self.cell(id, c);
                    self.set_cell(id, c, old_t + dt, old_d + dd);
                    old_d
                }
            };
            if let Some(h) = self.histograms.as_mut() {
                move_in_histogram(&mut h[c], old_d, old_d + dd);
            }
            let meta = &mut self.meta.get_mut(id as usize)[0];
            if meta.born == NOT_IN_V {
                meta.born = stamp;
                self.n_features += 1;
            }
            meta.last_seen = stamp;
        }
        self.class_docs[c] += if unscaled { docs_delta } else { docs_delta / self.scale };
        self.class_tokens[c] += token_sum;
        self.class_version[c] += 1;
        self.version += 1;
    }

    /// Check a removal (true-count deltas, all <= 0) from class c and compute the new
    /// counts; changes nothing.
    ///
    /// Refused when a count would become negative (it was never learned), or when class c
    /// would be left with no documents but with feature counts (the documents removed are
    /// not the ones that were learned as c). When no cell of c is left, T_c is exactly 0.
    pub fn prepare_removal(
        &self,
        c: usize,
        ids: &[u32],
        token_delta: &[f64],
        doc_delta: &[f64],
        docs_delta: f64,
    ) -> Result<Removal, StoreError> {
        let scale = self.scale;
        let mut old = Vec::with_capacity(ids.len());
        let mut new = Vec::with_capacity(ids.len());
        let mut token_sum = 0.0;
        let mut negative = Vec::new();
        for (i, &id) in ids.iter().enumerate() {
            let (t, d) = self.cell(id, c);
            let (dt, dd) = (token_delta[i] / scale, doc_delta[i] / scale);
            token_sum += token_delta[i];
            let (nt, nd) = (settle(t, dt), settle(d, dd));
            if (nt < 0.0 || nd < 0.0) && negative.len() < 3 {
                negative.push(id);
            }
            old.push((t, d));
            new.push((nt, nd));
        }
        if !negative.is_empty() {
            return Err(StoreError::NegativeCounts {
                class: c,
                ids: negative,
            });
        }
        let class_docs = settle(self.class_docs[c], docs_delta / scale);
        let mut class_tokens = settle(self.class_tokens[c], token_sum / scale);
        if class_docs < 0.0 {
            return Err(StoreError::TooFewDocuments {
                class: c,
                has: self.class_docs[c] * scale,
                remove: -docs_delta,
            });
        }
        if class_docs == 0.0 {
            // Rare (a class loses its last document), so counting its cells may cost O(cells).
            let was = old.iter().filter(|&&(t, d)| t != 0.0 || d != 0.0).count();
            let now = new.iter().filter(|&&(t, d)| t != 0.0 || d != 0.0).count();
            let left = self.count_class_cells(c) + now - was;
            if left > 0 {
                return Err(StoreError::CellsWithoutDocuments { class: c, left });
            }
            class_tokens = 0.0; // T_c is a sum over no cell: drop any rounding residue
        } else if class_tokens < CANCELLATION * -(token_sum / scale) {
            // Most of T_c leaves: the running total kept the rounding of counts 2^53 apart
            // (1e17 learned into T_c = 2 made it 1e17, and taking 1e17 away left 0), so T_c is
            // summed afresh from the cells that stay. Rare; O(features).
            class_tokens = self.class_tokens_after(c, ids, &new);
        }
        if let Some(histograms) = &self.histograms {
            // D_cf <= N_c, or P(w|c) = (D_cf + alpha) / (N_c + 2 alpha) passes 1 and log(1 - P) is NaN
            let most = most_documents_after(&histograms[c], &old, &new);
            if most > class_docs * (1.0 + ROUNDING_TOLERANCE) {
                return Err(StoreError::FeatureInMoreDocuments {
                    class: c,
                    docs: class_docs * scale,
                    feature_docs: most * scale,
                });
            }
        }
        Ok(Removal {
            class: c,
            ids: ids.to_vec(),
            old,
            new,
            class_docs,
            class_tokens: class_tokens.max(0.0),
        })
    }

    /// Write a removal checked by `prepare_removal`. Returns the features that left V (no
    /// count left in any class): the caller frees their vocabulary ids.
    pub fn commit(&mut self, removal: Removal) -> Vec<u32> {
        let c = removal.class;
        for ((&id, &(_, old_d)), &(t, d)) in removal.ids.iter().zip(&removal.old).zip(&removal.new) {
            if let Some(h) = self.histograms.as_mut() {
                move_in_histogram(&mut h[c], old_d, d);
            }
            self.set_cell(id, c, t, d);
        }
        self.class_docs[c] = removal.class_docs;
        self.class_tokens[c] = removal.class_tokens;
        self.class_version[c] += 1;
        self.version += 1;
        self.bury(&removal.ids)
    }

    /// Take out of V the features among `ids` (in V) that have no cell left.
    pub(super) fn bury(&mut self, ids: &[u32]) -> Vec<u32> {
        let dead: Vec<u32> = ids
            .iter()
            .copied()
            .filter(|&id| self.known(id) && !self.has_cells(id))
            .collect();
        for &id in &dead {
            self.meta.get_mut(id as usize)[0] = OUT_OF_V;
            self.n_features -= 1;
        }
        dead
    }

    /// T_c summed over the cells of class c, with `new` in place of the cells of `ids`.
    fn class_tokens_after(&self, c: usize, ids: &[u32], new: &[(f64, f64)]) -> f64 {
        let replaced: hashbrown::HashSet<u32, foldhash::fast::FixedState> = ids.iter().copied().collect();
        let kept: f64 = (0..self.rows as u32)
            .filter(|id| !replaced.contains(id))
            .map(|id| self.cell(id, c).0)
            .sum();
        kept + new.iter().map(|&(t, _)| t).sum::<f64>()
    }

    fn count_class_cells(&self, c: usize) -> usize {
        let mut n = 0;
        for id in 0..self.rows as u32 {
            self.for_each_cell(id, |class, _, _| n += (class == c) as usize);
        }
        n
    }

    /// Remove whole features: their cells, their share of T_c; returns those that were in V
    /// (the caller frees their ids). A class left with no cell gets T_c = 0 exactly.
    /// O(cells): meant for pruning passes, which are rare.
    pub fn drop_features(&mut self, ids: &[u32]) -> Vec<u32> {
        let mut ids: Vec<u32> = ids.iter().copied().filter(|&id| self.known(id)).collect();
        ids.sort_unstable();
        ids.dedup();
        if ids.is_empty() {
            return ids;
        }
        let k = self.n_classes();
        let mut removed_tokens = vec![0.0; k];
        let mut touched = vec![false; k];
        for &id in &ids {
            let mut cells = Vec::new();
            self.for_each_cell(id, |c, t, d| cells.push((c, t, d)));
            for (c, t, d) in cells {
                removed_tokens[c] += t;
                touched[c] = true;
                if let Some(h) = self.histograms.as_mut() {
                    move_in_histogram(&mut h[c], d, 0.0);
                }
                self.set_cell(id, c, 0.0, 0.0);
            }
            self.meta.get_mut(id as usize)[0] = OUT_OF_V;
        }
        let mut remaining = vec![0usize; k];
        for id in 0..self.rows as u32 {
            self.for_each_cell(id, |c, _, _| remaining[c] += 1);
        }
        for c in 0..k {
            if touched[c] {
                self.class_version[c] += 1;
            }
            self.class_tokens[c] = if remaining[c] == 0 {
                0.0
            } else {
                (self.class_tokens[c] - removed_tokens[c]).max(0.0)
            };
        }
        self.version += 1;
        self.n_features -= ids.len();
        self.pruned_at = self.n_learned;
        // A dropped feature comes back (if ever) born after every merged document: its
        // exceptions say nothing any more.
        for merged in &mut self.merged_prunings {
            merged.exceptions.retain(|(id, _)| ids.binary_search(id).is_err());
        }
        self.merged_prunings.retain(|merged| !merged.exceptions.is_empty());
        ids
    }
}
