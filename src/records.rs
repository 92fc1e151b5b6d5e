//! The steps logistic regression (and a fusion's stacker) took per message, by fingerprint,
//! kept so that unlearning a message takes its steps back exactly: the structure behind a
//! `LogisticRegression`'s `ledger` and a `Fusion`'s `records` (src/replay.rs uses it).
//!
//! A logistic step depends on the weights it was taken on (`crate::logistic`): undone later
//! from its own gradient it leaves what the steps after it did differently because of it.
//! So for the newest `window` entries the document is kept too, as the model read it (its
//! feature ids and values): to unlearn a message among them, the steps after it are undone,
//! its own, and the later ones taken again on the model as it then stands (src/replay.rs).
//! The older entries (up to `max_entries` lessons and as many messages seen without a label,
//! the oldest of each kind forgotten first) keep their step alone: unlearning one undoes that
//! step, reading the document from the message again.
//!
//! Documents live back to back in one byte arena, each encoded compactly: the number of
//! features (LEB128), a flag byte (0: every value is 1, as for byte n-grams, and no values
//! follow; 1: the values follow), the ids in increasing order as LEB128 deltas (the first
//! from 0, each later one >= 1 from the one before), then the values as little-endian f64.
//! A hashed document of 2,500 ids in 2^18 buckets takes about 3.3 KB (10 KB as u32 ids).
//! Dropped documents leave dead bytes, taken out when they outweigh the live ones.
//!
//! An invariant the replay relies on, kept by construction and checked on load: documents
//! are dropped oldest first, so every entry after one that holds a document and whose step
//! moved the weights holds its document too.

use crate::logistic::Step;
use std::collections::{HashMap, VecDeque};

pub const FINGERPRINT_BYTES: usize = 16;
pub type Fingerprint = [u8; FINGERPRINT_BYTES];
/// A document as it was kept, (ids, values), or why its bytes do not decode.
pub type Decoded = Result<(Vec<u32>, Vec<f64>), &'static str>;

/// What a fusion's stacker did on a message: its two inputs (naive Bayes' clipped log-odds,
/// logistic regression's log-odds) and its gradient.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stacked {
    pub inputs: [f64; 2],
    pub g: f64,
}

/// What learning (or observing) one message did.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// Logistic regression's class of the lesson (None: an observed message that took no
    /// lesson, delivered as a class logistic regression does not know).
    pub class: Option<usize>,
    /// The sample weight: of the lesson, or of the provisional lesson.
    pub weight: f64,
    /// What logistic regression's step used (a provisional one: decay 1; none: g empty).
    pub step: Step,
    /// A fusion's stacker step, when it stepped.
    pub stacker: Option<Stacked>,
    /// Seen without a label (a provisional lesson, or none): its stamp on the fusion's clock
    /// of messages seen, > 0; a lesson: 0.
    pub seen_at: u64,
    /// The classes logistic regression knew when it stepped (a replay steps again over those
    /// only: a class that came later had no say in the step).
    pub classes: usize,
    /// The document as logistic regression read it, in the arena.
    doc: Option<Span>,
}

impl Entry {
    /// A lesson (or a provisional lesson) without a document yet, taken by a model that
    /// knew `classes` classes.
    pub fn new(class: Option<usize>, weight: f64, step: Step, seen_at: u64, classes: usize) -> Self {
        Entry {
            class,
            weight,
            step,
            stacker: None,
            seen_at,
            classes,
            doc: None,
        }
    }

    /// A lesson with its label (not an observation)?
    pub fn is_lesson(&self) -> bool {
        self.seen_at == 0
    }

    /// Did learning it change logistic regression or the stacker? A lesson always does
    /// (even one whose margin was met counts in the IDF and decays the weights); an
    /// observation only when it took a provisional step.
    pub fn changed_the_model(&self) -> bool {
        self.is_lesson() || self.step.moved()
    }

    pub fn has_document(&self) -> bool {
        self.doc.is_some()
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Span {
    start: usize,
    len: usize,
}

/// Fingerprint -> `Entry` for the last `max_entries` lessons and as many observations, oldest first, with the
/// documents of the newest `window` (see the module docstring).
#[derive(Clone, Debug)]
pub struct Records {
    max_entries: usize,
    window: usize,
    /// Oldest first; None where an entry was forgotten (taken out when they are many).
    slots: VecDeque<Option<(Fingerprint, Entry)>>,
    /// The sequence number of `slots[0]`.
    first: u64,
    index: HashMap<Fingerprint, u64>,
    arena: Vec<u8>,
    /// Arena bytes of documents dropped.
    dead: usize,
    /// Entries holding a document.
    documents: usize,
    /// No entry before this sequence number holds a document (where dropping starts).
    undocumented_before: u64,
    /// The lessons' and the observations' (fingerprint, sequence number), oldest first: each
    /// kind is capped at `max_entries` apart, so that a stream of mail seen without labels
    /// does not push out the lessons. An item whose entry was forgotten or kept again
    /// since is skipped when its turn comes (the index no longer gives that number).
    lessons: VecDeque<(Fingerprint, u64)>,
    observations: VecDeque<(Fingerprint, u64)>,
    /// Entries of each kind: [lessons, observations].
    counts: [usize; 2],
}

/// An entry's kind: 0 for a lesson, 1 for an observation.
fn kind(entry: &Entry) -> usize {
    usize::from(!entry.is_lesson())
}

impl Records {
    pub fn new(max_entries: usize, window: usize) -> Self {
        Records {
            max_entries,
            window: window.min(max_entries),
            slots: VecDeque::new(),
            first: 0,
            index: HashMap::new(),
            arena: Vec::new(),
            dead: 0,
            documents: 0,
            undocumented_before: 0,
            lessons: VecDeque::new(),
            observations: VecDeque::new(),
            counts: [0, 0],
        }
    }

    pub fn max_entries(&self) -> usize {
        self.max_entries
    }

    pub fn window(&self) -> usize {
        self.window
    }

    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Entries holding their document.
    pub fn documents(&self) -> usize {
        self.documents
    }

    fn slot(&self, seq: u64) -> Option<&(Fingerprint, Entry)> {
        self.slots.get((seq - self.first) as usize)?.as_ref()
    }

    pub fn get(&self, fingerprint: &Fingerprint) -> Option<&Entry> {
        let &seq = self.index.get(fingerprint)?;
        self.slot(seq).map(|(_, e)| e)
    }

    pub fn get_mut(&mut self, fingerprint: &Fingerprint) -> Option<&mut Entry> {
        let &seq = self.index.get(fingerprint)?;
        let at = (seq - self.first) as usize;
        self.slots.get_mut(at)?.as_mut().map(|(_, e)| e)
    }

    /// The sequence number of a message's entry (larger: learned later).
    pub fn position(&self, fingerprint: &Fingerprint) -> Option<u64> {
        self.index.get(fingerprint).copied()
    }

    /// The entries from sequence number `seq` on, oldest first, with their fingerprints.
    pub fn from(&self, seq: u64) -> impl Iterator<Item = &(Fingerprint, Entry)> {
        let skip = seq.saturating_sub(self.first) as usize;
        self.slots.iter().skip(skip).flatten()
    }

    /// Every entry, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &(Fingerprint, Entry)> {
        self.slots.iter().flatten()
    }

    /// Keep a message's entry as the newest (its old one forgotten), with its document
    /// (ids, values) when given and the window holds documents; the oldest entries beyond
    /// `max_entries`, and the oldest documents beyond `window`, are forgotten.
    pub fn keep(&mut self, fingerprint: Fingerprint, mut entry: Entry, doc: Option<(&[u32], &[f64])>) {
        self.forget(&fingerprint);
        entry.doc = None;
        if let Some((ids, values)) = doc.filter(|_| self.window > 0) {
            let start = self.arena.len();
            encode(ids, values, &mut self.arena);
            entry.doc = Some(Span {
                start,
                len: self.arena.len() - start,
            });
            self.documents += 1;
        }
        let seq = self.first + self.slots.len() as u64;
        let k = kind(&entry);
        self.slots.push_back(Some((fingerprint, entry)));
        self.index.insert(fingerprint, seq);
        self.queue(k).push_back((fingerprint, seq));
        self.counts[k] += 1;
        for k in [0, 1] {
            while self.counts[k] > self.max_entries {
                let Some((oldest, at)) = self.queue(k).pop_front() else {
                    break;
                };
                if self.index.get(&oldest) == Some(&at) {
                    self.forget(&oldest);
                }
            }
        }
        self.trim_documents();
        self.tidy();
    }

    fn queue(&mut self, kind: usize) -> &mut VecDeque<(Fingerprint, u64)> {
        if kind == 0 {
            &mut self.lessons
        } else {
            &mut self.observations
        }
    }

    /// Forget a message's entry; returns it (without its document).
    pub fn forget(&mut self, fingerprint: &Fingerprint) -> Option<Entry> {
        let seq = self.index.remove(fingerprint)?;
        let at = (seq - self.first) as usize;
        let (_, mut entry) = self.slots[at].take()?;
        self.counts[kind(&entry)] -= 1;
        self.drop_span(entry.doc.take());
        self.tidy();
        Some(entry)
    }

    /// A message's document as it was kept: (ids, values); None when not kept. Err for
    /// bytes that do not decode (only a damaged arena: checked on load).
    pub fn document(&self, entry: &Entry) -> Option<Decoded> {
        entry
            .doc
            .map(|span| decode(&self.arena[span.start..span.start + span.len]))
    }

    /// Drop every document (the window empties; the steps stay): what a merge leaves.
    pub fn drop_documents(&mut self) {
        for (_, entry) in self.slots.iter_mut().flatten() {
            entry.doc = None;
        }
        self.arena = Vec::new();
        self.dead = 0;
        self.documents = 0;
    }

    /// The positions of `fingerprints` in the order to take them back: those learned last
    /// first, then those not kept, in the order given.
    pub fn newest_first(&self, fingerprints: &[Fingerprint]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..fingerprints.len()).collect();
        order.sort_by_key(|&i| match self.position(&fingerprints[i]) {
            Some(seq) => (0, u64::MAX - seq, i),
            None => (1, 0, i),
        });
        order
    }

    /// Bytes held on the heap (an estimate of the map's and the deque's share).
    pub fn heap_bytes(&self) -> usize {
        let entry = std::mem::size_of::<Option<(Fingerprint, Entry)>>();
        let steps: usize = self.iter().map(|(_, e)| e.step.g.capacity() * 8).sum();
        self.slots.capacity() * entry
            + self.index.capacity() * (FINGERPRINT_BYTES + 8 + 8)
            + self.arena.capacity()
            + steps
    }

    fn drop_span(&mut self, span: Option<Span>) {
        if let Some(span) = span {
            self.dead += span.len;
            self.documents -= 1;
        }
    }

    /// Drop the oldest documents beyond the window.
    fn trim_documents(&mut self) {
        let mut at = self.undocumented_before.saturating_sub(self.first) as usize;
        while self.documents > self.window && at < self.slots.len() {
            if let Some((_, entry)) = self.slots[at].as_mut() {
                let span = entry.doc.take();
                self.drop_span(span);
            }
            at += 1;
        }
        self.undocumented_before = self.first + at as u64;
    }

    /// Take out forgotten slots at the front, all of them when they are many, and dead
    /// arena bytes when they outweigh the live ones.
    fn tidy(&mut self) {
        while let Some(None) = self.slots.front() {
            self.slots.pop_front();
            self.first += 1;
        }
        if self.slots.len() > 64 && self.slots.len() > 2 * self.index.len() {
            self.slots.retain(Option::is_some);
            self.first = 0;
            self.undocumented_before = 0;
            self.lessons.clear();
            self.observations.clear();
            for (seq, (fingerprint, entry)) in self.slots.iter().flatten().enumerate() {
                self.index.insert(*fingerprint, seq as u64);
                let queue = if kind(entry) == 0 {
                    &mut self.lessons
                } else {
                    &mut self.observations
                };
                queue.push_back((*fingerprint, seq as u64));
            }
        }
        if self.dead > 4096 && self.dead * 2 > self.arena.len() {
            let mut arena = Vec::with_capacity(self.arena.len() - self.dead);
            for (_, entry) in self.slots.iter_mut().flatten() {
                if let Some(span) = entry.doc.as_mut() {
                    let start = arena.len();
                    arena.extend_from_slice(&self.arena[span.start..span.start + span.len]);
                    span.start = start;
                }
            }
            self.arena = arena;
            self.dead = 0;
        }
    }

    /// The documents as a model file keeps them: per entry, oldest first, the length of its
    /// encoded document (0: none), and the encoded documents back to back.
    pub fn export_documents(&self) -> (Vec<i64>, Vec<u8>) {
        let mut lengths = Vec::with_capacity(self.len());
        let mut bytes = Vec::with_capacity(self.arena.len() - self.dead);
        for (_, entry) in self.iter() {
            match entry.doc {
                Some(span) => {
                    lengths.push(span.len as i64);
                    bytes.extend_from_slice(&self.arena[span.start..span.start + span.len]);
                }
                None => lengths.push(0),
            }
        }
        (lengths, bytes)
    }

    /// Records from a model file's entries (oldest first) and documents (`export_documents`;
    /// `documents` None: a file from before documents were kept, whose window starts empty).
    /// `rows`: the model's feature ids are below it. Err says what is wrong.
    pub fn import(
        max_entries: usize,
        window: usize,
        entries: Vec<(Fingerprint, Entry)>,
        documents: Option<(&[i64], &[u8])>,
        rows: usize,
    ) -> Result<Records, String> {
        let observations = entries.iter().filter(|(_, e)| !e.is_lesson()).count();
        let lessons = entries.len() - observations;
        if lessons > max_entries || observations > max_entries {
            return Err(format!(
                "{lessons} lessons' and {observations} observations' step records exceed the bound {max_entries} each"
            ));
        }
        let mut records = Records::new(max_entries, window);
        let lengths: Vec<i64> = match documents {
            Some((lengths, bytes)) => {
                if lengths.len() != entries.len() {
                    return Err(format!(
                        "one document length per step record: {} for {} records",
                        lengths.len(),
                        entries.len()
                    ));
                }
                if lengths.iter().any(|&n| n < 0) || lengths.iter().sum::<i64>() != bytes.len() as i64 {
                    return Err("the document lengths must be >= 0 and add up to the document bytes".into());
                }
                records.arena = bytes.to_vec();
                lengths.to_vec()
            }
            None => vec![0; entries.len()],
        };
        let mut start = 0usize;
        let mut kept_before = false;
        for ((fingerprint, mut entry), &len) in entries.into_iter().zip(&lengths) {
            let len = len as usize;
            if records.index.contains_key(&fingerprint) {
                return Err("duplicate step record fingerprints".into());
            }
            if len > 0 {
                let (ids, _) = decode(&records.arena[start..start + len])
                    .map_err(|m| format!("a kept document is damaged: {m}"))?;
                if ids.last().is_some_and(|&id| id as usize >= rows) {
                    return Err("a kept document's feature ids must be inside the model".into());
                }
                entry.doc = Some(Span { start, len });
                records.documents += 1;
                kept_before = true;
            } else if kept_before && entry.changed_the_model() {
                return Err("a step record after a kept document must keep its document".into());
            }
            start += len;
            let seq = records.slots.len() as u64;
            let k = kind(&entry);
            records.index.insert(fingerprint, seq);
            records.queue(k).push_back((fingerprint, seq));
            records.counts[k] += 1;
            records.slots.push_back(Some((fingerprint, entry)));
        }
        if records.documents > records.window {
            return Err(format!(
                "{} kept documents exceed the window {}",
                records.documents, records.window
            ));
        }
        Ok(records)
    }
}

fn push_varint(mut v: u32, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn read_varint(bytes: &[u8], at: &mut usize) -> Result<u32, &'static str> {
    let mut value: u64 = 0;
    for shift in (0..35).step_by(7) {
        let &byte = bytes.get(*at).ok_or("it ends inside a number")?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return u32::try_from(value).map_err(|_| "a number is too large");
        }
    }
    Err("a number is too long")
}

/// Append a document (ids, values; each id once) to `out` (see the module docstring).
fn encode(ids: &[u32], values: &[f64], out: &mut Vec<u8>) {
    push_varint(ids.len() as u32, out);
    let ones = values.iter().all(|&v| v == 1.0);
    out.push(u8::from(!ones));
    out.reserve(ids.len() * if ones { 2 } else { 10 });
    if ones {
        // the ids alone, sorted in place (no indirection: a byte n-gram document is all ones)
        push_deltas(sorted(ids).into_iter(), out);
    } else {
        let mut pairs: Vec<(u32, f64)> = ids.iter().copied().zip(values.iter().copied()).collect();
        pairs.sort_unstable_by_key(|&(id, _)| id);
        push_deltas(pairs.iter().map(|&(id, _)| id), out);
        for (_, v) in pairs {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

/// The largest id `sorted` reads through a bitmap: 2^20 bits, 128 KiB a thread.
const BITMAP_IDS: u32 = 1 << 20;

thread_local! {
    /// `sorted`'s bitmap, all zeros between calls (each call clears the words it set).
    static BITMAP: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A document's ids in increasing order. Ids below `BITMAP_IDS` (hashed ids: 2^18 buckets)
/// are set as bits and read back in order, which costs the ids and the words they span;
/// larger ones, or an id repeated (which a bitmap would merge), go through `radix_sort`.
fn sorted(ids: &[u32]) -> Vec<u32> {
    let max = ids.iter().copied().max().unwrap_or(0);
    if max < BITMAP_IDS {
        let bitmap_sorted = BITMAP.with(|cell| {
            let mut bitmap = cell.borrow_mut();
            let words = max as usize / 64 + 1;
            if bitmap.len() < words {
                bitmap.resize(words, 0);
            }
            let mut distinct = true;
            for &id in ids {
                let (word, bit) = (id as usize / 64, 1u64 << (id % 64));
                distinct &= bitmap[word] & bit == 0;
                bitmap[word] |= bit;
            }
            let mut out = Vec::with_capacity(ids.len());
            for (w, word) in bitmap[..words].iter_mut().enumerate() {
                let mut bits = std::mem::take(word);
                while bits != 0 {
                    out.push(w as u32 * 64 + bits.trailing_zeros());
                    bits &= bits - 1;
                }
            }
            distinct.then_some(out)
        });
        if let Some(out) = bitmap_sorted {
            return out;
        }
    }
    let mut out = ids.to_vec();
    radix_sort(&mut out);
    out
}

/// Sort ids by their 11-bit digits, lowest first, as many as the largest id has: hashed ids
/// (2^18 buckets) take two passes over a document, several times faster than a comparison
/// sort of its 2,500 ids, which was most of what keeping a document cost.
fn radix_sort(ids: &mut Vec<u32>) {
    const BITS: u32 = 11;
    let max = ids.iter().copied().max().unwrap_or(0);
    let mut other = vec![0u32; ids.len()];
    let mut shift = 0;
    while shift < 32 && (max >> shift) > 0 {
        let digit = |id: u32| ((id >> shift) & ((1 << BITS) - 1)) as usize;
        let mut starts = [0usize; 1 << BITS];
        for &id in ids.iter() {
            starts[digit(id)] += 1;
        }
        let mut sum = 0;
        for slot in starts.iter_mut() {
            let n = *slot;
            *slot = sum;
            sum += n;
        }
        for &id in ids.iter() {
            let d = digit(id);
            other[starts[d]] = id;
            starts[d] += 1;
        }
        std::mem::swap(ids, &mut other);
        shift += BITS;
    }
}

/// Increasing ids as LEB128 deltas, the first from 0.
fn push_deltas(ids: impl Iterator<Item = u32>, out: &mut Vec<u8>) {
    let mut previous = 0;
    for id in ids {
        push_varint(id - previous, out);
        previous = id;
    }
}

/// A document encoded by `encode`: (ids, increasing; values). Err for bytes `encode` could
/// not have written.
fn decode(bytes: &[u8]) -> Decoded {
    let mut at = 0;
    let n = read_varint(bytes, &mut at)? as usize;
    let flag = *bytes.get(at).ok_or("it ends before its flag")?;
    at += 1;
    if flag > 1 || n > bytes.len() {
        return Err("its header is not a document's");
    }
    let mut ids = Vec::with_capacity(n);
    let mut previous: u32 = 0;
    for k in 0..n {
        let delta = read_varint(bytes, &mut at)?;
        if k > 0 && delta == 0 {
            return Err("its ids must increase");
        }
        previous = if k == 0 {
            delta
        } else {
            previous.checked_add(delta).ok_or("an id is too large")?
        };
        ids.push(previous);
    }
    let values = if flag == 0 {
        vec![1.0; n]
    } else {
        let rest = &bytes[at..];
        if rest.len() != 8 * n {
            return Err("its values do not fill it");
        }
        at = bytes.len();
        let values: Vec<f64> = rest
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
            .collect();
        if !values.iter().all(|v| v.is_finite()) {
            return Err("its values must be finite");
        }
        values
    };
    if at != bytes.len() {
        return Err("bytes follow its end");
    }
    Ok((ids, values))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(i: u8) -> Fingerprint {
        [i; FINGERPRINT_BYTES]
    }

    fn lesson(class: usize) -> Entry {
        Entry::new(
            Some(class),
            1.0,
            Step {
                g: vec![0.5],
                decay: 1.0,
            },
            0,
            2,
        )
    }

    #[test]
    fn documents_round_trip_sorted_and_compact() {
        let mut out = Vec::new();
        let ids: Vec<u32> = vec![300, 5, 70_000, 6];
        encode(&ids, &[1.0; 4], &mut out);
        assert_eq!(out.len(), 1 + 1 + 1 + 1 + 2 + 3); // n, flag, 5, +1, +294, +69,700
        assert_eq!(decode(&out).unwrap(), (vec![5, 6, 300, 70_000], vec![1.0; 4]));
        let mut out = Vec::new();
        encode(&[9, 2], &[0.5, -3.0], &mut out);
        assert_eq!(decode(&out).unwrap(), (vec![2, 9], vec![-3.0, 0.5]));
        let mut empty = Vec::new();
        encode(&[], &[], &mut empty);
        assert_eq!(decode(&empty).unwrap(), (vec![], vec![]));
        // damaged bytes are refused
        assert!(decode(&out[..out.len() - 1]).is_err());
        assert!(decode(&[2, 0, 5, 0]).is_err()); // an id repeated
        assert!(decode(&[1, 2, 5]).is_err()); // a flag no document has
        assert!(decode(&[1, 0, 5, 7]).is_err()); // a byte after the end
        assert!(decode(&[1, 0, 0xff, 0xff, 0xff, 0xff, 0x7f]).is_err()); // beyond u32
    }

    #[test]
    fn sorted_sorts_through_the_bitmap_and_without_it() {
        let mut state = 7u64;
        let mut next = |bound: u32| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 32) as u32) % bound
        };
        for n in [0usize, 1, 64, 2500] {
            for bound in [1u32 << 18, BITMAP_IDS, u32::MAX] {
                let mut ids: Vec<u32> = (0..n).map(|_| next(bound)).collect();
                ids.sort_unstable();
                ids.dedup();
                let mut shuffled = ids.clone();
                shuffled.reverse();
                shuffled.rotate_left(n / 3);
                assert_eq!(sorted(&shuffled), ids);
            }
        }
        // a repeated id is kept (the bitmap would merge it) and the bitmap is left clear
        assert_eq!(sorted(&[5, 3, 5]), vec![3, 5, 5]);
        assert_eq!(sorted(&[5, 3]), vec![3, 5]);
        assert!(BITMAP.with(|cell| cell.borrow().iter().all(|&w| w == 0)));
    }

    #[test]
    fn the_radix_sort_sorts() {
        let mut state = 12345u64;
        for n in [0usize, 1, 7, 2500] {
            for max in [1u32 << 18, u32::MAX] {
                let mut ids: Vec<u32> = (0..n)
                    .map(|_| {
                        state = state
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        ((state >> 32) as u32) % max
                    })
                    .collect();
                let mut want = ids.clone();
                want.sort_unstable();
                radix_sort(&mut ids);
                assert_eq!(ids, want);
            }
        }
    }

    #[test]
    fn mail_seen_without_labels_does_not_push_out_the_lessons() {
        let mut r = Records::new(3, 0);
        for i in 0..3u8 {
            r.keep(fp(i), lesson(0), None);
        }
        for i in 10..200u8 {
            let observed = Entry::new(
                None,
                1.0,
                Step {
                    g: Vec::new(),
                    decay: 1.0,
                },
                u64::from(i),
                1,
            );
            r.keep(fp(i), observed, None);
        }
        let lessons: Vec<u8> = r.iter().filter(|(_, e)| e.is_lesson()).map(|(f, _)| f[0]).collect();
        let observed: Vec<u8> = r.iter().filter(|(_, e)| !e.is_lesson()).map(|(f, _)| f[0]).collect();
        assert_eq!(lessons, vec![0, 1, 2]);
        assert_eq!(observed, vec![197, 198, 199]);
        r.keep(fp(3), lesson(0), None); // the oldest lesson goes, the observations stay
        let lessons: Vec<u8> = r.iter().filter(|(_, e)| e.is_lesson()).map(|(f, _)| f[0]).collect();
        assert_eq!(lessons, vec![1, 2, 3]);
        assert_eq!(r.len(), 6);
        // an observation kept again as a lesson moves to its kind
        r.keep(fp(198), lesson(0), None);
        let lessons: Vec<u8> = r.iter().filter(|(_, e)| e.is_lesson()).map(|(f, _)| f[0]).collect();
        assert_eq!(lessons, vec![2, 3, 198]);
        assert_eq!(r.len(), 5);
    }

    #[test]
    fn the_oldest_entries_and_documents_go_first() {
        let mut r = Records::new(4, 2);
        for i in 0..6u8 {
            r.keep(fp(i), lesson(0), Some((&[u32::from(i)], &[1.0])));
        }
        let kept: Vec<u8> = r.iter().map(|(f, _)| f[0]).collect();
        assert_eq!(kept, vec![2, 3, 4, 5]);
        let with_doc: Vec<u8> = r.iter().filter(|(_, e)| e.has_document()).map(|(f, _)| f[0]).collect();
        assert_eq!((with_doc, r.documents()), (vec![4, 5], 2));
        assert_eq!(
            r.document(r.get(&fp(5)).unwrap()).unwrap().unwrap(),
            (vec![5], vec![1.0])
        );
        // a message kept again becomes the newest
        r.keep(fp(3), lesson(1), Some((&[9], &[2.0])));
        let kept: Vec<u8> = r.iter().map(|(f, _)| f[0]).collect();
        assert_eq!(kept, vec![2, 4, 5, 3]);
        assert!(!r.get(&fp(4)).unwrap().has_document());
        assert_eq!(r.newest_first(&[fp(2), fp(9), fp(3), fp(5)]), vec![2, 3, 0, 1]);
        assert_eq!(r.forget(&fp(5)).map(|e| e.class), Some(Some(0)));
        assert_eq!((r.len(), r.documents()), (3, 1));
        r.drop_documents();
        assert_eq!(r.documents(), 0);
        assert!(r.iter().all(|(_, e)| !e.has_document()));
    }

    #[test]
    fn forgotten_slots_and_dead_bytes_are_taken_out() {
        let mut r = Records::new(10_000, 10_000);
        let ids: Vec<u32> = (0..1000).collect();
        for round in 0..20u32 {
            for i in 0..100u32 {
                let mut f = [0u8; FINGERPRINT_BYTES];
                f[..4].copy_from_slice(&(round * 100 + i).to_le_bytes());
                r.keep(f, lesson(0), Some((&ids, &[1.0; 1000])));
                if i % 2 == 0 {
                    r.forget(&f);
                }
            }
        }
        assert_eq!((r.len(), r.documents()), (1000, 1000));
        assert!(r.slots.len() <= 2 * r.len() + 64);
        assert!(r.arena.len() <= 2 * (r.arena.len() - r.dead) + 4096);
        for (_, e) in r.iter() {
            assert_eq!(r.document(e).unwrap().unwrap().0.len(), 1000);
        }
    }

    #[test]
    fn import_checks_what_export_writes() {
        let mut r = Records::new(8, 8);
        r.keep(fp(1), lesson(0), None);
        r.keep(fp(2), lesson(1), Some((&[3, 4], &[1.0, 1.0])));
        let entries: Vec<(Fingerprint, Entry)> = r.iter().cloned().collect();
        let (lengths, bytes) = r.export_documents();
        let back = Records::import(8, 8, entries.clone(), Some((&lengths, &bytes)), 5).unwrap();
        assert_eq!(back.export_documents(), (lengths.clone(), bytes.clone()));
        assert!(Records::import(8, 8, entries.clone(), Some((&lengths, &bytes)), 4).is_err()); // id 4 >= rows
        assert!(Records::import(1, 8, entries.clone(), Some((&lengths, &bytes)), 5).is_err());
        assert!(Records::import(8, 0, entries.clone(), Some((&lengths, &bytes)), 5).is_err());
        assert!(Records::import(8, 8, entries.clone(), Some((&[0, 3], &bytes)), 5).is_err());
        let swapped = vec![entries[1].clone(), entries[0].clone()];
        assert!(Records::import(8, 8, swapped, Some((&[bytes.len() as i64, 0], &bytes)), 5).is_err());
        let twice = vec![entries[0].clone(), entries[0].clone()];
        assert!(Records::import(8, 8, twice, None, 5).is_err());
        assert_eq!(Records::import(8, 8, entries, None, 5).unwrap().documents(), 0);
    }
}
