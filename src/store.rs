//! The growable count store: classes and the (feature, class) count tables of one model.
//!
//! Everything a naive Bayes model knows is a count. For features f and classes c (counts
//! may be fractional: sample weights):
//!
//! - `N_c`  documents of class c (sum of their weights)      -> `class_docs`
//! - `T_c`  tokens of class c, T_c = sum_f T_cf              -> `class_tokens`
//! - `T_cf` token count of f in class c                      -> cell `tokens`
//! - `D_cf` documents of class c that contain f              -> cell `docs`
//!
//! Counts are stored divided by one global `scale` (true = stored * scale): exponential
//! forgetting multiplies every count by gamma with one multiplication of the scale instead
//! of an O(|V|) pass. V is the set of features with a nonzero cell: a feature whose counts
//! all return to zero leaves V (the caller frees its vocabulary id), so |V| and every
//! smoothing denominator are as if it had never been seen.
//!
//! Every change goes through `add` (learning, merging) or `prepare_removal` + `commit`
//! (unlearning): a removal is checked completely before anything is written, so a refused
//! change leaves the store as it was.
//!
//! Two cell layouts: dense rows of K token counts and K document counts per feature while
//! the classes are few, sparse rows (the nonzero cells of a feature) beyond
//! `dense_max_classes`. Rows live in chunks of `CHUNK` features allocated on first touch,
//! so growth never copies the table and a hashed model touches only the buckets it uses.

/// Below this global scale the stored counts are folded back (`rescale`): 1e-200 leaves
/// ~1e100 of headroom before stored counts could overflow a float64.
pub const MIN_SCALE: f64 = 1e-200;
/// Class totals may not grow past this (stored units): every cell is at most its class
/// total (T_cf <= T_c, D_cf <= N_c), so no count can reach float64 overflow.
pub const MAX_STORED: f64 = 1e300;
/// A subtraction leaving less than this fraction of the amount subtracted is rounding noise
/// of fractional weights (0.1 + 0.2 - 0.2 != 0.1): it is snapped to an exact zero, so that
/// unlearning what was learned empties the cell and lets the feature leave V.
pub const ROUNDING_TOLERANCE: f64 = 1e-9;
/// A removal that takes all but this share of T_c away re-sums T_c from the cells: past it,
/// the rounding the running total carries may be a visible part of what is left.
const CANCELLATION: f64 = 1e-3;
/// Features per chunk of rows.
const CHUNK: usize = 2048;
/// `Meta::born` of a feature that is not in V.
const NOT_IN_V: u32 = u32::MAX;
/// The document clock runs on u32 stamps; it stops one short of `NOT_IN_V`.
pub const MAX_DOCUMENTS: u64 = (u32::MAX - 1) as u64;

/// A nonzero (feature, class) cell of a sparse row, in stored units.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Cell {
    class: u32,
    tokens: f64,
    docs: f64,
}

/// Document stamps of a feature on the `n_learned` clock: when it last entered V, and the
/// last learned document containing it (expiry reads the second, unlearning after a
/// pruning pass the first).
#[derive(Clone, Copy, Debug)]
struct Meta {
    born: u32,
    last_seen: u32,
}

const OUT_OF_V: Meta = Meta {
    born: NOT_IN_V,
    last_seen: 0,
};

/// A vector of fixed-size chunks allocated on first write.
#[derive(Clone, Debug)]
struct Chunked<T: Copy> {
    chunks: Vec<Option<Box<[T]>>>,
    width: usize,
    fill: T,
}

impl<T: Copy> Chunked<T> {
    fn new(width: usize, fill: T) -> Self {
        Chunked {
            chunks: Vec::new(),
            width,
            fill,
        }
    }

    #[inline]
    fn get(&self, row: usize) -> Option<&[T]> {
        let chunk = self.chunks.get(row / CHUNK)?.as_ref()?;
        let at = (row % CHUNK) * self.width;
        Some(&chunk[at..at + self.width])
    }

    #[inline]
    fn get_mut(&mut self, row: usize) -> &mut [T] {
        let index = row / CHUNK;
        if index >= self.chunks.len() {
            self.chunks.resize_with(index + 1, || None);
        }
        let (width, fill) = (self.width, self.fill);
        let chunk = self.chunks[index].get_or_insert_with(|| vec![fill; CHUNK * width].into_boxed_slice());
        let at = (row % CHUNK) * width;
        &mut chunk[at..at + width]
    }

    fn heap_bytes(&self) -> usize {
        self.chunks.capacity() * std::mem::size_of::<Option<Box<[T]>>>()
            + self.chunks.iter().flatten().count() * CHUNK * self.width * std::mem::size_of::<T>()
    }
}

#[derive(Clone, Debug)]
enum Cells {
    /// Row of a feature: K token counts then K document counts (`k_cap` >= K columns each).
    Dense { k_cap: usize, rows: Chunked<f64> },
    /// Row of a feature: its nonzero cells, by class.
    Sparse { rows: Vec<Vec<Cell>> },
}

/// Why a change was refused (the store is unchanged). Ids are feature ids, classes indices.
#[derive(Debug, PartialEq)]
pub enum StoreError {
    /// Counts of these features (up to 3) in the class would become negative.
    NegativeCounts { class: usize, ids: Vec<u32> },
    /// The class has fewer documents than are removed (true units).
    TooFewDocuments { class: usize, has: f64, remove: f64 },
    /// The class would keep feature counts but no document.
    CellsWithoutDocuments { class: usize, left: usize },
    /// A feature would be in more of the class's documents than the class has (true units;
    /// Bernoulli, D_cf <= N_c): the documents removed are not the ones that were learned.
    FeatureInMoreDocuments { class: usize, docs: f64, feature_docs: f64 },
    /// The totals of a class (None: a new one) would overflow.
    Overflow {
        class: Option<usize>,
        tokens: f64,
        docs: f64,
    },
    /// The document clock reached `MAX_DOCUMENTS`.
    ClockFull,
}

/// A checked removal from one class (stored units), ready for `commit`.
#[derive(Debug)]
pub struct Removal {
    class: usize,
    ids: Vec<u32>,
    old: Vec<(f64, f64)>,
    new: Vec<(f64, f64)>,
    class_docs: f64,
    class_tokens: f64,
}

/// old + delta, a subtraction's rounding residue snapped to exactly zero.
#[inline]
pub fn settle(old: f64, delta: f64) -> f64 {
    let new = old + delta;
    if delta < 0.0 && new.abs() <= ROUNDING_TOLERANCE * delta.abs() {
        0.0
    } else {
        new
    }
}

/// Documents merged in from a model that had pruned: this model's stamps `first..=last`, the
/// other model's documents learned before its last pruning. For them a feature's born stamp
/// is not enough: its counts may hold this model's earlier documents and not those of the
/// other, which had dropped it. `exceptions` lists the features (ids here, ascending) whose
/// counts hold such a document only from a later stamp (`NEVER`: none of them): the
/// features this model held before the merge that the other did not hold from its first
/// document. Any other feature follows its born stamp. Exact, and costs memory only for
/// models merged from pruned ones; a dropped feature leaves every record (`drop_features`).
#[derive(Clone, Debug, PartialEq)]
pub struct MergedPruning {
    pub first: u64,
    pub last: u64,
    pub exceptions: Vec<(u32, u64)>,
}

/// An exception's stamp for a feature the other model did not hold at all.
pub const NEVER: u64 = u32::MAX as u64;

/// Exceptions kept at most: this many, or twice the features in V if more. Past it the
/// oldest records are forgotten (their documents cannot be unlearned after a pruning: an
/// error says so, never a wrong count), so that merging pruned models again and again, as
/// `distributed.learn` with `max_features` does, keeps memory bounded.
pub const MERGED_EXCEPTIONS_BUDGET: usize = 1 << 16;

impl MergedPruning {
    /// Do feature `id`'s counts hold the document learned at `at` (in `first..=last`), as
    /// far as this record says?
    fn holds(&self, id: u32, at: u64) -> bool {
        match self.exceptions.binary_search_by_key(&id, |&(feature, _)| feature) {
            Ok(i) => self.exceptions[i].1 <= at,
            Err(_) => true,
        }
    }

    /// The heap bytes of `exceptions`.
    fn heap_bytes(&self) -> usize {
        self.exceptions.capacity() * std::mem::size_of::<(u32, u64)>()
    }
}

/// Per class: {stored D_cf value (bits): number of features with that value}, over the
/// features with D_cf > 0. Bernoulli's sum over absent words needs only this.
pub type Histogram = hashbrown::HashMap<u64, u64, foldhash::fast::FixedState>;

#[derive(Clone, Debug)]
pub struct Store {
    cells: Cells,
    meta: Chunked<Meta>,
    /// One more than the largest feature id ever given counts (rows that may hold cells).
    rows: usize,
    class_docs: Vec<f64>,
    class_tokens: Vec<f64>,
    class_version: Vec<u64>,
    histograms: Option<Vec<Histogram>>,
    dense_max_classes: usize,
    pub scale: f64,
    pub n_learned: u64,
    pub n_features: usize,
    /// n_learned when features were last dropped (pruning): documents learned before that
    /// may have lost counts.
    pub pruned_at: u64,
    /// The documents merged in from models that had pruned (rare; see `MergedPruning`).
    pub merged_prunings: Vec<MergedPruning>,
    /// Stamp ranges of records forgotten past `MERGED_EXCEPTIONS_BUDGET`, ascending, disjoint.
    pub forgotten_merges: Vec<(u64, u64)>,
    /// Bumped whenever any count changes, so derived sums can be cached.
    pub version: u64,
}

impl Store {
    pub fn new(dense_max_classes: usize, doc_histograms: bool) -> Self {
        Store {
            cells: Cells::Dense {
                k_cap: 2,
                rows: Chunked::new(4, 0.0),
            },
            meta: Chunked::new(1, OUT_OF_V),
            rows: 0,
            class_docs: Vec::new(),
            class_tokens: Vec::new(),
            class_version: Vec::new(),
            histograms: doc_histograms.then(Vec::new),
            dense_max_classes: dense_max_classes.max(1),
            scale: 1.0,
            n_learned: 0,
            n_features: 0,
            pruned_at: 0,
            merged_prunings: Vec::new(),
            forgotten_merges: Vec::new(),
            version: 0,
        }
    }

    // -- classes -------------------------------------------------------------------------

    pub fn n_classes(&self) -> usize {
        self.class_docs.len()
    }

    /// Add a class with zero counts; returns its index.
    pub fn add_class(&mut self) -> usize {
        let c = self.class_docs.len();
        let k = c + 1;
        // The layout first, while the cells still describe the classes there are.
        let to_sparse = matches!(self.cells, Cells::Dense { .. }) && k > self.dense_max_classes;
        if to_sparse {
            self.cells = Cells::Sparse {
                rows: self.sparse_rows(),
            };
        } else if let Cells::Dense { k_cap, rows } = &mut self.cells {
            if k > *k_cap {
                let new_cap = (*k_cap * 2).max(k);
                let mut grown = Chunked::new(2 * new_cap, 0.0);
                for row in 0..self.rows {
                    if let Some(old) = rows.get(row) {
                        let new = grown.get_mut(row);
                        new[..*k_cap].copy_from_slice(&old[..*k_cap]);
                        new[new_cap..new_cap + *k_cap].copy_from_slice(&old[*k_cap..]);
                    }
                }
                *k_cap = new_cap;
                *rows = grown;
            }
        }
        self.class_docs.push(0.0);
        self.class_tokens.push(0.0);
        self.class_version.push(0);
        if let Some(h) = self.histograms.as_mut() {
            h.push(Histogram::default());
        }
        self.version += 1;
        c
    }

    fn sparse_rows(&self) -> Vec<Vec<Cell>> {
        let mut rows = vec![Vec::new(); self.rows];
        for (id, row) in rows.iter_mut().enumerate() {
            self.for_each_cell(id as u32, |class, tokens, docs| {
                row.push(Cell {
                    class: class as u32,
                    tokens,
                    docs,
                })
            });
        }
        rows
    }

    /// N_c in stored units (true = stored * scale).
    pub fn class_docs(&self) -> &[f64] {
        &self.class_docs
    }

    pub fn class_tokens(&self) -> &[f64] {
        &self.class_tokens
    }

    pub fn class_version(&self) -> &[u64] {
        &self.class_version
    }

    pub fn true_class_docs(&self, c: usize) -> f64 {
        self.class_docs[c] * self.scale
    }

    pub fn true_class_tokens(&self, c: usize) -> f64 {
        self.class_tokens[c] * self.scale
    }

    /// Whether the store keeps document-count histograms (Bernoulli: they bound D_cf by N_c).
    pub fn keeps_histograms(&self) -> bool {
        self.histograms.is_some()
    }

    pub fn histogram(&self, c: usize) -> Option<&Histogram> {
        self.histograms.as_ref().map(|h| &h[c])
    }

    pub fn is_dense(&self) -> bool {
        matches!(self.cells, Cells::Dense { .. })
    }

    /// Rows that may hold cells (one more than the largest id given counts).
    pub fn rows(&self) -> usize {
        self.rows
    }

    // -- cells ---------------------------------------------------------------------------

    /// Stored (tokens, docs) of every class for feature `id` into the two slices (length K).
    #[inline]
    pub fn gather(&self, id: u32, tokens: &mut [f64], docs: &mut [f64]) {
        let k = tokens.len();
        match &self.cells {
            Cells::Dense { k_cap, rows } => match rows.get(id as usize) {
                Some(row) => {
                    tokens.copy_from_slice(&row[..k]);
                    docs.copy_from_slice(&row[*k_cap..*k_cap + k]);
                }
                None => {
                    tokens.fill(0.0);
                    docs.fill(0.0);
                }
            },
            Cells::Sparse { rows } => {
                tokens.fill(0.0);
                docs.fill(0.0);
                if let Some(row) = rows.get(id as usize) {
                    for cell in row {
                        tokens[cell.class as usize] = cell.tokens;
                        docs[cell.class as usize] = cell.docs;
                    }
                }
            }
        }
    }

    /// Stored (tokens, docs) of every class of feature `id` as slices of a dense row, or
    /// None (sparse layout, or a row never written: use `gather`).
    #[inline]
    pub fn dense_row(&self, id: u32, k: usize) -> Option<(&[f64], &[f64])> {
        match &self.cells {
            Cells::Dense { k_cap, rows } => rows.get(id as usize).map(|row| (&row[..k], &row[*k_cap..*k_cap + k])),
            Cells::Sparse { .. } => None,
        }
    }

    /// Stored (tokens, docs) of one cell.
    #[inline]
    pub fn cell(&self, id: u32, c: usize) -> (f64, f64) {
        match &self.cells {
            Cells::Dense { k_cap, rows } => rows.get(id as usize).map_or((0.0, 0.0), |row| (row[c], row[k_cap + c])),
            Cells::Sparse { rows } => rows
                .get(id as usize)
                .and_then(|row| row.iter().find(|cell| cell.class as usize == c))
                .map_or((0.0, 0.0), |cell| (cell.tokens, cell.docs)),
        }
    }

    /// The nonzero cells of a feature, by increasing class: f(class, tokens, docs).
    pub fn for_each_cell(&self, id: u32, mut f: impl FnMut(usize, f64, f64)) {
        match &self.cells {
            Cells::Dense { k_cap, rows } => {
                if let Some(row) = rows.get(id as usize) {
                    for c in 0..self.class_docs.len() {
                        let (t, d) = (row[c], row[k_cap + c]);
                        if t != 0.0 || d != 0.0 {
                            f(c, t, d);
                        }
                    }
                }
            }
            Cells::Sparse { rows } => {
                if let Some(row) = rows.get(id as usize) {
                    for cell in row {
                        f(cell.class as usize, cell.tokens, cell.docs);
                    }
                }
            }
        }
    }

    fn set_cell(&mut self, id: u32, c: usize, tokens: f64, docs: f64) {
        let id = id as usize;
        if id >= self.rows {
            self.rows = id + 1;
        }
        match &mut self.cells {
            Cells::Dense { k_cap, rows } => {
                let row = rows.get_mut(id);
                row[c] = tokens;
                row[*k_cap + c] = docs;
            }
            Cells::Sparse { rows } => {
                if id >= rows.len() {
                    rows.resize_with(id + 1, Vec::new);
                }
                let row = &mut rows[id];
                let at = row.binary_search_by_key(&(c as u32), |cell| cell.class);
                match (at, tokens != 0.0 || docs != 0.0) {
                    (Ok(i), true) => {
                        row[i].tokens = tokens;
                        row[i].docs = docs;
                    }
                    (Ok(i), false) => {
                        row.remove(i);
                        if row.is_empty() {
                            *row = Vec::new(); // memory follows the nonzero cells
                        }
                    }
                    (Err(i), true) => row.insert(
                        i,
                        Cell {
                            class: c as u32,
                            tokens,
                            docs,
                        },
                    ),
                    (Err(_), false) => {}
                }
            }
        }
    }

    fn has_cells(&self, id: u32) -> bool {
        let mut any = false;
        self.for_each_cell(id, |_, _, _| any = true);
        any
    }

    // -- features ------------------------------------------------------------------------

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

    // -- changing counts ---------------------------------------------------------------------

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
    fn bury(&mut self, ids: &[u32]) -> Vec<u32> {
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

    // -- forgetting ------------------------------------------------------------------------

    /// Will `decay(factor)` fold the scale into the counts (`rescale`)?
    pub fn decay_folds(&self, factor: f64) -> bool {
        factor != 1.0 && self.scale * factor < MIN_SCALE
    }

    /// Multiply every count by `factor` (0 <= factor <= 1) in O(1): only the scale changes.
    /// Below MIN_SCALE the scale is folded into the counts (`rescale`, O(cells)); with a
    /// factor gamma per document that happens once every log(MIN_SCALE)/log(gamma)
    /// documents, so the amortised cost stays O(1). Returns the features that left V.
    pub fn decay(&mut self, factor: f64) -> Vec<u32> {
        if factor == 1.0 {
            return Vec::new();
        }
        self.scale *= factor;
        self.version += 1;
        if self.scale < MIN_SCALE {
            return self.rescale();
        }
        Vec::new()
    }

    /// Fold the global scale into the stored counts (O(cells)). Counts that underflow to
    /// zero are gone: a feature left with no cell leaves V, and a class whose N_c
    /// underflows loses its cells too. Returns the features that left V.
    pub fn rescale(&mut self) -> Vec<u32> {
        if self.scale == 1.0 {
            return Vec::new();
        }
        let scale = self.scale;
        self.scale = 1.0;
        self.version += 1;
        for c in 0..self.n_classes() {
            self.class_docs[c] *= scale;
            self.class_tokens[c] *= scale;
            self.class_version[c] += 1;
        }
        let k = self.n_classes();
        let mut live_cells = vec![0usize; k];
        let mut emptied = Vec::new();
        if let Some(h) = self.histograms.as_mut() {
            h.iter_mut().for_each(Histogram::clear);
        }
        for id in 0..self.rows as u32 {
            let mut cells = Vec::new();
            self.for_each_cell(id, |c, t, d| cells.push((c, t, d)));
            if cells.is_empty() {
                continue;
            }
            for (c, t, d) in cells {
                let (mut t, mut d) = (t * scale, d * scale);
                if self.class_docs[c] == 0.0 {
                    t = 0.0;
                    d = 0.0;
                }
                self.set_cell(id, c, t, d);
                if t != 0.0 || d != 0.0 {
                    live_cells[c] += 1;
                    if let Some(h) = self.histograms.as_mut() {
                        move_in_histogram(&mut h[c], 0.0, d);
                    }
                }
            }
            if !self.has_cells(id) {
                emptied.push(id);
            }
        }
        for (tokens, &live) in self.class_tokens.iter_mut().zip(&live_cells) {
            if live == 0 {
                *tokens = 0.0;
            }
        }
        self.bury(&emptied)
    }

    // -- loading ---------------------------------------------------------------------------

    /// Set one cell and the stamps of its feature while loading a saved store (stored units;
    /// the caller has validated every value). Marks the feature as in V.
    pub fn load_cell(&mut self, id: u32, c: usize, tokens: f64, docs: f64) {
        if let Some(h) = self.histograms.as_mut() {
            move_in_histogram(&mut h[c], 0.0, docs);
        }
        self.set_cell(id, c, tokens, docs);
        let meta = &mut self.meta.get_mut(id as usize)[0];
        if meta.born == NOT_IN_V {
            meta.born = 0;
            self.n_features += 1;
        }
    }

    /// Set the class totals while loading (stored units).
    pub fn load_class(&mut self, c: usize, docs: f64, tokens: f64) {
        self.class_docs[c] = docs;
        self.class_tokens[c] = tokens;
        self.class_version[c] += 1;
        self.version += 1;
    }

    /// Bytes of the count cells.
    pub fn cells_heap_bytes(&self) -> usize {
        match &self.cells {
            Cells::Dense { rows, .. } => rows.heap_bytes(),
            Cells::Sparse { rows } => {
                rows.capacity() * std::mem::size_of::<Vec<Cell>>()
                    + rows
                        .iter()
                        .map(|r| r.capacity() * std::mem::size_of::<Cell>())
                        .sum::<usize>()
            }
        }
    }

    /// Bytes the store holds on the heap.
    pub fn heap_bytes(&self) -> usize {
        let cells = self.cells_heap_bytes();
        let histograms = self.histograms.as_ref().map_or(0, |hs| {
            hs.iter()
                .map(|h| h.capacity() * (std::mem::size_of::<(u64, u64)>() + 1))
                .sum::<usize>()
        });
        let merged: usize = self
            .merged_prunings
            .iter()
            .map(MergedPruning::heap_bytes)
            .sum::<usize>()
            + self.forgotten_merges.capacity() * std::mem::size_of::<(u64, u64)>();
        cells + self.meta.heap_bytes() + histograms + self.class_docs.capacity() * 24 + merged
    }
}

/// A cell's document count went from `old` to `new` (stored): move it in the histogram.
#[inline]
/// The largest D_cf of a class once the cells of a removal go from `old` to `new`: the
/// largest value its histogram still holds after the old values leave, or a new value.
/// O(distinct values of D_cf in the class).
fn most_documents_after(histogram: &Histogram, old: &[(f64, f64)], new: &[(f64, f64)]) -> f64 {
    let mut leaving: hashbrown::HashMap<u64, u64, foldhash::fast::FixedState> = Default::default();
    for &(_, d) in old {
        if d != 0.0 {
            *leaving.entry(d.to_bits()).or_insert(0) += 1;
        }
    }
    let kept = histogram
        .iter()
        .filter(|&(bits, &n)| n > leaving.get(bits).copied().unwrap_or(0))
        .map(|(&bits, _)| f64::from_bits(bits));
    kept.chain(new.iter().map(|&(_, d)| d)).fold(0.0, f64::max)
}

fn move_in_histogram(histogram: &mut Histogram, old: f64, new: f64) {
    if old == new {
        return; // a delta below a huge value's rounding step changes nothing
    }
    if old != 0.0 {
        if let Some(n) = histogram.get_mut(&old.to_bits()) {
            *n -= 1;
            if *n == 0 {
                histogram.remove(&old.to_bits());
            }
        }
    }
    if new != 0.0 {
        *histogram.entry(new.to_bits()).or_insert(0) += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store_with(k: usize, dense_max: usize) -> Store {
        let mut s = Store::new(dense_max, true);
        for _ in 0..k {
            s.add_class();
        }
        s
    }

    fn snapshot(s: &Store) -> Vec<(u32, usize, f64, f64)> {
        let mut out = Vec::new();
        for id in 0..s.rows() as u32 {
            s.for_each_cell(id, |c, t, d| out.push((id, c, t * s.scale, d * s.scale)));
        }
        out
    }

    #[test]
    fn add_then_remove_restores_the_store_exactly() {
        for dense_max in [1, 8] {
            let mut s = store_with(2, dense_max);
            s.n_learned = 1;
            s.add(0, &[3, 7], &[2.0, 1.0], &[1.0, 1.0], 1.0);
            let before = snapshot(&s);
            s.n_learned = 2;
            s.add(1, &[7, 9], &[0.1, 0.2], &[0.1, 0.1], 0.1);
            assert_eq!(s.n_features, 3);
            let removal = s
                .prepare_removal(1, &[7, 9], &[-0.1, -0.2], &[-0.1, -0.1], -0.1)
                .unwrap();
            let gone = s.commit(removal);
            assert_eq!(gone, vec![9]);
            assert_eq!(snapshot(&s), before);
            assert_eq!(s.n_features, 2);
            assert_eq!(s.class_docs()[1], 0.0);
            assert_eq!(s.class_tokens()[1], 0.0);
            assert_eq!(s.histogram(0).unwrap().get(&1.0f64.to_bits()), Some(&2));
            assert!(s.histogram(1).unwrap().is_empty());
        }
    }

    #[test]
    fn refused_removals_change_nothing() {
        let mut s = store_with(2, 8);
        s.add(0, &[1], &[2.0], &[1.0], 1.0);
        let before = snapshot(&s);
        assert_eq!(
            s.prepare_removal(0, &[1], &[-3.0], &[-1.0], -1.0).unwrap_err(),
            StoreError::NegativeCounts { class: 0, ids: vec![1] }
        );
        assert!(matches!(
            s.prepare_removal(0, &[], &[], &[], -2.0),
            Err(StoreError::TooFewDocuments { .. })
        ));
        assert!(matches!(
            s.prepare_removal(0, &[], &[], &[], -1.0),
            Err(StoreError::CellsWithoutDocuments { class: 0, left: 1 })
        ));
        assert_eq!(snapshot(&s), before);
    }

    #[test]
    fn dense_and_sparse_layouts_agree_as_classes_grow() {
        let mut dense = store_with(0, 100);
        let mut sparse = store_with(0, 1);
        for c in 0..7 {
            for s in [&mut dense, &mut sparse] {
                s.add_class();
                s.add(
                    c,
                    &[c as u32, 50 + c as u32, 4000],
                    &[1.0, 2.0, 3.0],
                    &[1.0, 1.0, 1.0],
                    1.0,
                );
            }
        }
        assert!(dense.is_dense() && !sparse.is_dense());
        assert_eq!(snapshot(&dense), snapshot(&sparse));
        let (mut t, mut d) = (vec![0.0; 7], vec![0.0; 7]);
        sparse.gather(4000, &mut t, &mut d);
        assert_eq!(t, vec![3.0; 7]);
    }

    #[test]
    fn decay_is_a_scale_and_rescale_folds_it() {
        let mut s = store_with(1, 8);
        s.add(0, &[0, 1], &[4.0, 1e-190], &[1.0, 1e-190], 1.0);
        s.decay(0.5);
        assert_eq!(s.scale, 0.5);
        assert_eq!(snapshot(&s)[0], (0, 0, 2.0, 0.5));
        s.decay(1e-15);
        assert_eq!(s.n_features, 2);
        let gone = s.decay(1e-190); // below MIN_SCALE: folded; 1e-190 * 5e-206 underflows
        assert_eq!(s.scale, 1.0);
        assert_eq!(gone, vec![1]);
        assert_eq!(s.n_features, 1);
    }

    #[test]
    fn dropping_features_takes_their_tokens_out() {
        let mut s = store_with(2, 8);
        s.add(0, &[0, 1], &[2.0, 3.0], &[1.0, 1.0], 1.0);
        s.add(1, &[1], &[5.0], &[1.0], 1.0);
        assert_eq!(s.drop_features(&[1, 1, 99]), vec![1]);
        assert_eq!(s.class_tokens(), &[2.0, 0.0]);
        assert_eq!(s.n_features, 1);
        assert!(s.histogram(1).unwrap().is_empty());
    }

    fn histogram_of(values: &[f64]) -> Histogram {
        let mut h = Histogram::default();
        for &v in values {
            move_in_histogram(&mut h, 0.0, v);
        }
        h
    }

    /// Moving cells where float rounding merges values (tiny + 7.0) or leaves them
    /// unchanged (huge + tiny) keeps the histogram equal to counting the values again.
    #[test]
    fn moving_cells_in_the_histogram_equals_counting_again() {
        let pool = [0.0, 0.25, 1.0, 2.0, 3.3e-30, 5e15, 1e16];
        let deltas = [0.25, 1.0, 7.0, 1e-20, 3e-31];
        let mut state: u64 = 12345;
        let mut next = |n: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) as usize) % n
        };
        for _ in 0..3000 {
            let old: Vec<f64> = (0..next(7)).map(|_| pool[next(pool.len())]).collect();
            let delta = deltas[next(deltas.len())];
            let new: Vec<f64> = old.iter().map(|v| v + delta).collect();
            let mut moved = histogram_of(&old);
            old.iter()
                .zip(&new)
                .for_each(|(&a, &b)| move_in_histogram(&mut moved, a, b));
            assert_eq!(moved, histogram_of(&new));
            new.iter()
                .zip(&old)
                .for_each(|(&a, &b)| move_in_histogram(&mut moved, a, b)); // and back
            assert_eq!(moved, histogram_of(&old));
        }
    }

    #[test]
    fn overflow_is_refused_before_anything_changes() {
        let mut s = store_with(1, 8);
        s.add(0, &[0], &[1e299], &[1.0], 1.0);
        assert!(s.check_room(Some(0), 1e300, 1.0, 1.0).is_err());
        assert!(s.check_room(None, 1.0, 1e301, 1.0).is_err());
        assert!(s.check_room(Some(0), 1.0, 1.0, 0.5).is_ok());
    }
}
