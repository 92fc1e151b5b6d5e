//! Unlearning: a removal prepared (checked completely) before it is committed (`remove`), so a
//! refused unlearning changes nothing; one document or a batch.

use super::{HashMap, NaiveBayes, NbError};
use crate::doc::{Doc, UNKNOWN};
use crate::space::Features;
use crate::store::Removal;

impl NaiveBayes {
    /// Write a checked removal; features left without counts leave V.
    pub fn remove(&mut self, removal: Removal, ids: &[u32]) {
        let before = self.before_change(ids);
        let gone = self.store.commit(removal);
        self.after_change(ids, before);
        self.features.release(&gone);
    }

    /// Would `unlearn` accept this document? Changes nothing.
    pub fn check_unlearn(&self, doc: &mut Doc, c: usize, weight: f64, learned_at: Option<u64>) -> Result<(), NbError> {
        let (ids, deltas) = self.prepare_unlearn(doc, weight, learned_at)?;
        self.store
            .prepare_removal(c, &ids, &deltas, &vec![-weight; ids.len()], -weight)?;
        Ok(())
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
}
