//! One document on its way in: its distinct features with their values, as vocabulary ids
//! where the vocabulary knows them and as key bytes (with their hash) where it does not.
//!
//! A document is encoded once (text tokenized, or a mapping read and checked) against the
//! vocabulary at one epoch; predicting and then learning the same message looks its tokens
//! up once. The features the vocabulary knew come first (in order of first appearance),
//! then the new ones (`first_key` on), whose keys are kept so that learning can add them.

use crate::smoothing::CandidateScores;

/// Id of a feature that is not in the vocabulary.
pub const UNKNOWN: u32 = u32::MAX;

/// Byte strings back to back, each with its hash.
#[derive(Clone, Debug, Default)]
pub struct Keys {
    arena: Vec<u8>,
    /// Per key: where it lies in `arena` and its hash, in one entry (one push a new key
    /// rather than two: a bag adds a key for each distinct feature of every message).
    entries: Vec<Entry>,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    hash: u64,
    start: u32,
    len: u32,
}

impl Keys {
    pub fn with_capacity(keys: usize, bytes: usize) -> Self {
        Keys {
            arena: Vec::with_capacity(bytes),
            entries: Vec::with_capacity(keys),
        }
    }

    pub fn reserve(&mut self, keys: usize, bytes: usize) {
        self.arena.reserve(bytes);
        self.entries.reserve(keys);
    }

    #[inline(always)]
    pub fn push(&mut self, key: &[u8], hash: u64) {
        self.entries.push(Entry {
            hash,
            start: self.arena.len() as u32,
            len: key.len() as u32,
        });
        self.arena.extend_from_slice(key);
    }

    #[inline(always)]
    pub fn key(&self, i: usize) -> &[u8] {
        let Entry { start, len, .. } = self.entries[i];
        &self.arena[start as usize..(start + len) as usize]
    }

    #[inline]
    pub fn hash(&self, i: usize) -> u64 {
        self.entries[i].hash
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Bytes of all keys.
    pub fn bytes(&self) -> usize {
        self.arena.len()
    }

    /// Bytes held on the heap (allocated capacity).
    pub fn heap_bytes(&self) -> usize {
        self.arena.capacity() + self.entries.capacity() * std::mem::size_of::<Entry>()
    }
}

#[derive(Clone, Debug, Default)]
pub struct Doc {
    /// Per feature: its id (UNKNOWN when the vocabulary does not hold it).
    pub ids: Vec<u32>,
    pub values: Vec<f64>,
    /// Keys of the features from `first_key` on.
    keys: Keys,
    first_key: usize,
    /// The vocabulary epoch the ids were found at (None: hashed features, or not looked up).
    pub epoch: Option<u64>,
    /// What every candidate smoothing said of it when a prediction scored it (models with
    /// smoothing chosen online): learning it right after records them without scoring again.
    pub scores: Option<CandidateScores>,
}

impl Doc {
    /// A document of known features (ids, values) and new ones (keys, values).
    pub fn new(ids: Vec<u32>, mut values: Vec<f64>, keys: Keys, key_values: Vec<f64>, epoch: Option<u64>) -> Self {
        let first_key = ids.len();
        let mut ids = ids;
        ids.resize(first_key + keys.len(), UNKNOWN);
        values.extend(key_values);
        Doc {
            ids,
            values,
            keys,
            first_key,
            epoch,
            scores: None,
        }
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The key of feature i, if the document keeps it (the features new at encoding time).
    #[inline]
    pub fn key(&self, i: usize) -> Option<&[u8]> {
        (i >= self.first_key).then(|| self.keys.key(i - self.first_key))
    }

    #[inline]
    pub fn hash(&self, i: usize) -> u64 {
        self.keys.hash(i - self.first_key)
    }

    /// Keep the key of every feature (copied from `key_of` for the known ones), so the
    /// document can be looked up again after the vocabulary changed.
    pub fn keep_keys(&mut self, key_of: impl Fn(u32) -> Option<(Vec<u8>, u64)>) {
        if self.first_key == 0 {
            return;
        }
        let mut keys = Keys::with_capacity(self.len(), self.keys.bytes() + 8 * self.first_key);
        for i in 0..self.first_key {
            let (key, hash) = key_of(self.ids[i]).unwrap_or_default();
            keys.push(&key, hash);
        }
        for i in 0..self.keys.len() {
            keys.push(self.keys.key(i), self.keys.hash(i));
        }
        self.keys = keys;
        self.first_key = 0;
        self.epoch = None;
    }

    /// Bytes held on the heap (allocated capacity).
    pub fn heap_bytes(&self) -> usize {
        self.ids.capacity() * 4
            + self.values.capacity() * 8
            + self.keys.heap_bytes()
            + self.scores.as_ref().map_or(0, CandidateScores::heap_bytes)
    }

    /// The first feature whose key the document keeps.
    pub fn first_key(&self) -> usize {
        self.first_key
    }

    /// Does the document keep the key of every feature?
    pub fn keys_everything(&self) -> bool {
        self.first_key == 0
    }

    /// Bytes of the keys of the features the vocabulary does not hold.
    pub fn unknown_bytes(&self) -> (usize, usize) {
        let mut tokens = 0;
        let mut bytes = 0;
        for i in self.first_key..self.len() {
            if self.ids[i] == UNKNOWN {
                tokens += 1;
                bytes += self.keys.key(i - self.first_key).len();
            }
        }
        (tokens, bytes)
    }
}

/// Counts per feature id within one document, in order of first appearance: a small open
/// addressing table from id to position (allocated at the first `add`: a caller that only
/// pushes distinct ids never needs it).
#[derive(Default)]
pub struct IdCounts {
    slots: Vec<u64>,
    /// Ids expected: the table's first size.
    expected: usize,
    pub ids: Vec<u32>,
    pub values: Vec<f64>,
}

impl IdCounts {
    pub fn with_capacity(n: usize) -> Self {
        IdCounts {
            slots: Vec::new(),
            expected: n,
            ids: Vec::with_capacity(n),
            values: Vec::with_capacity(n),
        }
    }

    /// Add `by` to the count of `id`.
    #[inline]
    pub fn add(&mut self, id: u32, by: f64) {
        if 2 * (self.ids.len() + 1) > self.slots.len() {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut at = (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) as usize >> 7 & mask;
        loop {
            let slot = self.slots[at];
            if slot == 0 {
                self.slots[at] = ((id as u64 + 1) << 32) | self.ids.len() as u64;
                self.ids.push(id);
                self.values.push(by);
                return;
            }
            if (slot >> 32) as u32 == id.wrapping_add(1) && (slot >> 32) != 0 {
                self.values[(slot & 0xffff_ffff) as usize] += by;
                return;
            }
            at = (at + 1) & mask;
        }
    }

    /// Append an id the caller knows was never added (no table: binary features whose
    /// caller tracks what it has seen); not to be mixed with `add`.
    #[inline]
    pub fn push_distinct(&mut self, id: u32, by: f64) {
        debug_assert!(self.slots.is_empty(), "push_distinct after add");
        self.ids.push(id);
        self.values.push(by);
    }

    fn grow(&mut self) {
        let first = (2 * self.expected.max(self.ids.len() + 1)).next_power_of_two();
        let size = (self.slots.len() * 2).max(first).max(16);
        self.slots = vec![0; size];
        let mask = size - 1;
        for (position, &id) in self.ids.iter().enumerate() {
            let mut at = (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) as usize >> 7 & mask;
            while self.slots[at] != 0 {
                at = (at + 1) & mask;
            }
            self.slots[at] = ((id as u64 + 1) << 32) | position as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_counts_add_up_in_first_appearance_order() {
        let mut counts = IdCounts::with_capacity(2);
        for id in [7, 3, 7, 0, 3, 7, u32::MAX - 1] {
            counts.add(id, 1.0);
        }
        for id in 100..200 {
            counts.add(id, 0.5);
        }
        assert_eq!(&counts.ids[..4], &[7, 3, 0, u32::MAX - 1]);
        assert_eq!(&counts.values[..4], &[3.0, 2.0, 1.0, 1.0]);
        assert_eq!(counts.ids.len(), 104);
    }

    #[test]
    fn known_features_come_first_and_keys_follow() {
        let mut keys = Keys::default();
        keys.push(b"new", 42);
        let mut doc = Doc::new(vec![5], vec![2.0], keys, vec![1.0], Some(3));
        assert_eq!(doc.ids, vec![5, UNKNOWN]);
        assert_eq!(doc.key(0), None);
        assert_eq!(doc.key(1), Some(&b"new"[..]));
        assert_eq!(doc.unknown_bytes(), (1, 3));
        doc.keep_keys(|id| (id == 5).then(|| (b"old".to_vec(), 9)));
        assert_eq!(doc.key(0), Some(&b"old"[..]));
        assert_eq!(doc.hash(0), 9);
        assert_eq!(doc.epoch, None);
    }
}
