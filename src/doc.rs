//! One document on its way in: its distinct features (key bytes, hash, value), and the
//! feature ids they have in the model's vocabulary at a given vocabulary epoch.
//!
//! A document is encoded once (text tokenized, or a mapping read and validated) and may be
//! used many times: predicting and then learning the same message looks its tokens up
//! once, as long as the vocabulary has not changed in between (the epoch says so).

/// Id of a feature that is not in the vocabulary.
pub const UNKNOWN: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Span {
    start: u32,
    len: u32,
}

#[derive(Clone, Debug, Default)]
pub struct Doc {
    arena: Vec<u8>,
    spans: Vec<Span>,
    hashes: Vec<u64>,
    pub values: Vec<f64>,
    /// Per feature: its id (UNKNOWN when not in V) at vocabulary `epoch`.
    pub ids: Vec<u32>,
    /// The vocabulary epoch `ids` were looked up at (None: not looked up yet).
    pub epoch: Option<u64>,
}

impl Doc {
    pub fn with_capacity(features: usize, bytes: usize) -> Self {
        Doc {
            arena: Vec::with_capacity(bytes),
            spans: Vec::with_capacity(features),
            hashes: Vec::with_capacity(features),
            values: Vec::with_capacity(features),
            ids: Vec::new(),
            epoch: None,
        }
    }

    /// Add a feature (distinct from the ones already added) with its hash and value.
    pub fn push(&mut self, key: &[u8], hash: u64, value: f64) {
        self.spans.push(Span { start: self.arena.len() as u32, len: key.len() as u32 });
        self.arena.extend_from_slice(key);
        self.hashes.push(hash);
        self.values.push(value);
        self.epoch = None;
    }

    /// A feature already resolved to an id (hashed models: the bucket).
    pub fn push_id(&mut self, id: u32, value: f64) {
        self.spans.push(Span { start: self.arena.len() as u32, len: 0 });
        self.hashes.push(0);
        self.values.push(value);
        self.ids.push(id);
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    pub fn key(&self, i: usize) -> &[u8] {
        let span = self.spans[i];
        &self.arena[span.start as usize..(span.start + span.len) as usize]
    }

    pub fn hash(&self, i: usize) -> u64 {
        self.hashes[i]
    }

    /// Bytes of the features' keys (what adding them all to a vocabulary would take).
    pub fn key_bytes(&self) -> usize {
        self.arena.len()
    }
}
