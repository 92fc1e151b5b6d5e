//! Learning: the checks made before anything changes, one document, a batch, and the count
//! change they all go through (`update`).

use super::{HashMap, NaiveBayes, NbError, Present};
use crate::doc::{Doc, UNKNOWN};
use crate::smoothing::AutoSmoothing;
use crate::store::{StoreError, MAX_DOCUMENTS};

impl NaiveBayes {
    /// Add counts to class c (true units; the caller checked the room).
    pub fn update(&mut self, c: usize, ids: &[u32], token_delta: &[f64], doc_delta: &[f64], docs_delta: f64) {
        let before = self.before_change(ids);
        self.store.add(c, ids, token_delta, doc_delta, docs_delta);
        self.after_change(ids, before);
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
        let present = self.check_learn_many(docs, classes, new_prior_weights.len(), weights, factor)?;
        self.learn_checked(docs, classes, new_prior_weights, weights, factor, &present)
    }

    /// `learn_many` for a model choosing its smoothing online: the evidence records every row
    /// as `learn` of each in turn would (src/smoothing.rs: a row the schedule scores is scored,
    /// by `score`, against the counts of the rows before it; the others are passed over), and
    /// the rows from one scored row to the next are learned as one batch. The counts before
    /// the batch age by `factor` first; the rows scored see the rows before them with the
    /// weights they are learned with (those of a model that forgets differ from `learn`'s in
    /// turn: its callers learn it a row at a time).
    pub fn learn_many_choosing(
        &mut self,
        docs: &mut [Doc],
        classes: &[usize],
        new_prior_weights: &[f64],
        weights: &[f64],
        factor: f64,
        mut score: impl FnMut(&mut NaiveBayes, &mut Doc),
    ) -> Result<(), (usize, NbError)> {
        let present = self.check_learn_many(docs, classes, new_prior_weights.len(), weights, factor)?;
        let k0 = self.n_classes();
        let new = (k0, new_prior_weights);
        // which classes have documents before each row (the rows before it learned)
        let mut has_documents: Vec<bool> = self.store.class_docs().iter().map(|&d| d > 0.0).collect();
        has_documents.resize(k0 + new_prior_weights.len(), false);
        let mut with_documents = has_documents.iter().filter(|&&h| h).count();
        let (mut start, mut factor) = (0, factor);
        for row in 0..docs.len() {
            let (c, weight) = (classes[row], weights[row]);
            if AutoSmoothing::counts(with_documents, has_documents[c], weight) {
                if self.auto.as_ref().is_some_and(|auto| auto.schedule().is_some()) {
                    // the rows before it first, then its scores for the counts they leave
                    self.learn_rows(docs, classes, new, weights, factor, &present, start..row)?;
                    (start, factor) = (row, 1.0);
                    score(self, &mut docs[row]);
                    self.record_evidence(&mut docs[row], c, weight);
                } else if let Some(auto) = self.auto.as_mut() {
                    auto.pass_over();
                }
            }
            if weight > 0.0 && !has_documents[c] {
                has_documents[c] = true;
                with_documents += 1;
            }
        }
        self.learn_rows(docs, classes, new, weights, factor, &present, start..docs.len())
    }

    /// `learn_checked` of the rows `rows` of a checked batch (`classes`, `new_prior_weights`
    /// and `present` those of the whole batch, begun with `k0` classes: its new classes are
    /// numbered in order of first appearance, so those first seen in `rows` are the next ones).
    #[allow(clippy::too_many_arguments)]
    fn learn_rows(
        &mut self,
        docs: &mut [Doc],
        classes: &[usize],
        (k0, new_prior_weights): (usize, &[f64]),
        weights: &[f64],
        factor: f64,
        present: &[Present],
        rows: std::ops::Range<usize>,
    ) -> Result<(), (usize, NbError)> {
        if rows.is_empty() {
            return Ok(());
        }
        let k = self.n_classes();
        let end = classes[rows.clone()].iter().map(|&c| c + 1).fold(k, usize::max);
        let offset = rows.start;
        self.learn_checked(
            &mut docs[rows.clone()],
            &classes[rows.clone()],
            &new_prior_weights[k - k0..end - k0],
            &weights[rows.clone()],
            factor,
            &present[rows],
        )
        .map_err(|(row, e)| (if row == usize::MAX { row } else { offset + row }, e))
    }

    /// Learn a batch `check_learn_many` accepted (`present`: its output).
    fn learn_checked(
        &mut self,
        docs: &mut [Doc],
        classes: &[usize],
        new_prior_weights: &[f64],
        weights: &[f64],
        factor: f64,
        present: &[Present],
    ) -> Result<(), (usize, NbError)> {
        let n = docs.len();
        let k = self.n_classes();
        let n_new = new_prior_weights.len();
        let counted = |row: usize| weights[row] > 0.0;
        let n0 = self.store.n_learned;
        {
            let mut all: Vec<&mut Doc> = docs.iter_mut().collect();
            self.advance_clock_for(&mut all, n as u64, factor);
        }
        // Ids for every new token of the batch's counted rows (rows so old that nothing of
        // them is left add nothing; their features already in V still get seen).
        for (row, (doc, (positions, _))) in docs.iter_mut().zip(present).enumerate() {
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
}
