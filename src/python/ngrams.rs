//! `_core.ByteNgrams`: the byte n-gram reader (`crate::ngrams`) behind `streamnb.ByteNgrams`,
//! alone or together with an email tokenizer's features.

use super::errors::{error, guard, Kind};
use super::mail::EmailTokenizer;
use super::tokenizer::{bag_hasher, bag_to_dict};
use crate::bag::Bag;
use crate::ngrams;
use crate::space::Encoder;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::hash::BuildHasher;

/// Grams longer than this are refused (a key of up to 2 x n bytes per window).
pub const MAX_N: usize = 64;

#[pyclass(module = "streamnb._core", frozen)]
pub struct ByteNgrams {
    pub grams: ngrams::ByteNgrams,
    /// The email tokenizer whose features join the grams (None: grams alone).
    pub email: Option<Py<EmailTokenizer>>,
}

impl ByteNgrams {
    /// Every feature of a raw message into the encoder, each once (binary features).
    pub fn encode_into(
        &self,
        raw: &[u8],
        encoder: &mut Encoder<'_>,
        hasher: &foldhash::fast::RandomState,
        n_buckets: Option<u32>,
    ) {
        if let Some(email) = &self.email {
            let mut bag = Bag::default();
            email.get().features.count_into(raw, &mut bag, hasher);
            for i in 0..bag.len() {
                encoder.add_hashed(bag.feature(i), bag.hash(i), 1.0);
            }
        }
        match n_buckets {
            // binary features alone: each bucket once, straight in
            Some(n) if self.email.is_none() && n <= ngrams::DISTINCT_BITMAP_BUCKETS => self
                .grams
                .for_each_distinct_bucket(raw, n, |id| encoder.add_new_bucket(id)),
            Some(n) => self.grams.for_each_bucket(raw, n, |id| encoder.add_bucket(id, 1.0)),
            None => {
                let mut scratch = Vec::with_capacity(2 * self.grams.n + self.grams.prefix.len());
                self.grams.for_each(raw, &mut scratch, |key| encoder.add(key, 1.0));
            }
        }
        encoder.binarize();
    }
}

#[pymethods]
impl ByteNgrams {
    #[new]
    #[pyo3(signature = (*, n, max_bytes, prefix, email))]
    fn new(n: usize, max_bytes: usize, prefix: &str, email: Option<Bound<'_, EmailTokenizer>>) -> PyResult<Self> {
        guard(|| {
            if !(1..=MAX_N).contains(&n) {
                return Err(error(
                    Kind::InvalidParameter,
                    format!("n must be an int in [1, {MAX_N}], got {n}"),
                ));
            }
            if max_bytes == 0 {
                return Err(error(Kind::InvalidParameter, "max_bytes must be a positive int, got 0"));
            }
            Ok(ByteNgrams {
                grams: ngrams::ByteNgrams {
                    n,
                    max_bytes,
                    prefix: prefix.as_bytes().to_vec(),
                },
                email: email.map(Bound::unbind),
            })
        })
    }

    /// {feature: 1} of a raw message: the email tokenizer's features (when there is one)
    /// and every gram of the head, as str (its bytes read as Latin-1, after the prefix).
    fn features<'py>(&self, raw: &Bound<'py, PyBytes>) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let py = raw.py();
            let raw = raw.as_bytes();
            let hasher = bag_hasher();
            let mut bag = Bag::default();
            if let Some(email) = &self.email {
                email.get().features.count_into(raw, &mut bag, &hasher);
            }
            let mut scratch = Vec::new();
            let mut grams = Bag::default();
            self.grams
                .for_each(raw, &mut scratch, |key| grams.add(key, hasher.hash_one(key), 1.0));
            for i in 0..grams.len() {
                bag.add(grams.feature(i), grams.hash(i), 1.0);
            }
            bag.binarize();
            bag_to_dict(py, &bag)
        })
    }
}
