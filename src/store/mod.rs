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
//!
//! Split by concern, each file with its own `impl Store`: this file holds the store, its
//! classes, loading and memory; `cells` reads and writes cells; `features` the features in V
//! and their stamps; `change` adds, removes and drops counts; `forget` decays and rescales.

mod cells;
mod change;
mod features;
mod forget;
#[cfg(test)]
mod tests;

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

/// How many features ahead a loop over a document's features asks the store to load a
/// row (`Store::prefetch`): far enough for a cache miss to complete, near enough that the
/// row is still cached when its turn comes.
pub const PREFETCH_AHEAD: usize = 8;

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

    /// Start loading a row into the cache (a hint: no effect on what is read or written):
    /// its first and last items, so that a row across two cache lines comes whole.
    #[inline]
    fn prefetch(&self, row: usize) {
        if let Some(items) = self.get(row) {
            items
                .first()
                .into_iter()
                .chain(items.last())
                .for_each(crate::prefetch::prefetch);
        }
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
