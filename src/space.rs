//! The feature space a model's ids live in: an exact vocabulary (token bytes -> id, growing
//! as documents bring new tokens) or feature hashing into a fixed number of buckets; and the
//! encoder that turns a document's feature occurrences into ids and values of that space.
//!
//! Every model of the core (naive Bayes in `nb`, logistic regression in `logistic`) reads
//! documents through one of these, so a text becomes the same ids whichever model reads it.

use crate::bag::Bag;
use crate::doc::{Doc, IdCounts, Keys, UNKNOWN};
use crate::vocab::{bucket, Vocabulary, VocabularyError};
use std::hash::BuildHasher;

/// Keys between the steps of the cache hints of a document's lookups (`Encoder::finish`).
const LOOKUP_STEP: usize = 4;

pub enum Features {
    Exact(Vocabulary),
    Hashed(u32),
}

/// Why `Features::rows_from` could not map another space's rows.
#[derive(Debug, PartialEq)]
pub enum RowsError {
    /// This space is hashed and the other exact.
    HashedAndExact,
    /// The vocabulary has no room for the other's tokens.
    Full,
}

impl Features {
    pub fn new(n_buckets: Option<u32>) -> Self {
        match n_buckets {
            Some(n) => Features::Hashed(n),
            None => Features::Exact(Vocabulary::new()),
        }
    }

    pub fn vocabulary(&self) -> Option<&Vocabulary> {
        match self {
            Features::Exact(v) => Some(v),
            Features::Hashed(_) => None,
        }
    }

    pub fn vocabulary_mut(&mut self) -> Option<&mut Vocabulary> {
        match self {
            Features::Exact(v) => Some(v),
            Features::Hashed(_) => None,
        }
    }

    /// The vocabulary's seeded hasher (hashed models: any fixed one).
    pub fn hasher(&self) -> foldhash::fast::RandomState {
        match self {
            Features::Exact(v) => v.hasher().clone(),
            Features::Hashed(_) => foldhash::fast::RandomState::default(),
        }
    }

    /// The hash of a feature key (the vocabulary's seeded hash).
    #[inline]
    pub fn hash(&self, key: &[u8]) -> u64 {
        match self {
            Features::Exact(v) => v.hash(key),
            Features::Hashed(_) => 0,
        }
    }

    pub fn epoch(&self) -> u64 {
        self.vocabulary().map_or(0, Vocabulary::epoch)
    }

    /// One more than the largest feature id in use.
    pub fn capacity(&self) -> usize {
        match self {
            Features::Exact(v) => v.capacity(),
            Features::Hashed(n) => *n as usize,
        }
    }

    /// The bucket of a key (hashed models).
    pub fn n_buckets(&self) -> Option<u32> {
        match *self {
            Features::Hashed(n) => Some(n),
            Features::Exact(_) => None,
        }
    }

    /// The vocabulary's state a document's ids hold at (None for hashed models).
    pub fn epoch_stamp(&self) -> Option<u64> {
        self.vocabulary().map(Vocabulary::epoch)
    }

    /// Can the document's ids be trusted? Ids found earlier stay valid while no token has
    /// left the vocabulary since (new tokens do not move them); the keyed features are
    /// looked up again by `resolve`.
    pub fn doc_is_current(&self, doc: &Doc) -> bool {
        match (self.vocabulary(), doc.epoch) {
            (Some(v), Some(epoch)) => v.removals_since(epoch) == 0 || doc.keys_everything(),
            _ => true,
        }
    }

    /// Look the document's keyed features up again if the vocabulary changed since.
    pub fn resolve(&self, doc: &mut Doc) {
        let Features::Exact(vocabulary) = self else {
            return; // hashed documents carry their buckets
        };
        if doc.epoch == Some(vocabulary.epoch()) {
            return;
        }
        debug_assert!(
            self.doc_is_current(doc),
            "a document is used after tokens it holds left the vocabulary"
        );
        for i in doc.first_key()..doc.len() {
            let (key, hash) = (doc.key(i).unwrap_or_default(), doc.hash(i));
            doc.ids[i] = vocabulary.find_hashed(key, hash).unwrap_or(UNKNOWN);
        }
        doc.epoch = Some(vocabulary.epoch());
    }

    /// Before a change that may take tokens out of the vocabulary (rescaling), let the
    /// documents still to be used keep every key, so they can be looked up afresh.
    pub fn keep_keys(&self, doc: &mut Doc) {
        if let Features::Exact(vocabulary) = self {
            doc.keep_keys(|id| vocabulary.token(id).map(|key| (key.to_vec(), vocabulary.hash(key))));
        }
    }

    /// A document encoder: feature occurrences in, a document out.
    pub fn encoder(&self, features: usize, bytes: usize) -> Encoder<'_> {
        Encoder::new(self.shape(), self.vocabulary(), features, bytes)
    }

    /// What counting a document needs of this space (see `Shape`).
    pub fn shape(&self) -> Shape {
        Shape {
            hasher: self.hasher(),
            n_buckets: self.n_buckets(),
        }
    }

    /// Free the vocabulary ids of features that left V.
    pub fn release(&mut self, gone: &[u32]) {
        if let Features::Exact(v) = self {
            v.remove_many(gone);
        }
    }

    /// Can the vocabulary take the unknown present features of these documents?
    pub fn check_room<'a>(&self, docs: impl Iterator<Item = (&'a Doc, &'a [usize])>) -> Result<(), VocabularyError> {
        let Features::Exact(vocabulary) = self else {
            return Ok(());
        };
        let (mut tokens, mut bytes) = (0usize, 0usize);
        for (doc, positions) in docs {
            for &i in positions {
                if doc.ids[i] == UNKNOWN {
                    tokens += 1;
                    bytes += doc.key(i).map_or(0, <[u8]>::len);
                }
            }
        }
        if vocabulary.has_room(tokens, bytes) {
            Ok(())
        } else {
            Err(VocabularyError::Full)
        }
    }

    /// Give the document's new present tokens ids (recycled first). The room was checked.
    pub fn add_tokens(&mut self, doc: &mut Doc, positions: &[usize]) -> Result<(), VocabularyError> {
        self.resolve(doc);
        let Features::Exact(vocabulary) = self else {
            return Ok(());
        };
        for &i in positions {
            if doc.ids[i] == UNKNOWN {
                let (key, hash) = (doc.key(i).unwrap_or_default(), doc.hash(i));
                // an earlier document of a batch may have added it
                doc.ids[i] = match vocabulary.find_hashed(key, hash) {
                    Some(id) => id,
                    None => vocabulary.add_hashed(key, hash)?,
                };
            }
        }
        doc.epoch = Some(vocabulary.epoch());
        Ok(())
    }

    /// The ids here of another space's `n` rows (a model's rows over it), adding its tokens
    /// that are new here: the same bucket, or the same token (`u32::MAX` for a free id there).
    pub fn rows_from(&mut self, other: &Features, n: usize) -> Result<Vec<u32>, RowsError> {
        Ok(match (other.vocabulary(), other.n_buckets()) {
            (_, Some(_)) => (0..n as u32).collect(),
            (Some(theirs), None) => {
                let mut map = vec![u32::MAX; n];
                let Features::Exact(mine) = self else {
                    return Err(RowsError::HashedAndExact);
                };
                for (id, slot) in map.iter_mut().enumerate() {
                    if let Some(token) = theirs.token(id as u32) {
                        *slot = match mine.find(token) {
                            Some(found) => found,
                            None => mine.add_hashed(token, mine.hash(token)).map_err(|_| RowsError::Full)?,
                        };
                    }
                }
                map
            }
            (None, None) => Vec::new(),
        })
    }
}

/// What counting a document's features needs of its space, and no more: the vocabulary's
/// seeded hasher, or the number of buckets. A reader counts a message with it away from the
/// model, without the GIL (`Shape::encoder`), and the vocabulary is asked once the model is
/// at hand again (`Encoder::finish_in`): another thread may use the model in between.
#[derive(Clone)]
pub struct Shape {
    hasher: foldhash::fast::RandomState,
    n_buckets: Option<u32>,
}

impl Shape {
    /// An encoder that counts without the vocabulary; finish it with `Encoder::finish_in`.
    pub fn encoder(&self, features: usize, bytes: usize) -> Encoder<'static> {
        Encoder::new(self.clone(), None, features, bytes)
    }

    pub fn hasher(&self) -> &foldhash::fast::RandomState {
        &self.hasher
    }

    pub fn n_buckets(&self) -> Option<u32> {
        self.n_buckets
    }
}

/// Builds a document from feature occurrences: counted by key first (a small table that
/// stays in cache), then each distinct key looked up once in the vocabulary (hashed
/// models: everything counted by bucket).
pub struct Encoder<'a> {
    shape: Shape,
    /// The vocabulary asked as the document is finished (None: counted away from the model,
    /// for `finish_in`).
    vocabulary: Option<&'a Vocabulary>,
    bag: Bag,
    buckets: IdCounts,
}

impl<'a> Encoder<'a> {
    fn new(shape: Shape, vocabulary: Option<&'a Vocabulary>, features: usize, bytes: usize) -> Self {
        let exact = shape.n_buckets.is_none();
        Encoder {
            shape,
            vocabulary,
            bag: if exact {
                Bag::with_capacity(features, bytes)
            } else {
                Bag::default()
            },
            buckets: IdCounts::with_capacity(features),
        }
    }

    /// Count `by` more of the feature `key` (hashed models: of its bucket).
    #[inline]
    pub fn add(&mut self, key: &[u8], by: f64) {
        match self.shape.n_buckets {
            None => self.bag.add(key, self.shape.hasher.hash_one(key), by),
            Some(n) => self.buckets.add(bucket(key, n), by),
        }
    }

    /// `add` for a key the document holds once (a mapping's keys): looked up in the
    /// vocabulary at once, without counting by key first. (A mapping is read with its
    /// model at hand; an encoder without the vocabulary counts the key as `add` does.)
    #[inline]
    pub fn add_distinct(&mut self, key: &[u8], by: f64) {
        match (self.shape.n_buckets, self.vocabulary) {
            (Some(n), _) => self.buckets.add(bucket(key, n), by),
            (None, Some(vocabulary)) => {
                let hash = vocabulary.hash(key);
                match vocabulary.find_hashed(key, hash) {
                    Some(id) => self.buckets.add(id, by), // ids of known keys (their own table)
                    None => self.bag.add(key, hash, by),
                }
            }
            (None, None) => self.add(key, by),
        }
    }

    /// `add_distinct` of every key of a mapping (`keys[i]` by `values[i]`): all hashed
    /// first, then looked up, so the lookups (cache misses in a big vocabulary) overlap
    /// instead of each waiting for the Python objects of the next key to be read.
    pub fn add_distinct_all<'k>(&mut self, keys: impl Iterator<Item = &'k [u8]> + Clone, values: &[f64]) {
        match (self.shape.n_buckets, self.vocabulary) {
            (None, Some(vocabulary)) => {
                let hashes: Vec<u64> = keys.clone().map(|key| vocabulary.hash(key)).collect();
                for ((key, hash), &by) in keys.zip(hashes).zip(values) {
                    match vocabulary.find_hashed(key, hash) {
                        Some(id) => self.buckets.add(id, by),
                        None => self.bag.add(key, hash, by),
                    }
                }
            }
            _ => {
                for (key, &by) in keys.zip(values) {
                    self.add_distinct(key, by);
                }
            }
        }
    }

    /// `add` with the key's hash already computed (with the model's `hasher`).
    #[inline]
    pub fn add_hashed(&mut self, key: &[u8], hash: u64, by: f64) {
        match self.shape.n_buckets {
            None => self.bag.add(key, hash, by),
            Some(n) => self.buckets.add(bucket(key, n), by),
        }
    }

    /// Count `by` more of a bucket the caller computed (hashed spaces only: `vocab::bucket`
    /// of the key, e.g. `ByteNgrams::for_each_bucket`).
    #[inline]
    pub fn add_bucket(&mut self, id: u32, by: f64) {
        debug_assert!(self.shape.n_buckets.is_some());
        self.buckets.add(id, by);
    }

    /// One occurrence of a bucket the caller knows it has not added before (hashed spaces
    /// only; a binary featurizer that tracks what it has seen; not to be mixed with
    /// `add_bucket` in one document).
    #[inline]
    pub fn add_new_bucket(&mut self, id: u32) {
        debug_assert!(self.shape.n_buckets.is_some());
        self.buckets.push_distinct(id, 1.0);
    }

    /// Every count set to 1 (binary features).
    pub fn binarize(&mut self) {
        self.buckets.values.iter_mut().for_each(|v| *v = 1.0);
        self.bag.binarize();
    }

    /// The same counts, to be finished by `finish_in` (the vocabulary is asked then).
    pub fn without_vocabulary(self) -> Encoder<'static> {
        Encoder {
            shape: self.shape,
            vocabulary: None,
            bag: self.bag,
            buckets: self.buckets,
        }
    }

    /// The document, counted with its space at hand (`Features::encoder`).
    pub fn finish(self) -> Doc {
        let vocabulary = self.vocabulary;
        self.finish_with(vocabulary)
    }

    /// The document of an encoder that counted away from the model (`Shape::encoder`), its
    /// keys looked up in `space` now; None when the space is no longer the one it counted
    /// for (another hasher or other buckets: the model was loaded again in between).
    pub fn finish_in(self, space: &Features) -> Option<Doc> {
        let same = match (space, self.shape.n_buckets) {
            (Features::Hashed(n), Some(counted)) => *n == counted,
            // one key's hash tells whether the hasher is the vocabulary's (seeds differ by process and model)
            (Features::Exact(vocabulary), None) => {
                self.bag.is_empty() || vocabulary.hash(self.bag.feature(0)) == self.bag.hash(0)
            }
            _ => false,
        };
        same.then(|| self.finish_with(space.vocabulary()))
    }

    fn finish_with(self, vocabulary: Option<&Vocabulary>) -> Doc {
        let Some(vocabulary) = vocabulary.filter(|_| self.shape.n_buckets.is_none()) else {
            debug_assert!(
                self.shape.n_buckets.is_some(),
                "an exact space's document finished without its vocabulary"
            );
            return Doc::new(self.buckets.ids, self.buckets.values, Keys::default(), Vec::new(), None);
        };
        // known ids: those `add_distinct` found, then the counted keys the vocabulary holds
        let mut known = self.buckets;
        let mut new = Keys::default();
        let mut new_values = Vec::new();
        // a lookup misses the cache three times on a large vocabulary (slot, span, bytes):
        // ask for each of them a few keys ahead, one step after the other
        let n = self.bag.len();
        for i in 0..n {
            if i + 3 * LOOKUP_STEP < n {
                vocabulary.prefetch_slot(self.bag.hash(i + 3 * LOOKUP_STEP));
            }
            if i + 2 * LOOKUP_STEP < n {
                vocabulary.prefetch_span(self.bag.hash(i + 2 * LOOKUP_STEP));
            }
            if i + LOOKUP_STEP < n {
                vocabulary.prefetch_token(self.bag.hash(i + LOOKUP_STEP));
            }
            let (key, hash) = (self.bag.feature(i), self.bag.hash(i));
            match vocabulary.find_hashed(key, hash) {
                Some(id) => known.add(id, self.bag.count(i)),
                None => {
                    new.push(key, hash);
                    new_values.push(self.bag.count(i));
                }
            }
        }
        Doc::new(known.ids, known.values, new, new_values, Some(vocabulary.epoch()))
    }
}
