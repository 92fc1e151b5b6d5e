//! A bag of features being counted: distinct byte strings with their counts, in
//! first-appearance order, each hashed once (by the caller: a model passes its
//! vocabulary's hash, so its lookups reuse it).

use crate::doc::Keys;

#[derive(Default, Debug)]
pub struct Bag {
    keys: Keys,
    values: Vec<f64>,
    /// Open addressing: 0 is empty, else (high half of the hash << 32) | (index + 1), so a
    /// probe compares keys only when 32 bits of the hash agree.
    slots: Vec<u64>,
}

/// `a == b`, inline for the short keys most features are (a call to memcmp costs more
/// than the comparison itself): words of up to 16 bytes are two overlapping loads a side.
#[inline(always)]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], at: usize| u64::from_le_bytes(s[at..at + 8].try_into().unwrap_or([0; 8]));
    let half = |s: &[u8], at: usize| u32::from_le_bytes(s[at..at + 4].try_into().unwrap_or([0; 4]));
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        _ => a == b,
    }
}

impl Bag {
    /// An empty bag with room for about `features` distinct features of `bytes` bytes.
    pub fn with_capacity(features: usize, bytes: usize) -> Self {
        Bag {
            keys: Keys::with_capacity(features, bytes),
            values: Vec::with_capacity(features),
            slots: vec![0; (2 * features).next_power_of_two().max(16)],
        }
    }

    /// Room for about `features` more distinct features of `bytes` bytes in all.
    pub fn reserve(&mut self, features: usize, bytes: usize) {
        self.keys.reserve(features, bytes);
        self.values.reserve(features);
        let slots = (2 * (self.values.len() + features)).next_power_of_two().max(16);
        if slots > self.slots.len() {
            self.resize_slots(slots);
        }
    }

    pub fn clear(&mut self) {
        self.keys = Keys::default();
        self.values.clear();
        self.slots.iter_mut().for_each(|s| *s = 0);
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Count `by` more of `feature`, whose hash is `hash`.
    #[inline(always)]
    pub fn add(&mut self, feature: &[u8], hash: u64, by: f64) {
        if 2 * (self.values.len() + 1) > self.slots.len() {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let tag = hash >> 32;
        let mut at = hash as usize & mask;
        loop {
            let slot = self.slots[at];
            if slot == 0 {
                self.slots[at] = (tag << 32) | (self.values.len() as u64 + 1);
                self.keys.push(feature, hash);
                self.values.push(by);
                return;
            }
            if slot >> 32 == tag {
                let i = (slot & 0xffff_ffff) as usize - 1;
                if same_bytes(self.keys.key(i), feature) {
                    self.values[i] += by;
                    return;
                }
            }
            at = (at + 1) & mask;
        }
    }

    fn grow(&mut self) {
        self.resize_slots((self.slots.len() * 2).max(16));
    }

    fn resize_slots(&mut self, size: usize) {
        let mask = size - 1;
        self.slots = vec![0; size];
        for i in 0..self.values.len() {
            let hash = self.keys.hash(i);
            let mut at = hash as usize & mask;
            while self.slots[at] != 0 {
                at = (at + 1) & mask;
            }
            self.slots[at] = ((hash >> 32) << 32) | (i as u64 + 1);
        }
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
    fn many_features_and_colliding_hashes_stay_apart() {
        let mut bag = Bag::with_capacity(1, 1);
        for i in 0..1000u64 {
            let key = format!("k{i}");
            bag.add(key.as_bytes(), i % 7, 1.0); // few distinct hashes: keys decide
            bag.add(key.as_bytes(), i % 7, 1.0);
        }
        assert_eq!(bag.len(), 1000);
        assert!((0..1000).all(|i| bag.count(i) == 2.0 && bag.feature(i) == format!("k{i}").as_bytes()));
    }

    #[test]
    fn same_bytes_is_equality() {
        let keys: Vec<Vec<u8>> = (0..=20)
            .flat_map(|n| [vec![b'a'; n], [vec![b'a'; n.saturating_sub(1)], vec![b'b']].concat()])
            .collect();
        for a in &keys {
            for b in &keys {
                assert_eq!(same_bytes(a, b), a == b);
                for i in 0..a.len() {
                    let mut c = a.clone();
                    c[i] ^= 1;
                    assert!(!same_bytes(a, &c));
                }
            }
        }
    }

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
