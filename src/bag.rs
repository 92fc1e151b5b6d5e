//! A bag of features: distinct byte strings with their counts, in first-appearance order.
//!
//! What a tokenizer's feature occurrences become before they meet the vocabulary: each
//! distinct feature is hashed once (with the vocabulary's hasher, so the hash is reused
//! for the vocabulary lookup) and its bytes kept in one arena.

use hashbrown::HashTable;

#[derive(Clone, Copy, Debug)]
pub struct Entry {
    start: u32,
    len: u32,
    pub hash: u64,
    pub count: f64,
}

#[derive(Default, Debug)]
pub struct Bag {
    arena: Vec<u8>,
    entries: Vec<Entry>,
    table: HashTable<u32>,
}

impl Bag {
    pub fn clear(&mut self) {
        self.arena.clear();
        self.entries.clear();
        self.table.clear();
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Count `by` more of `feature`, whose hash is `hash`.
    #[inline]
    pub fn add(&mut self, feature: &[u8], hash: u64, by: f64) {
        let (arena, entries) = (&self.arena, &mut self.entries);
        let found = self.table.find(hash, |&i| {
            let e = entries[i as usize];
            e.hash == hash && &arena[e.start as usize..(e.start + e.len) as usize] == feature
        });
        if let Some(&i) = found {
            entries[i as usize].count += by;
            return;
        }
        let i = entries.len() as u32;
        entries.push(Entry { start: self.arena.len() as u32, len: feature.len() as u32, hash, count: by });
        self.arena.extend_from_slice(feature);
        let entries = &self.entries;
        self.table.insert_unique(hash, i, |&j| entries[j as usize].hash);
    }

    pub fn feature(&self, i: usize) -> &[u8] {
        let e = self.entries[i];
        &self.arena[e.start as usize..(e.start + e.len) as usize]
    }

    pub fn entry(&self, i: usize) -> &Entry {
        &self.entries[i]
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Every count set to 1 (binary features).
    pub fn binarize(&mut self) {
        self.entries.iter_mut().for_each(|e| e.count = 1.0);
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
        let listed: Vec<(&[u8], f64)> = (0..bag.len()).map(|i| (bag.feature(i), bag.entry(i).count)).collect();
        assert_eq!(listed, vec![(&b"b"[..], 2.0), (&b"a"[..], 1.0), (&b"c"[..], 1.0)]);
    }
}
