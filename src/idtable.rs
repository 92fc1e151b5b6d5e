//! The vocabulary's hash table: open addressing with linear probing, one `u64` a slot
//! holding the upper 32 bits of a token's hash and its id. The table never reads a token:
//! the caller's `eq` compares the token of a candidate id, and growing, removing and
//! rebuilding place entries by the hash bits the slots keep. Its home slot is known from
//! the hash alone, so a loop over many tokens can ask for the slots it will probe a few
//! tokens ahead (`prefetch`), which a general-purpose table does not offer.
//!
//! Slot: 0 is empty; otherwise `(hash >> 32) << 32 | (id + 1)` (ids are below u32::MAX).
//! The home of an entry is its 32 hash bits modulo the (power of two) size. Removal shifts
//! the following entries back (no tombstones), so a probe ends at the first empty slot.

use crate::prefetch::prefetch;

#[derive(Debug, Default)]
pub struct IdTable {
    slots: Vec<u64>,
    len: usize,
}

#[inline]
fn tag(hash: u64) -> u64 {
    hash >> 32
}

#[inline]
fn pack(hash: u64, id: u32) -> u64 {
    debug_assert!(id < u32::MAX);
    (tag(hash) << 32) | (id as u64 + 1)
}

#[inline]
fn id_of(slot: u64) -> u32 {
    (slot as u32).wrapping_sub(1)
}

impl IdTable {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    #[inline]
    fn home(&self, tag: u64) -> usize {
        tag as usize & self.mask()
    }

    /// The id whose token `eq` accepts, among those stored with `hash`.
    #[inline]
    pub fn find(&self, hash: u64, mut eq: impl FnMut(u32) -> bool) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let (t, mask) = (tag(hash), self.mask());
        let mut at = self.home(t);
        loop {
            let slot = self.slots[at];
            if slot == 0 {
                return None;
            }
            if slot >> 32 == t && eq(id_of(slot)) {
                return Some(id_of(slot));
            }
            at = (at + 1) & mask;
        }
    }

    /// Start loading the home slot of `hash`.
    #[inline]
    pub fn prefetch(&self, hash: u64) {
        if !self.slots.is_empty() {
            prefetch(&self.slots[self.home(tag(hash))]);
        }
    }

    /// The id in the home slot of `hash` when its hash bits match (the likely answer of a
    /// `find`, for prefetching what comes after: no token is compared).
    #[inline]
    pub fn likely(&self, hash: u64) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let slot = self.slots[self.home(tag(hash))];
        (slot != 0 && slot >> 32 == tag(hash)).then(|| id_of(slot))
    }

    /// Store `id` under `hash`; the caller knows no stored id has the same token.
    pub fn insert_unique(&mut self, hash: u64, id: u32) {
        self.reserve(1);
        self.place(pack(hash, id));
        self.len += 1;
    }

    fn place(&mut self, slot: u64) {
        let mask = self.mask();
        let mut at = self.home(slot >> 32);
        while self.slots[at] != 0 {
            at = (at + 1) & mask;
        }
        self.slots[at] = slot;
    }

    /// Room for `more` entries at a load of at most 3/4: a search probes 2.5 slots on
    /// average at that load when it finds its id, 8.5 when it does not (eight slots to a
    /// cache line), and a table sized for 5/8 would take twice the memory for a third of
    /// the vocabularies' sizes (177,451 tokens: 4 MiB at 5/8, 2 MiB at 3/4).
    pub fn reserve(&mut self, more: usize) {
        let needed = self.len + more;
        if 4 * needed <= 3 * self.slots.len() {
            return;
        }
        let mut size = self.slots.len().max(16);
        while 4 * needed > 3 * size {
            size *= 2;
        }
        let old = std::mem::replace(&mut self.slots, vec![0; size]);
        for slot in old.into_iter().filter(|&s| s != 0) {
            self.place(slot);
        }
    }

    /// Take `id`, stored under `hash`, out; false when it is not there.
    pub fn remove(&mut self, hash: u64, id: u32) -> bool {
        if self.slots.is_empty() {
            return false;
        }
        let (wanted, mask) = (pack(hash, id), self.mask());
        let mut hole = self.home(tag(hash));
        loop {
            match self.slots[hole] {
                0 => return false,
                slot if slot == wanted => break,
                _ => hole = (hole + 1) & mask,
            }
        }
        // Shift back the entries after the hole that may live there: those whose home does
        // not lie between the hole and themselves.
        let mut at = hole;
        loop {
            at = (at + 1) & mask;
            let slot = self.slots[at];
            if slot == 0 {
                break;
            }
            let home = self.home(slot >> 32);
            if at.wrapping_sub(home) & mask >= at.wrapping_sub(hole) & mask {
                self.slots[hole] = slot;
                hole = at;
            }
        }
        self.slots[hole] = 0;
        self.len -= 1;
        true
    }

    /// Keep the entries whose id `keep` accepts: one pass over the table, in place (no
    /// second table: a pruning pass must not need twice the table's memory). Starting
    /// after an empty slot, each entry is taken out and, if kept, placed again from its
    /// home: it lands at or before where it was, since the slot it left is free.
    pub fn retain(&mut self, keep: impl Fn(u32) -> bool) {
        let Some(empty) = self.slots.iter().position(|&s| s == 0) else {
            return; // only an unallocated table has no empty slot
        };
        let mask = self.mask();
        for step in 1..=self.slots.len() {
            let at = (empty + step) & mask;
            let slot = std::mem::take(&mut self.slots[at]);
            if slot == 0 {
                continue;
            }
            if keep(id_of(slot)) {
                self.place(slot);
            } else {
                self.len -= 1;
            }
        }
    }

    /// Bytes allocated (the table is written across all of it).
    pub fn allocation_size(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// A hash with few distinct upper bits, so that entries collide and wrap around.
    fn crowded(key: u32) -> u64 {
        let mixed = (key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ((mixed >> 60) << 32) | (key as u64)
    }

    /// Every entry reachable from its home without an empty slot between, the count right,
    /// the load at most 3/4.
    fn check(table: &IdTable) {
        let mask = table.slots.len().wrapping_sub(1);
        let mut count = 0;
        for (at, &slot) in table.slots.iter().enumerate() {
            if slot == 0 {
                continue;
            }
            count += 1;
            let mut p = table.home(slot >> 32);
            while p != at {
                assert_ne!(table.slots[p], 0, "an empty slot between an entry's home and the entry");
                p = (p + 1) & mask;
            }
        }
        assert_eq!(count, table.len);
        assert!(4 * table.len <= 3 * table.slots.len() || table.slots.is_empty());
    }

    /// Homes in the last four slots of a table of 2^bits slots: the runs wrap around its end.
    fn near_end(key: u32, bits: u32) -> u64 {
        let mixed = (key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let home = ((1u64 << bits) - 1 - (mixed >> 62)) & 0xFFFF_FFFF;
        let high = (mixed >> 40) & 0xFFF;
        ((((high << bits) | home) & 0xFFFF_FFFF) << 32) | key as u64
    }

    /// Random inserts and removals of `keys` keys against a map, the table checked every
    /// `check_every` steps (invariants and every key's lookup), then a `retain`.
    fn churn(hash: impl Fn(u32) -> u64, keys: u32, seed: u64, check_every: u32) {
        let mut table = IdTable::default();
        let mut model: HashMap<u32, u32> = HashMap::new(); // key -> id
        let (mut x, mut next_id) = (seed, 0);
        for step in 0..20_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let key = (x % keys as u64) as u32;
            match model.get(&key) {
                Some(&id) if x.is_multiple_of(2) => {
                    assert!(table.remove(hash(key), id));
                    model.remove(&key);
                }
                Some(&id) => {
                    assert!(!table.remove(hash(key), id + 100_000)); // another id, or another hash: no change
                    assert!(!table.remove(hash(key) ^ (1 << 63), id));
                }
                None => {
                    table.insert_unique(hash(key), next_id);
                    model.insert(key, next_id);
                    next_id += 1;
                }
            }
            if step.is_multiple_of(check_every) {
                check(&table);
                for k in 0..keys {
                    let want = model.get(&k).copied();
                    assert_eq!(
                        table.find(hash(k), |id| Some(id) == want),
                        want,
                        "key {k} at step {step}"
                    );
                }
            }
        }
        table.retain(|id| id.is_multiple_of(3));
        model.retain(|_, id| id.is_multiple_of(3));
        check(&table);
        assert_eq!(table.len(), model.len());
        for (&k, &id) in &model {
            assert_eq!(table.find(hash(k), |found| found == id), Some(id));
        }
    }

    #[test]
    fn behaves_as_a_map_under_inserts_and_removals() {
        churn(crowded, 600, 0x1234_5678, 997);
    }

    #[test]
    fn runs_that_wrap_around_keep_every_entry_reachable() {
        for bits in [4u32, 5, 6, 7] {
            churn(|key| near_end(key, bits), 40, 0x9876_5432 + bits as u64, 1);
        }
    }

    #[test]
    fn one_hash_for_thousands_of_ids_still_terminates() {
        let (mut table, hash) = (IdTable::default(), 0xABCD_0000_0000_0000);
        for id in 0..2000 {
            table.insert_unique(hash, id);
        }
        check(&table);
        assert_eq!(table.find(hash, |id| id == 1999), Some(1999));
        assert_eq!(table.find(hash, |_| false), None);
        for id in (0..2000).rev() {
            assert!(table.remove(hash, id));
        }
        check(&table);
        assert!(table.is_empty());
    }

    #[test]
    fn an_empty_table_finds_nothing() {
        let mut table = IdTable::default();
        assert_eq!(table.find(7, |_| true), None);
        assert_eq!(table.likely(7), None);
        table.prefetch(7);
        assert!(!table.remove(7, 1));
        table.retain(|_| true);
        assert!(table.is_empty());
        table.insert_unique(7 << 32, 3);
        assert_eq!(table.find(7 << 32, |id| id == 3), Some(3));
        assert_eq!(table.likely(7 << 32), Some(3));
        assert_eq!(table.find(8 << 32, |_| true), None);
        table.retain(|_| false);
        assert!(table.is_empty() && table.likely(7 << 32).is_none());
    }
}
