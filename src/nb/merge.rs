//! Merging another model's counts (`snapshot` of one, `merge` into the other), and the
//! pruning it had done.

use super::{HashMap, NaiveBayes, NbError, Snapshot};
use crate::smoothing::EvidenceError;
use crate::space::Features;
use crate::store::{MergedPruning, StoreError, MAX_DOCUMENTS, NEVER};

impl NaiveBayes {
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
}
