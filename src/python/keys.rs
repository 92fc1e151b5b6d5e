//! Python tokens <-> vocabulary key bytes.
//!
//! A `str` token is its UTF-8 bytes (lone surrogates, which UTF-8 cannot hold, are written
//! as Python's "surrogatepass" does, bytes that are never valid UTF-8). Any other token
//! (int, tuple ...) is 0xFF followed by a tagged encoding made by
//! `streamnb.store._token_key`; 0xFF never occurs in UTF-8, so the kinds cannot collide.

use super::errors::{error, Kind};
use crate::doc::Doc;
use crate::space::Features;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyList, PyString};

const OTHER: u8 = 0xFF;

static TOKEN_KEY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static TOKEN_FROM_KEY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

fn store_function<'py>(py: Python<'py>, cell: &PyOnceLock<Py<PyAny>>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    cell.get_or_try_init(py, || {
        Ok::<_, PyErr>(py.import("streamnb.store")?.getattr(name)?.unbind())
    })
    .map(|f| f.bind(py).clone())
}

/// The key bytes of a token: borrowed from a `str`'s UTF-8 buffer when it has one, else
/// written into `scratch`.
pub fn key_of<'a>(token: &'a Bound<'_, PyAny>, scratch: &'a mut Vec<u8>) -> PyResult<&'a [u8]> {
    if let Ok(text) = token.cast::<PyString>() {
        return str_key(text, scratch);
    }
    let py = token.py();
    let key = store_function(py, &TOKEN_KEY, "_token_key")?.call1((token,))?;
    let key = key.cast::<PyBytes>()?;
    scratch.clear();
    scratch.extend_from_slice(key.as_bytes());
    Ok(scratch)
}

/// The keys of every token of an iterable, packed in one buffer (one allocation, not one
/// per token): the bytes, and where each key ends. `unpack` lists them as slices.
pub fn packed_keys(tokens: &Bound<'_, PyAny>) -> PyResult<(Vec<u8>, Vec<usize>)> {
    let (mut bytes, mut ends, mut scratch) = (Vec::new(), Vec::new(), Vec::new());
    for token in tokens.try_iter()? {
        bytes.extend_from_slice(key_of(&token?, &mut scratch)?);
        ends.push(bytes.len());
    }
    Ok((bytes, ends))
}

/// The keys of `packed_keys` as slices.
pub fn unpack<'a>(bytes: &'a [u8], ends: &[usize]) -> Vec<&'a [u8]> {
    let mut start = 0;
    ends.iter()
        .map(|&end| {
            let key = &bytes[start..end];
            start = end;
            key
        })
        .collect()
}

/// The position of the first key that `key_of` would not write (a model file from
/// elsewhere): every key must be the key of the token it names, or a token learned later
/// would get a second id. UTF-8 keys are `str` tokens; the rest round-trip through Python.
pub fn first_foreign_key<'k>(py: Python<'_>, keys: impl Iterator<Item = &'k [u8]>) -> PyResult<Option<usize>> {
    let mut scratch = Vec::new();
    for (position, key) in keys.enumerate() {
        if std::str::from_utf8(key).is_ok() {
            continue;
        }
        let canonical = match token_of(py, key) {
            Ok(token) => key_of(&token, &mut scratch).is_ok_and(|again| again == key),
            Err(_) => false,
        };
        if !canonical {
            return Ok(Some(position));
        }
    }
    Ok(None)
}

/// Keys back to back, and where each ends as little-endian uint32 bytes: the vocabulary's
/// two arrays in a model file (`feature_key`, `feature_key_end`).
pub fn key_arrays<'py, 'k>(
    py: Python<'py>,
    keys: impl Iterator<Item = &'k [u8]>,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let (mut bytes, mut ends) = (Vec::new(), Vec::new());
    for key in keys {
        bytes.extend_from_slice(key);
        let end = u32::try_from(bytes.len())
            .map_err(|_| error(Kind::ModelFormat, "the vocabulary is too large (over 4 GiB of tokens)"))?;
        ends.extend_from_slice(&end.to_le_bytes());
    }
    Ok((PyBytes::new(py, &bytes), PyBytes::new(py, &ends)))
}

/// `key_arrays` of a list of tokens (a version-1 model file lists its vocabulary as tokens).
#[pyfunction]
pub fn token_key_arrays<'py>(tokens: &Bound<'py, PyAny>) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    super::errors::guard(|| {
        let (bytes, ends) = packed_keys(tokens)?;
        key_arrays(tokens.py(), unpack(&bytes, &ends).into_iter())
    })
}

/// The bytes of a `str` (UTF-8, or surrogatepass for text with lone surrogates).
pub fn str_key<'a>(text: &'a Bound<'_, PyString>, scratch: &'a mut Vec<u8>) -> PyResult<&'a [u8]> {
    match text.to_str() {
        Ok(s) => Ok(s.as_bytes()),
        Err(_) => {
            let encoded = text.call_method1("encode", ("utf-8", "surrogatepass"))?;
            scratch.clear();
            scratch.extend_from_slice(encoded.cast::<PyBytes>()?.as_bytes());
            Ok(scratch)
        }
    }
}

/// The text a hashed model's bucket is computed from: the token if it is a `str`, else
/// `str(token)` (as the buckets were always computed, so saved hashed models still load).
pub fn bucket_text<'a>(token: &'a Bound<'_, PyAny>, scratch: &'a mut Vec<u8>) -> PyResult<&'a [u8]> {
    if let Ok(text) = token.cast::<PyString>() {
        return str_key(text, scratch);
    }
    // str() is the user's code (or a repr past the recursion limit): a failure names the key's type.
    let text = token.str().map_err(|err| {
        let kind = token
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "?".to_string());
        let message =
            format!("feature names of a hashed model are hashed through str(), which failed on a {kind}: {err}");
        error(Kind::InvalidType, message)
    })?;
    let encoded = text.call_method1("encode", ("utf-8", "surrogatepass"))?;
    scratch.clear();
    scratch.extend_from_slice(encoded.cast::<PyBytes>()?.as_bytes());
    Ok(scratch)
}

/// The Python token of key bytes (inverse of `key_of`).
pub fn token_of<'py>(py: Python<'py>, key: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    if key.first() == Some(&OTHER) {
        return store_function(py, &TOKEN_FROM_KEY, "_token_from_key")?.call1((PyBytes::new(py, key),));
    }
    match std::str::from_utf8(key) {
        Ok(s) => Ok(PyString::new(py, s).into_any()),
        Err(_) => PyBytes::new(py, key).call_method1("decode", ("utf-8", "surrogatepass")),
    }
}

/// The name of a feature id of a space: its token (None for a free id); hashed spaces
/// name buckets, '#417'.
pub fn feature_name<'py>(py: Python<'py>, space: &Features, id: u32) -> PyResult<Bound<'py, PyAny>> {
    match space.vocabulary() {
        Some(v) => match v.token(id) {
            Some(key) => token_of(py, key),
            None => Ok(py.None().into_bound(py)),
        },
        None => Ok(PyString::new(py, &format!("#{id}")).into_any()),
    }
}

/// The name of a document's i-th feature: its key as read, or the vocabulary's (hashed
/// spaces name every feature by its bucket).
pub fn doc_feature_name<'py>(py: Python<'py>, space: &Features, doc: &Doc, i: usize) -> PyResult<Bound<'py, PyAny>> {
    if space.n_buckets().is_some() {
        return feature_name(py, space, doc.ids[i]);
    }
    match doc.key(i) {
        Some(key) => token_of(py, key),
        None => feature_name(py, space, doc.ids[i]),
    }
}

/// `feature_name` of each id.
pub fn feature_names<'py>(py: Python<'py>, space: &Features, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for &id in ids {
        out.append(feature_name(py, space, id)?)?;
    }
    Ok(out)
}

/// The ids of tokens in a space (-1: not in the vocabulary; hashed spaces: their buckets).
pub fn find_ids(space: &Features, tokens: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    let mut scratch = Vec::new();
    let mut out = Vec::new();
    for token in tokens.try_iter()? {
        let token = token?;
        out.push(match (space.vocabulary(), space.n_buckets()) {
            (Some(v), _) => v.find(key_of(&token, &mut scratch)?).map_or(-1, |id| id as i64),
            (None, Some(n)) => crate::vocab::bucket(bucket_text(&token, &mut scratch)?, n) as i64,
            (None, None) => -1,
        });
    }
    Ok(out)
}
