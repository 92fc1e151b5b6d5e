//! A bag of features being counted: distinct byte strings with their counts, in
//! first-appearance order, each hashed once (by the caller: a model passes its
//! vocabulary's hash, so its lookups reuse it).

use crate::doc::Keys;
use hashbrown::HashTable;

#[derive(Default, Debug)]
pub struct Bag {
    keys: Keys,
    values: Vec<f64>,
    /// (hash, index): the hash inline, so a probe rarely reads the keys.
    table: HashTable<(u64, u32)>,
}

impl Bag {
    /// An empty bag with room for about `features` distinct features of `bytes` bytes.
    pub fn with_capacity(features: usize, bytes: usize) -> Self {
        Bag { keys: Keys::with_capacity(features, bytes), values: Vec::with_capacity(features), table: HashTable::with_capacity(features) }
    }

    pub fn clear(&mut self) {
        self.keys = Keys::default();
        self.values.clear();
        self.table.clear();
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Count `by` more of `feature`, whose hash is `hash`.
    #[inline]
    pub fn add(&mut self, feature: &[u8], hash: u64, by: f64) {
        let keys = &self.keys;
        if let Some(&(_, i)) = self.table.find(hash, |&(h, i)| h == hash && keys.key(i as usize) == feature) {
            self.values[i as usize] += by;
            return;
        }
        let i = self.values.len() as u32;
        self.keys.push(feature, hash);
        self.values.push(by);
        self.table.insert_unique(hash, (hash, i), |&(h, _)| h);
    }

    pub fn feature(&self, i: usize) -> &[u8] {
        self.keys.key(i)
    }

    pub fn hash(&self, i: usize) -> u64 {
        self.keys.hash(i)
    }

    pub fn count(&self, i: usize) -> f64 {
        self.values[i]
    }

    /// Every count set to 1 (binary features).
    pub fn binarize(&mut self) {
        self.values.iter_mut().for_each(|v| *v = 1.0);
    }

    /// The keys and their counts.
    pub fn into_parts(self) -> (Keys, Vec<f64>) {
        (self.keys, self.values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_distinct_features_in_first_appearance_order() {
        let mut bag = Bag::default();
        for (word, hash) in [(&b"b"[..], 7), (b"a", 3), (b"b", 7), (b"c", 7)] {
            bag.add(word, hash, 1.0);
        }
        let listed: Vec<(&[u8], f64)> = (0..bag.len()).map(|i| (bag.feature(i), bag.count(i))).collect();
        assert_eq!(listed, vec![(&b"b"[..], 2.0), (&b"a"[..], 1.0), (&b"c"[..], 1.0)]);
    }
}
