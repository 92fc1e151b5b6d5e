//! `_core.Vocabulary`: the exact vocabulary or feature hashing, for the Python store.

use super::errors::{error, guard, Kind};
use super::keys::{bucket_text, key_of, packed_keys, token_of, unpack};
use crate::vocab::{self, VocabularyError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyList};

/// Token -> feature id (int64 arrays as little-endian bytes; -1 for a token not in V).
///
/// With `n_buckets`, ids are CRC-32 buckets and nothing is stored per token.
#[pyclass(module = "streamnb._core")]
pub struct Vocabulary {
    exact: vocab::Vocabulary,
    #[pyo3(get)]
    n_buckets: Option<u32>,
}

pub fn full_error(_: VocabularyError) -> PyErr {
    error(
        Kind::InvalidInput,
        "the vocabulary is full (2^32 - 1 ids or 4 GiB of token bytes)",
    )
}

fn ids_bytes<'py>(py: Python<'py>, ids: &[i64]) -> PyResult<Bound<'py, PyByteArray>> {
    PyByteArray::new_with(py, ids.len() * 8, |buf| {
        for (chunk, id) in buf.chunks_exact_mut(8).zip(ids) {
            chunk.copy_from_slice(&id.to_le_bytes());
        }
        Ok(())
    })
}

impl Vocabulary {
    fn lookup(&mut self, tokens: &Bound<'_, PyAny>, add: bool) -> PyResult<Vec<i64>> {
        let mut scratch = Vec::new();
        let items: Vec<Bound<'_, PyAny>> = tokens.try_iter()?.collect::<PyResult<_>>()?;
        if let Some(n) = self.n_buckets {
            return items
                .iter()
                .map(|t| Ok(vocab::bucket(bucket_text(t, &mut scratch)?, n) as i64))
                .collect();
        }
        // Keys first, so an unusable token raises before anything is added.
        let keys: Vec<Vec<u8>> = items
            .iter()
            .map(|t| key_of(t, &mut scratch).map(<[u8]>::to_vec))
            .collect::<PyResult<_>>()?;
        keys.iter()
            .map(|k| {
                if add {
                    self.exact.find_or_add(k).map(|id| id as i64).map_err(full_error)
                } else {
                    Ok(self.exact.find(k).map_or(-1, |id| id as i64))
                }
            })
            .collect()
    }
}

#[pymethods]
impl Vocabulary {
    #[new]
    #[pyo3(signature = (n_buckets=None))]
    fn new(n_buckets: Option<u32>) -> PyResult<Self> {
        if n_buckets == Some(0) {
            return Err(error(
                Kind::InvalidParameter,
                "n_buckets must be a positive int or None, got 0",
            ));
        }
        Ok(Vocabulary {
            exact: vocab::Vocabulary::new(),
            n_buckets,
        })
    }

    /// One more than the largest id handed out so far (the row count the cells need).
    #[getter]
    fn capacity(&self) -> usize {
        self.n_buckets.map_or(self.exact.capacity(), |n| n as usize)
    }

    #[getter]
    fn epoch(&self) -> u64 {
        self.exact.epoch()
    }

    /// Ids of the tokens (int64 bytes), -1 for tokens not in the vocabulary.
    fn find<'py>(&mut self, py: Python<'py>, tokens: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyByteArray>> {
        guard(|| {
            let ids = self.lookup(tokens, false)?;
            ids_bytes(py, &ids)
        })
    }

    /// Ids of the tokens, giving new tokens new (or recycled) ids.
    fn find_or_add<'py>(&mut self, py: Python<'py>, tokens: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyByteArray>> {
        guard(|| {
            let ids = self.lookup(tokens, true)?;
            ids_bytes(py, &ids)
        })
    }

    /// Forget the tokens of these ids; the ids become free for reuse.
    fn remove(&mut self, ids: Vec<u32>) -> PyResult<()> {
        guard(|| {
            if self.n_buckets.is_none() {
                for id in ids {
                    self.exact.remove(id);
                }
            }
            Ok(())
        })
    }

    /// The token of an id (with hashing: the bucket's name, e.g. '#417'); None if free.
    fn token<'py>(&self, py: Python<'py>, id: u32) -> PyResult<Option<Bound<'py, PyAny>>> {
        guard(|| {
            if self.n_buckets.is_some() {
                return Ok(Some(pyo3::types::PyString::new(py, &format!("#{id}")).into_any()));
            }
            self.exact.token(id).map(|key| token_of(py, key)).transpose()
        })
    }

    fn tokens<'py>(&self, py: Python<'py>, ids: Vec<u32>) -> PyResult<Bound<'py, PyList>> {
        guard(|| {
            let out = PyList::empty(py);
            for id in ids {
                out.append(self.token(py, id)?)?;
            }
            Ok(out)
        })
    }

    /// Ids free for reuse (the last is reused first).
    fn free_ids(&self) -> Vec<u32> {
        self.exact.free_ids().to_vec()
    }

    /// Ids of the tokens in the vocabulary, ascending.
    fn ids(&self) -> Vec<u32> {
        self.exact.ids().collect()
    }

    /// Take a saved layout: tokens at ids, free ids for reuse (ModelFormatError if invalid).
    fn restore(&mut self, ids: Vec<u32>, tokens: &Bound<'_, PyAny>, free: Vec<u32>) -> PyResult<()> {
        guard(|| {
            let (bytes, ends) = packed_keys(tokens).map_err(|e| {
                error(
                    Kind::ModelFormat,
                    format!("vocabulary tokens must be usable features: {e}"),
                )
            })?;
            if ids.len() != ends.len() {
                return Err(error(
                    Kind::ModelFormat,
                    format!("the vocabulary must list {} tokens", ids.len()),
                ));
            }
            self.exact
                .restore(ids.iter().copied().zip(unpack(&bytes, &ends)), &free)
                .map_err(|m| error(Kind::ModelFormat, m))
        })
    }

    /// Bytes the vocabulary holds (its allocations in the core).
    fn nbytes(&self) -> usize {
        self.exact.heap_bytes()
    }

    fn __len__(&self) -> usize {
        self.exact.len()
    }
}
