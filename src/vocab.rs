//! The exact vocabulary: token bytes -> feature id (u32), growing on the fly.
//!
//! Tokens live back to back in one byte arena and the hash table (`IdTable`) holds ids and
//! hash bits, so a token costs its bytes plus 21 to 34 bytes of bookkeeping (8 of its span,
//! 13 to 26 of table slots as the table fills; no allocation per token). Ids of
//! removed tokens are reused (last freed, first reused), so |V| and the id range stay as if
//! the removed token had never been seen. The hash is foldhash (its fast variant) with a
//! random per-process seed: tokens come from strangers, and a fixed hash would let them
//! choose collisions.
//!
//! A token is an arbitrary byte string. The Python layer stores a `str` token as its UTF-8
//! bytes and any other hashable token as 0xFF followed by a tagged encoding; 0xFF never
//! occurs in UTF-8, so the two kinds cannot collide.

use crate::bag::same_bytes;
use crate::idtable::IdTable;
use crate::prefetch::prefetch;
use std::hash::BuildHasher;

/// `Span::len` of an id that is free for reuse.
const FREE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Span {
    start: u32,
    len: u32,
}

#[derive(Debug, PartialEq, Eq)]
pub enum VocabularyError {
    /// The arena would pass 4 GiB of token bytes, or the ids 2^32 - 1.
    Full,
}

pub struct Vocabulary {
    arena: Vec<u8>,
    spans: Vec<Span>,
    table: IdTable,
    hasher: foldhash::fast::RandomState,
    free: Vec<u32>,
    /// Bytes of the arena no live token points to (removed tokens); compacted when large.
    garbage: usize,
    /// Bumped whenever a token gains or loses its id, so cached lookups can be trusted.
    epoch: u64,
    /// The epoch of the last removal: ids found at an epoch stay valid as long as no token
    /// was removed since.
    last_removal_epoch: u64,
}

impl Default for Vocabulary {
    fn default() -> Self {
        Self::new()
    }
}

impl Vocabulary {
    pub fn new() -> Self {
        Vocabulary {
            arena: Vec::new(),
            spans: Vec::new(),
            table: IdTable::default(),
            hasher: foldhash::fast::RandomState::default(),
            free: Vec::new(),
            garbage: 0,
            epoch: 0,
            last_removal_epoch: 0,
        }
    }

    /// Tokens with an id.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// One more than the largest id handed out so far (the rows a count table needs).
    pub fn capacity(&self) -> usize {
        self.spans.len()
    }

    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Tokens removed since `epoch`? (0 or 1: whether any was.)
    pub fn removals_since(&self, epoch: u64) -> u64 {
        (self.last_removal_epoch > epoch) as u64
    }

    /// Ids free for reuse, in the order they will NOT be reused (the last is reused first).
    pub fn free_ids(&self) -> &[u32] {
        &self.free
    }

    pub fn hasher(&self) -> &foldhash::fast::RandomState {
        &self.hasher
    }

    #[inline]
    pub fn hash(&self, token: &[u8]) -> u64 {
        self.hasher.hash_one(token)
    }

    #[inline]
    fn bytes_of(arena: &[u8], span: Span) -> &[u8] {
        &arena[span.start as usize..span.start as usize + span.len as usize]
    }

    /// The token of an id, None for a free or out-of-range id.
    pub fn token(&self, id: u32) -> Option<&[u8]> {
        let span = *self.spans.get(id as usize)?;
        if span.len == FREE {
            return None;
        }
        Some(Self::bytes_of(&self.arena, span))
    }

    /// Is `id` the id of a token (not free, in range)?
    pub fn contains_id(&self, id: u32) -> bool {
        self.spans.get(id as usize).is_some_and(|s| s.len != FREE)
    }

    #[inline]
    pub fn find(&self, token: &[u8]) -> Option<u32> {
        self.find_hashed(token, self.hash(token))
    }

    /// `find` with the hash already computed (`hash`), so a caller can look a token up
    /// and later add it without hashing it twice.
    #[inline]
    pub fn find_hashed(&self, token: &[u8], hash: u64) -> Option<u32> {
        let (arena, spans) = (&self.arena, &self.spans);
        self.table
            .find(hash, |id| same_bytes(Self::bytes_of(arena, spans[id as usize]), token))
    }

    /// The id of a token, adding it (with a recycled or fresh id) when it is new.
    pub fn find_or_add(&mut self, token: &[u8]) -> Result<u32, VocabularyError> {
        let hash = self.hash(token);
        match self.find_hashed(token, hash) {
            Some(id) => Ok(id),
            None => self.add_hashed(token, hash),
        }
    }

    /// Cache hints for a lookup of `hash` coming soon, in three steps a few tokens apart
    /// (`Encoder::finish`): the table slot, then the likely id's span, then its bytes. Each
    /// step reads only what the step before asked for.
    #[inline]
    pub fn prefetch_slot(&self, hash: u64) {
        self.table.prefetch(hash);
    }

    #[inline]
    pub fn prefetch_span(&self, hash: u64) {
        if let Some(span) = self.likely_span(hash) {
            prefetch(span);
        }
    }

    #[inline]
    pub fn prefetch_token(&self, hash: u64) {
        if let Some(byte) = self
            .likely_span(hash)
            .and_then(|span| self.arena.get(span.start as usize))
        {
            prefetch(byte);
        }
    }

    /// The span of the id in the home slot of `hash`, when its hash bits match.
    #[inline]
    fn likely_span(&self, hash: u64) -> Option<&Span> {
        self.table.likely(hash).and_then(|id| self.spans.get(id as usize))
    }

    /// Add a token known to be absent, with its hash; returns its id.
    pub fn add_hashed(&mut self, token: &[u8], hash: u64) -> Result<u32, VocabularyError> {
        debug_assert!(self.find_hashed(token, hash).is_none());
        if token.len() >= FREE as usize {
            return Err(VocabularyError::Full);
        }
        if self.arena.len() + token.len() > u32::MAX as usize {
            self.compact();
            if self.arena.len() + token.len() > u32::MAX as usize {
                return Err(VocabularyError::Full);
            }
        }
        grow_gently(&mut self.arena, token.len());
        let id = match self.free.last() {
            Some(&id) => id,
            None if self.spans.len() >= FREE as usize => return Err(VocabularyError::Full),
            None => self.spans.len() as u32,
        };
        // Nothing can fail from here on: the state changes only below.
        if self.free.last() == Some(&id) {
            self.free.pop();
        } else {
            grow_gently(&mut self.spans, 1);
            self.spans.push(Span { start: 0, len: FREE });
        }
        let span = Span {
            start: self.arena.len() as u32,
            len: token.len() as u32,
        };
        self.arena.extend_from_slice(token);
        self.spans[id as usize] = span;
        self.table.insert_unique(hash, id);
        self.epoch += 1;
        Ok(id)
    }

    /// Could `tokens` new tokens holding `bytes` bytes in all be added?
    pub fn has_room(&self, tokens: usize, bytes: usize) -> bool {
        let ids = self.spans.len() - self.free.len().min(self.spans.len()) + tokens;
        ids < FREE as usize && self.arena.len() - self.garbage + bytes <= u32::MAX as usize
    }

    /// Forget the token of `id`; the id becomes free for reuse. A free id is left alone.
    pub fn remove(&mut self, id: u32) {
        let Some(&span) = self.spans.get(id as usize) else {
            return;
        };
        if span.len == FREE {
            return;
        }
        let token = Self::bytes_of(&self.arena, span);
        let hash = self.hasher.hash_one(token);
        let found = self.table.remove(hash, id);
        debug_assert!(found, "a live token is in the table under its own hash");
        self.spans[id as usize] = Span { start: 0, len: FREE };
        self.free.push(id);
        self.garbage += span.len as usize;
        self.epoch += 1;
        self.last_removal_epoch = self.epoch;
        if self.garbage > 4096 && 2 * self.garbage > self.arena.len() {
            self.compact();
        }
    }

    /// `remove` of every id of `ids` (free or unknown ids are left alone). Many ids at once
    /// (a pruning pass drops a tenth of the vocabulary) are taken out of the table in one
    /// sequential sweep: each single removal would hash its token and probe for it, two
    /// cache misses per token.
    pub fn remove_many(&mut self, ids: &[u32]) {
        if ids.len() < 64 || 16 * ids.len() < self.table.len() {
            ids.iter().for_each(|&id| self.remove(id));
            return;
        }
        let mut going = vec![false; self.spans.len()];
        let mut removed = 0;
        for &id in ids {
            if let Some(span) = self.spans.get_mut(id as usize) {
                if span.len != FREE {
                    going[id as usize] = true;
                    removed += 1;
                    self.garbage += span.len as usize;
                    *span = Span { start: 0, len: FREE };
                    self.free.push(id);
                }
            }
        }
        if removed == 0 {
            return; // every id was free or unknown
        }
        self.table.retain(|id| !going[id as usize]);
        self.epoch += 1;
        self.last_removal_epoch = self.epoch;
        if self.garbage > 4096 && 2 * self.garbage > self.arena.len() {
            self.compact();
        }
    }

    /// Copy the live tokens into a fresh arena (ids and hashes do not change).
    fn compact(&mut self) {
        let mut arena = Vec::with_capacity(self.arena.len() - self.garbage);
        for span in self.spans.iter_mut() {
            if span.len != FREE {
                let start = arena.len() as u32;
                arena.extend_from_slice(Self::bytes_of(&self.arena, *span));
                span.start = start;
            }
        }
        self.arena = arena;
        self.garbage = 0;
    }

    /// The vocabulary a model file lists in id order: the keys in `bytes` back to back, key
    /// `id` ending at `ends[id]`. Err (a message) for ends out of order or a token listed twice.
    pub fn from_keys(bytes: &[u8], ends: &[u32]) -> Result<Vocabulary, String> {
        let mut start = 0usize;
        let mut tokens = Vec::with_capacity(ends.len());
        for &end in ends {
            let end = end as usize;
            if end < start || end > bytes.len() {
                return Err("vocabulary key ends out of order".to_string());
            }
            tokens.push(&bytes[start..end]);
            start = end;
        }
        let mut fresh = Vocabulary::new();
        fresh.restore(tokens.iter().enumerate().map(|(id, t)| (id as u32, *t)), &[])?;
        if fresh.len() != tokens.len() {
            return Err("the vocabulary lists a token twice".to_string());
        }
        Ok(fresh)
    }

    /// Take the layout of a saved vocabulary: each `(id, token)` of `entries`, and `free` ids
    /// for reuse.
    ///
    /// Err (a message) unless ids and free ids together are 0, 1, ... without gaps or
    /// repeats and the tokens are distinct. Leaves `self` unchanged on error.
    pub fn restore<'k>(
        &mut self,
        entries: impl Iterator<Item = (u32, &'k [u8])> + Clone,
        free: &[u32],
    ) -> Result<(), String> {
        let (count, token_bytes) = entries.clone().fold((0usize, 0usize), |(count, bytes), (_, token)| {
            (count + 1, bytes + token.len())
        });
        let n = count + free.len();
        let mut seen = vec![false; n];
        for id in entries.clone().map(|(id, _)| id).chain(free.iter().copied()) {
            let slot = seen.get_mut(id as usize).ok_or_else(|| {
                "feature ids and free ids must together be 0, 1, ... without gaps or repeats".to_string()
            })?;
            if *slot {
                return Err("feature ids and free ids must together be 0, 1, ... without gaps or repeats".into());
            }
            *slot = true;
        }
        let mut fresh = Vocabulary::new();
        fresh.hasher = self.hasher.clone();
        fresh.spans = vec![Span { start: 0, len: FREE }; n];
        // Sized once: growing the table rehashes every token so far, several times over.
        fresh.arena.reserve_exact(token_bytes);
        fresh.table.reserve(count);
        // The table is far larger than the caches: each token's home slot is fetched
        // `AHEAD` tokens before it is probed (hashes kept in a ring), as `prefetch` does for lookups.
        const AHEAD: usize = 16;
        let hasher = fresh.hasher.clone();
        let mut upcoming = entries.clone().map(|(_, token)| hasher.hash_one(token));
        let mut ring = [0u64; AHEAD];
        for slot in ring.iter_mut() {
            if let Some(hash) = upcoming.next() {
                fresh.table.prefetch(hash);
                *slot = hash;
            }
        }
        for (i, (id, token)) in entries.enumerate() {
            if fresh.arena.len() + token.len() > u32::MAX as usize {
                return Err("the vocabulary is too large (over 4 GiB of tokens)".into());
            }
            let hash = ring[i % AHEAD];
            if let Some(next) = upcoming.next() {
                fresh.table.prefetch(next);
                ring[i % AHEAD] = next;
            }
            if fresh.find_hashed(token, hash).is_some() {
                return Err("vocabulary tokens must be distinct".into());
            }
            fresh.table.insert_unique(hash, id);
            let Vocabulary { arena, spans, .. } = &mut fresh;
            spans[id as usize] = Span {
                start: arena.len() as u32,
                len: token.len() as u32,
            };
            arena.extend_from_slice(token);
        }
        fresh.free = free.to_vec();
        fresh.epoch = self.epoch + 1;
        fresh.last_removal_epoch = fresh.epoch;
        *self = fresh;
        Ok(())
    }

    /// Bytes this vocabulary holds in memory. The arena and the spans count up to their
    /// length: they grow by doubling, and the spare capacity past the length is never
    /// written, so the allocator's large blocks (mapped lazily, grown by mremap) leave it
    /// without pages; counting it put nbytes up to 1.5x the resident memory right after a
    /// doubling (tests/core/test_core_memory.py). The hash table's entries spread over all of
    /// it (a grown table is at least 5/16 full: every page holds some), so it counts whole.
    pub fn heap_bytes(&self) -> usize {
        self.arena.len()
            + self.spans.len() * std::mem::size_of::<Span>()
            + self.table.allocation_size()
            + self.free.capacity() * 4
    }

    /// Ids of the live tokens, ascending.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.spans
            .iter()
            .enumerate()
            .filter(|(_, s)| s.len != FREE)
            .map(|(i, _)| i as u32)
    }
}

/// Make room for `more` items growing by a quarter (not Vec's doubling): a vocabulary of
/// hundreds of thousands of tokens then wastes at most a fifth of its size, and growth stays
/// geometric (amortised O(1) per token).
fn grow_gently<T>(vec: &mut Vec<T>, more: usize) {
    if vec.len() + more > vec.capacity() {
        vec.reserve_exact((vec.capacity() / 4).max(more).max(64));
    }
}

/// Feature hashing: a token's id is CRC-32 of its bytes modulo the number of buckets
/// (stable across processes and versions, so hashed models saved earlier still load).
pub fn bucket(token: &[u8], n_buckets: u32) -> u32 {
    !crc32_update(!0, token) % n_buckets
}

/// CRC-32 (IEEE 802.3, as zlib and `crc32fast`) of `bytes` continued from `state`: start
/// from `!0`, the checksum is `!state` at the end. Slice-by-4 tables: a feature key is a few
/// bytes long, where crc32fast goes byte by byte after setting up its state, and byte
/// n-grams hash thousands of keys a message (src/ngrams.rs continues the state after a prefix).
#[inline]
pub fn crc32_update(mut state: u32, bytes: &[u8]) -> u32 {
    let mut words = bytes.chunks_exact(4);
    for w in &mut words {
        state ^= u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        state = CRC_TABLES[3][(state & 0xff) as usize]
            ^ CRC_TABLES[2][((state >> 8) & 0xff) as usize]
            ^ CRC_TABLES[1][((state >> 16) & 0xff) as usize]
            ^ CRC_TABLES[0][(state >> 24) as usize];
    }
    for &b in words.remainder() {
        state = CRC_TABLES[0][((state ^ b as u32) & 0xff) as usize] ^ (state >> 8);
    }
    state
}

/// Table k maps a byte to its CRC-32 contribution k bytes further on (reflected polynomial 0xEDB88320).
const CRC_TABLES: [[u32; 256]; 4] = crc_tables();

const fn crc_tables() -> [[u32; 256]; 4] {
    let mut tables = [[0u32; 256]; 4];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut bit = 0;
        while bit < 8 {
            c = if c & 1 != 0 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 };
            bit += 1;
        }
        tables[0][i] = c;
        i += 1;
    }
    let mut k = 1;
    while k < 4 {
        let mut i = 0;
        while i < 256 {
            let previous = tables[k - 1][i];
            tables[k][i] = tables[0][(previous & 0xff) as usize] ^ (previous >> 8);
            i += 1;
        }
        k += 1;
    }
    tables
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vocabulary_from_keys_gives_ids_in_order_and_refuses_bad_ends_and_repeats() {
        let v = Vocabulary::from_keys(b"abbc", &[1, 3, 4]).unwrap();
        assert_eq!((v.find(b"a"), v.find(b"bb"), v.find(b"c")), (Some(0), Some(1), Some(2)));
        assert!(Vocabulary::from_keys(b"abbc", &[3, 1]).is_err());
        assert!(Vocabulary::from_keys(b"abbc", &[5]).is_err());
        assert!(Vocabulary::from_keys(b"aa", &[1, 2]).is_err());
    }

    #[test]
    fn ids_grow_and_are_reused_after_removal() {
        let mut v = Vocabulary::new();
        assert_eq!(v.find_or_add(b"a").unwrap(), 0);
        assert_eq!(v.find_or_add(b"b").unwrap(), 1);
        assert_eq!(v.find_or_add(b"a").unwrap(), 0);
        assert_eq!(v.len(), 2);
        v.remove(0);
        assert_eq!(v.find(b"a"), None);
        assert_eq!(v.len(), 1);
        assert_eq!(v.capacity(), 2);
        assert_eq!(v.find_or_add(b"c").unwrap(), 0);
        assert_eq!(v.token(0), Some(&b"c"[..]));
        assert_eq!(v.find_or_add(b"d").unwrap(), 2);
    }

    #[test]
    fn epoch_moves_only_when_ids_change() {
        let mut v = Vocabulary::new();
        let e0 = v.epoch();
        v.find_or_add(b"x").unwrap();
        let e1 = v.epoch();
        assert!(e1 > e0);
        v.find_or_add(b"x").unwrap();
        assert_eq!(v.epoch(), e1);
        v.remove(0);
        assert!(v.epoch() > e1);
    }

    #[test]
    fn removing_many_is_removing_each() {
        let tokens: Vec<Vec<u8>> = (0..5_000).map(|i| format!("t{i}").into_bytes()).collect();
        let (mut one_by_one, mut at_once) = (Vocabulary::new(), Vocabulary::new());
        for t in &tokens {
            one_by_one.find_or_add(t).unwrap();
            at_once.find_or_add(t).unwrap();
        }
        // every third id, one unknown id and one repeated: the ids both free in the same order
        let mut gone: Vec<u32> = (0..5_000).step_by(3).collect();
        gone.extend([9_999, 3]);
        gone.iter().for_each(|&id| one_by_one.remove(id));
        at_once.remove_many(&gone);
        assert!(at_once.epoch() > 0 && at_once.removals_since(0) == 1);
        assert_eq!(at_once.free_ids(), one_by_one.free_ids());
        assert_eq!(at_once.len(), one_by_one.len());
        for t in &tokens {
            assert_eq!(at_once.find(t), one_by_one.find(t));
        }
        for t in ["new1", "new2"] {
            assert_eq!(at_once.find_or_add(t.as_bytes()), one_by_one.find_or_add(t.as_bytes()));
        }
    }

    #[test]
    fn compaction_keeps_every_live_token() {
        let mut v = Vocabulary::new();
        let tokens: Vec<Vec<u8>> = (0..20_000).map(|i| format!("token{i}").into_bytes()).collect();
        for t in &tokens {
            v.find_or_add(t).unwrap();
        }
        for id in (0..20_000).step_by(3) {
            v.remove(id);
        }
        for (i, t) in tokens.iter().enumerate() {
            let expected = if i % 3 == 0 { None } else { Some(i as u32) };
            assert_eq!(v.find(t), expected);
        }
        assert!(v.arena.len() < 20_000 * 10);
    }

    #[test]
    fn restore_checks_layout() {
        let mut v = Vocabulary::new();
        let pairs =
            |ids: &'static [u32], tokens: &'static [&'static [u8]]| ids.iter().copied().zip(tokens.iter().copied());
        v.restore(pairs(&[0, 2], &[b"a", b"b"]), &[1]).unwrap();
        assert_eq!(v.find(b"b"), Some(2));
        assert_eq!(v.find_or_add(b"c").unwrap(), 1);
        assert!(v.restore(pairs(&[0, 0], &[b"a", b"b"]), &[]).is_err());
        assert!(v.restore(pairs(&[0, 1], &[b"a", b"a"]), &[]).is_err());
        assert!(v.restore(pairs(&[0, 3], &[b"a", b"b"]), &[]).is_err());
        // A failed restore leaves the vocabulary as it was.
        assert_eq!(v.find(b"c"), Some(1));
    }

    #[test]
    fn restore_finds_every_token_past_the_prefetch_ring() {
        // The hashes run 16 tokens ahead of the inserts: every length around that, and a
        // repeat found wherever it falls.
        for n in [0usize, 1, 15, 16, 17, 33, 1000] {
            let tokens: Vec<Vec<u8>> = (0..n).map(|i| format!("token{i}").into_bytes()).collect();
            let mut v = Vocabulary::new();
            v.restore((0..n as u32).zip(tokens.iter().map(Vec::as_slice)), &[])
                .unwrap();
            for (id, token) in tokens.iter().enumerate() {
                assert_eq!(v.find(token), Some(id as u32), "{n} tokens");
            }
            for repeat_at in [16, 17, 32].into_iter().filter(|&at| at < n) {
                let mut repeated = tokens.clone();
                repeated[repeat_at] = tokens[repeat_at - 5].clone();
                let mut w = Vocabulary::new();
                let entries = (0..n as u32).zip(repeated.iter().map(Vec::as_slice));
                assert!(w.restore(entries, &[]).is_err(), "a repeat at {repeat_at} of {n}");
            }
        }
    }

    #[test]
    fn buckets_are_crc32() {
        assert_eq!(bucket(b"hello", 1 << 20), crc32fast::hash(b"hello") % (1 << 20));
        // every length from 0 to 40 and many contents, against crc32fast
        let mut x: u64 = 0x1234_5678_9abc_def0;
        let mut key = Vec::new();
        for len in 0..=40usize {
            for _ in 0..50 {
                key.clear();
                for _ in 0..len {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    key.push(x as u8);
                }
                assert_eq!(!crc32_update(!0, &key), crc32fast::hash(&key));
                assert_eq!(bucket(&key, 1_000_003), crc32fast::hash(&key) % 1_000_003);
                let (head, tail) = key.split_at(len / 3);
                assert_eq!(!crc32_update(crc32_update(!0, head), tail), crc32fast::hash(&key));
            }
        }
    }
}
