//! A saved count store, read and checked before anything is loaded from it.
//!
//! A model file may come from elsewhere: every array of the store (see `streamnb/persist.py`
//! for the format) is checked here, in one place, and a refusal names the first
//! inconsistency (wrong dtype or shape, non-finite or negative count, id out of range,
//! duplicate, a feature without counts ...). The arrays are read in place, as the raw
//! little-endian bytes of their `.npy` members: loading needs no numpy and no copy of them.
//! An exact model's vocabulary is two of them: `feature_key` (uint8, every token's key bytes
//! back to back, as `streamnb/store.py` encodes tokens) and `feature_key_end` (where each key
//! ends), so loading makes no Python object per token. Integer arrays are uint32 (int64 in
//! version-1 files); the cells come sorted by feature then class.

use crate::store::{MergedPruning, Store, NEVER, ROUNDING_TOLERANCE};
use std::collections::HashMap;

/// One array as stored: numpy's dtype string (`<i8`, `<u4`, `<f8`, `|u1`), its shape, its bytes.
pub struct RawArray<'a> {
    pub dtype: &'a str,
    pub shape: Vec<usize>,
    pub data: &'a [u8],
}

/// A 1-d integer array read in place: uint32, or int64 (version-1 files).
#[derive(Clone, Copy, Debug)]
pub struct Ints<'a> {
    data: &'a [u8],
    width: usize,
}

impl<'a> Ints<'a> {
    pub fn len(&self) -> usize {
        self.data.len() / self.width
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = i64> + Clone + 'a {
        let width = self.width;
        self.data.chunks_exact(width).map(move |item| match item.try_into() {
            Ok(four) => i64::from(u32::from_le_bytes(four)),
            Err(_) => i64::from_le_bytes(item.try_into().expect("an int64 item is 8 bytes")),
        })
    }

    /// The values once checked to be ids (in [0, 2^32 - 1)).
    pub fn ids(&self) -> impl Iterator<Item = u32> + Clone + 'a {
        self.iter().map(|v| v as u32)
    }
}

/// A 1-d float64 array read in place.
#[derive(Clone, Copy, Debug)]
pub struct Floats<'a> {
    data: &'a [u8],
}

impl<'a> Floats<'a> {
    pub fn len(&self) -> usize {
        self.data.len() / 8
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = f64> + Clone + 'a {
        self.data
            .chunks_exact(8)
            .map(|item| f64::from_le_bytes(item.try_into().expect("a float64 item is 8 bytes")))
    }
}

/// The vocabulary's keys: `bytes` cut at `ends` (checked increasing and within `bytes`).
#[derive(Clone, Copy, Debug)]
pub struct Keys<'a> {
    pub bytes: &'a [u8],
    ends: Ints<'a>,
}

impl<'a> Keys<'a> {
    pub fn iter(&self) -> impl Iterator<Item = &'a [u8]> + Clone + 'a {
        let bytes = self.bytes;
        // the ends were checked increasing and within `bytes` (so they fit a usize)
        let ends = self.ends.iter().map(|end| end as usize);
        std::iter::once(0)
            .chain(ends.clone())
            .zip(ends)
            .map(move |(start, end)| &bytes[start..end])
    }

    /// Is every key UTF-8 (the whole buffer is, and no key ends inside a character)? The
    /// common case, checked at memory speed.
    pub fn all_utf8(&self) -> bool {
        std::str::from_utf8(self.bytes).is_ok()
            && self
                .ends
                .iter()
                .all(|end| self.bytes.get(end as usize).is_none_or(|&b| (b as i8) >= -0x40))
    }
}

/// The arrays of a saved store, checked (ids as the vocabulary and the cells use them).
#[derive(Debug)]
pub struct Snapshot<'a> {
    /// Feature ids, ascending.
    pub ids: Ints<'a>,
    /// The key of each id's token (an exact model). Their layout is checked here; whether
    /// each is a key the Python layer writes is checked there.
    pub keys: Option<Keys<'a>>,
    pub free: Vec<u32>,
    pub class_docs: Vec<f64>,
    pub class_tokens: Vec<f64>,
    /// The nonzero cells, sorted by (feature, class).
    pub cell_feature: Ints<'a>,
    pub cell_class: Ints<'a>,
    pub cell_tokens: Floats<'a>,
    pub cell_docs: Floats<'a>,
    pub born: Ints<'a>,
    pub last_seen: Ints<'a>,
    pub merged_prunings: Vec<MergedPruning>,
    pub forgotten_merges: Vec<(u64, u64)>,
}

impl Snapshot<'_> {
    /// Fill an empty store of `k` classes with these cells, class totals and stamps (stored
    /// units; the vocabulary, the classes and the clocks are the caller's).
    pub fn load_cells(&self, store: &mut Store, k: usize) {
        let cells = (self.cell_feature.ids().zip(self.cell_class.iter()))
            .zip(self.cell_tokens.iter().zip(self.cell_docs.iter()));
        for ((feature, class), (tokens, docs)) in cells {
            store.load_cell(feature, class as usize, tokens, docs);
        }
        for c in 0..k {
            store.load_class(c, self.class_docs[c], self.class_tokens[c]);
        }
        let stamps = self.born.iter().zip(self.last_seen.iter());
        for (id, (born, seen)) in self.ids.ids().zip(stamps) {
            store.set_stamps(id, Some(born as u64), Some(seen as u64));
        }
    }
}

/// The arrays of the documents merged in from models that had pruned (`MergedPruning`),
/// present only when there are some: record r spans stamps `merged_first[r]..=merged_last[r]`
/// and its exceptions are the features `merged_exception_feature` (ascending) held from the
/// stamps `merged_exception_from` (`NEVER`: not at all), cut at the ends `merged_exception_end`.
pub const MERGED_ARRAYS: [&str; 5] = [
    "merged_first",
    "merged_last",
    "merged_exception_end",
    "merged_exception_feature",
    "merged_exception_from",
];

/// The stamp ranges of forgotten merged prunings (`Store::forgotten_merges`), present only
/// when there are some: ascending and disjoint.
pub const FORGOTTEN_ARRAYS: [&str; 2] = ["merged_forgotten_first", "merged_forgotten_last"];

/// A store's merged prunings as the file's arrays (`FORGOTTEN_ARRAYS`, `MERGED_ARRAYS`, what
/// `check` reads back): [(name, ints)], empty when there are none.
pub fn merged_arrays(store: &Store) -> Vec<(&'static str, Vec<u64>)> {
    let mut out = Vec::new();
    let forgotten = &store.forgotten_merges;
    if !forgotten.is_empty() {
        out.push((FORGOTTEN_ARRAYS[0], forgotten.iter().map(|r| r.0).collect()));
        out.push((FORGOTTEN_ARRAYS[1], forgotten.iter().map(|r| r.1).collect()));
    }
    let merged = &store.merged_prunings;
    if merged.is_empty() {
        return out;
    }
    let mut end = 0u64;
    let mut columns: [Vec<u64>; 5] = Default::default();
    for record in merged {
        end += record.exceptions.len() as u64;
        columns[0].push(record.first);
        columns[1].push(record.last);
        columns[2].push(end);
        columns[3].extend(record.exceptions.iter().map(|&(id, _)| u64::from(id)));
        columns[4].extend(record.exceptions.iter().map(|&(_, from)| from));
    }
    out.extend(MERGED_ARRAYS.into_iter().zip(columns));
    out
}

fn forgotten_merges(arrays: &HashMap<&str, RawArray<'_>>, pruned_at: u64) -> Result<Vec<(u64, u64)>, String> {
    if !FORGOTTEN_ARRAYS.iter().any(|name| arrays.contains_key(*name)) {
        return Ok(Vec::new());
    }
    let first = ints(arrays, FORGOTTEN_ARRAYS[0], None)?;
    let last = ints(arrays, FORGOTTEN_ARRAYS[1], Some(first.len()))?;
    let ranges: Vec<(u64, u64)> = first
        .iter()
        .zip(last.iter())
        .map(|(f, l)| (f as u64, l as u64))
        .collect();
    require(
        ranges.iter().all(|&(f, l)| 1 <= f && f <= l && l <= pruned_at)
            && ranges.windows(2).all(|pair| pair[0].1.saturating_add(1) < pair[1].0),
        || format!("forgotten merge ranges must be ascending, disjoint and within [1, {pruned_at}] (the last pruning)"),
    )?;
    Ok(ranges)
}

/// Records end by the last pruning (`pruned_at`); exception stamps are born stamps (<= `n_learned`).
fn merged_prunings(
    arrays: &HashMap<&str, RawArray<'_>>,
    n_learned: u64,
    pruned_at: u64,
) -> Result<Vec<MergedPruning>, String> {
    let present = MERGED_ARRAYS.iter().filter(|name| arrays.contains_key(*name)).count();
    if present == 0 {
        return Ok(Vec::new());
    }
    require(present == MERGED_ARRAYS.len(), || {
        format!("the merged-pruning arrays come together: {}", MERGED_ARRAYS.join(", "))
    })?;
    let first = ints(arrays, "merged_first", None)?;
    let records = first.len();
    let last = ints(arrays, "merged_last", Some(records))?;
    let ends = ints(arrays, "merged_exception_end", Some(records))?;
    let features = ints(arrays, "merged_exception_feature", None)?;
    let from = ints(arrays, "merged_exception_from", Some(features.len()))?;
    require(from.iter().all(|f| f as u64 <= n_learned || f as u64 == NEVER), || {
        format!("merged exception stamps must be in [0, {n_learned}] or {NEVER}")
    })?;
    let (features, from): (Vec<i64>, Vec<i64>) = (features.iter().collect(), from.iter().collect());
    let mut out = Vec::with_capacity(records);
    let mut start = 0usize;
    for ((first, last), end) in first.iter().zip(last.iter()).zip(ends.iter()) {
        require(1 <= first && first <= last && last as u64 <= pruned_at, || {
            format!("a merged pruning must span stamps 1 <= first <= last <= {pruned_at} (the last pruning), got {first}..={last}")
        })?;
        let end = usize::try_from(end)
            .ok()
            .filter(|&end| end > start && end <= features.len())
            .ok_or(
                "merged exception ends must be increasing (no empty record) and within 'merged_exception_feature'",
            )?;
        let exceptions = &features[start..end];
        require(exceptions.windows(2).all(|pair| pair[0] < pair[1]), || {
            "the exceptions of a merged pruning must be ascending features, without repeats".into()
        })?;
        require(exceptions.iter().all(|&id| id < ID_LIMIT), || {
            "merged exception features out of range".into()
        })?;
        out.push(MergedPruning {
            first: first as u64,
            last: last as u64,
            exceptions: exceptions
                .iter()
                .zip(&from[start..end])
                .map(|(&id, &f)| (id as u32, f as u64))
                .collect(),
        });
        start = end;
    }
    require(start == features.len(), || {
        "'merged_exception_feature' has features past the last record".into()
    })?;
    Ok(out)
}

/// Ids are u32 and u32::MAX is reserved: every id must be below this.
const ID_LIMIT: i64 = u32::MAX as i64;

fn dtype_name(dtype: &str) -> &str {
    match dtype {
        "<i8" => "int64",
        "<u4" => "uint32",
        "<f8" => "float64",
        "|u1" => "uint8",
        other => other,
    }
}

/// A shape as Python writes a tuple: `(3,)`, `(1, 5)`, `()`.
fn shape_text(shape: &[usize]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")
        ),
    }
}

fn require(condition: bool, message: impl FnOnce() -> String) -> Result<(), String> {
    if condition {
        Ok(())
    } else {
        Err(message())
    }
}

/// `arrays[name]`: 1-d, of one of `dtypes` ((numpy dtype, item bytes)), of length `len`
/// when given; its bytes and item width.
fn column<'a>(
    arrays: &HashMap<&str, RawArray<'a>>,
    name: &str,
    dtypes: &[(&str, usize)],
    len: Option<usize>,
) -> Result<(&'a [u8], usize), String> {
    let array = arrays.get(name).ok_or_else(|| format!("array '{name}' is missing"))?;
    let width = dtypes
        .iter()
        .find(|(dtype, _)| *dtype == array.dtype)
        .map(|&(_, width)| width);
    let (Some(width), [n]) = (width, array.shape.as_slice()) else {
        let allowed: Vec<&str> = dtypes.iter().map(|(dtype, _)| dtype_name(dtype)).collect();
        return Err(format!(
            "array '{name}' must be 1-d {}, got {} of shape {}",
            allowed.join(" or "),
            dtype_name(array.dtype),
            shape_text(&array.shape)
        ));
    };
    if let Some(len) = len {
        require(*n == len, || {
            format!(
                "array '{name}' must have shape ({len},), got {}",
                shape_text(&array.shape)
            )
        })?;
    }
    require(array.data.len() == n.saturating_mul(width), || {
        format!(
            "array '{name}' has {} bytes, its shape {} needs {}",
            array.data.len(),
            shape_text(&array.shape),
            n.saturating_mul(width)
        )
    })?;
    Ok((array.data, width))
}

/// An integer array: uint32, or int64 as version-1 files hold them (checked >= 0).
fn ints<'a>(arrays: &HashMap<&str, RawArray<'a>>, name: &str, len: Option<usize>) -> Result<Ints<'a>, String> {
    let (data, width) = column(arrays, name, &[("<u4", 4), ("<i8", 8)], len)?;
    let values = Ints { data, width };
    require(width == 4 || values.iter().all(|v| v >= 0), || {
        format!("array '{name}' holds negative values")
    })?;
    Ok(values)
}

/// A float64 count array: finite and >= 0.
fn counts<'a>(arrays: &HashMap<&str, RawArray<'a>>, name: &str, len: usize) -> Result<Floats<'a>, String> {
    let (data, _) = column(arrays, name, &[("<f8", 8)], Some(len))?;
    let values = Floats { data };
    require(values.iter().all(|v| v.is_finite()), || {
        format!("array '{name}' holds non-finite counts")
    })?;
    require(values.iter().all(|v| v >= 0.0), || {
        format!("array '{name}' holds negative counts")
    })?;
    Ok(values)
}

/// The vocabulary's keys: `feature_key` (uint8) cut at the `n` ends of `feature_key_end`.
fn keys<'a>(arrays: &HashMap<&str, RawArray<'a>>, n: usize) -> Result<Keys<'a>, String> {
    let (bytes, _) = column(arrays, "feature_key", &[("|u1", 1)], None)?;
    let ends = ints(arrays, "feature_key_end", Some(n))?;
    let mut start = 0usize;
    for end in ends.iter() {
        let end = usize::try_from(end)
            .ok()
            .filter(|&end| end >= start && end <= bytes.len())
            .ok_or("feature key ends must be increasing and within 'feature_key'")?;
        start = end;
    }
    require(start == bytes.len(), || {
        "'feature_key' has bytes past the last key".into()
    })?;
    Ok(Keys { bytes, ends })
}

/// Check the arrays of a saved store with `k` classes, `n_learned` documents learned and the
/// last pruning at `pruned_at` (<= n_learned, checked by the caller); `n_buckets` for a hashed model (no vocabulary: no keys, no `free_id`); `docs_bounded` for a
/// model whose math needs D_cf <= N_c (Bernoulli: P(w|c) = (D_cf + alpha) / (N_c + 2 alpha)
/// past 1 makes log(1 - P) NaN), checked to `ROUNDING_TOLERANCE` as unlearning checks it.
pub fn check<'a>(
    arrays: &HashMap<&str, RawArray<'a>>,
    k: usize,
    n_learned: u64,
    pruned_at: u64,
    n_buckets: Option<u32>,
    docs_bounded: bool,
) -> Result<Snapshot<'a>, String> {
    let ids = ints(arrays, "feature_id", None)?;
    let n = ids.len();
    require(ids.iter().zip(ids.iter().skip(1)).all(|(a, b)| a < b), || {
        "feature ids must be >= 0 and increasing".into()
    })?;
    require(ids.iter().last().is_none_or(|last| last < ID_LIMIT), || {
        "feature ids out of range".into()
    })?;
    let (free, keys) = match n_buckets {
        None => {
            let free = ints(arrays, "free_id", None)?;
            let total = n + free.len();
            let mut seen = vec![false; total];
            let permutation = ids.iter().chain(free.iter()).all(|id| {
                let slot = usize::try_from(id).ok().and_then(|i| seen.get_mut(i));
                match slot {
                    Some(slot) if !*slot => {
                        *slot = true;
                        true
                    }
                    _ => false,
                }
            });
            require(permutation && (total as i64) <= ID_LIMIT, || {
                "feature ids and free ids must together be 0, 1, ... without gaps or repeats".into()
            })?;
            (free.ids().collect(), Some(keys(arrays, n)?))
        }
        Some(buckets) => {
            require(
                ["free_id", "feature_key", "feature_key_end"]
                    .iter()
                    .all(|name| !arrays.contains_key(name)),
                || "a hashed model has no vocabulary".into(),
            )?;
            require(ids.iter().last().is_none_or(|last| last < i64::from(buckets)), || {
                format!("feature buckets must be in [0, {buckets})")
            })?;
            (Vec::new(), None)
        }
    };
    let class_docs: Vec<f64> = counts(arrays, "class_docs", k)?.iter().collect();
    let class_tokens: Vec<f64> = counts(arrays, "class_tokens", k)?.iter().collect();
    let cell_feature = ints(arrays, "cell_feature", None)?;
    let m = cell_feature.len();
    let cell_class = ints(arrays, "cell_class", Some(m))?;
    let cell_tokens = counts(arrays, "cell_tokens", m)?;
    let cell_docs = counts(arrays, "cell_docs", m)?;
    let born = ints(arrays, "feature_born", Some(n))?;
    let last_seen = ints(arrays, "feature_last_seen", Some(n))?;

    require(cell_class.iter().all(|c| c < k as i64), || {
        format!("cell classes must be in [0, {k})")
    })?;
    let cells = cell_feature.iter().zip(cell_class.iter());
    require(cells.clone().zip(cells.clone().skip(1)).all(|(a, b)| a < b), || {
        "cells must be sorted by (feature, class), without duplicate (feature, class) cells".into()
    })?;
    require(
        cell_tokens
            .iter()
            .zip(cell_docs.iter())
            .all(|(t, d)| t != 0.0 || d != 0.0),
        || "a stored cell has no count".into(),
    )?;
    // Both lists ascending: one walk finds cells of unlisted features and listed features
    // without cells.
    let (mut unlisted, mut uncounted) = (false, false);
    let mut listed = ids.iter().peekable();
    let mut features = cell_feature.iter().peekable();
    while let Some(f) = features.next() {
        while listed.next_if(|&id| id < f).is_some() {
            uncounted = true;
        }
        unlisted |= listed.next_if(|&id| id == f).is_none();
        while features.next_if_eq(&f).is_some() {}
    }
    uncounted |= listed.next().is_some();
    require(!unlisted, || "cell features must be listed feature ids".into())?;
    require(!uncounted, || "a vocabulary feature has no count".into())?;
    for (name, stamps) in [("born", &born), ("last_seen", &last_seen)] {
        require(stamps.iter().all(|s| s as u64 <= n_learned), || {
            format!("feature {name} stamps must be in [0, {n_learned}]")
        })?;
    }
    let mut class_cells = vec![0usize; k];
    for c in cell_class.iter() {
        class_cells[c as usize] += 1;
    }
    require((0..k).all(|c| !(class_docs[c] == 0.0 && class_cells[c] > 0)), || {
        "a class with no documents has feature counts".into()
    })?;
    require((0..k).all(|c| !(class_cells[c] == 0 && class_tokens[c] != 0.0)), || {
        "a class with no feature counts has T_c != 0".into()
    })?;
    if docs_bounded {
        let cells = cell_feature.iter().zip(cell_class.iter()).zip(cell_docs.iter());
        for ((feature, c), docs) in cells {
            let class_docs = class_docs[c as usize];
            require(docs <= class_docs * (1.0 + ROUNDING_TOLERANCE), || {
                format!(
                    "feature {feature} is in {docs} documents of class {c}, which has {class_docs}: \
                     a Bernoulli model needs D_cf <= N_c"
                )
            })?;
        }
    }
    let merged_prunings = merged_prunings(arrays, n_learned, pruned_at)?;
    let forgotten_merges = forgotten_merges(arrays, pruned_at)?;
    Ok(Snapshot {
        ids,
        keys,
        free,
        class_docs,
        class_tokens,
        cell_feature,
        cell_class,
        cell_tokens,
        cell_docs,
        born,
        last_seen,
        merged_prunings,
        forgotten_merges,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i8s(values: &[i64]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    fn f8s(values: &[f64]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    /// Two features (ids 0 and 2, id 1 free), two classes, three cells.
    fn valid() -> Vec<(&'static str, &'static str, Vec<u8>)> {
        vec![
            ("feature_id", "<i8", i8s(&[0, 2])),
            ("feature_key", "|u1", b"spamham".to_vec()),
            ("feature_key_end", "<i8", i8s(&[4, 7])),
            ("free_id", "<i8", i8s(&[1])),
            ("class_docs", "<f8", f8s(&[2.0, 1.0])),
            ("class_tokens", "<f8", f8s(&[5.0, 1.0])),
            ("cell_feature", "<i8", i8s(&[0, 2, 2])),
            ("cell_class", "<i8", i8s(&[0, 0, 1])),
            ("cell_tokens", "<f8", f8s(&[3.0, 2.0, 1.0])),
            ("cell_docs", "<f8", f8s(&[2.0, 1.0, 1.0])),
            ("feature_born", "<i8", i8s(&[1, 2])),
            ("feature_last_seen", "<i8", i8s(&[2, 3])),
        ]
    }

    fn width(dtype: &str) -> usize {
        match dtype {
            "|u1" => 1,
            "<u4" => 4,
            _ => 8,
        }
    }

    /// The arrays as `check` reads them, each 1-d of its payload's length.
    fn map_of<'a>(arrays: &'a [(&'static str, &'static str, Vec<u8>)]) -> HashMap<&'a str, RawArray<'a>> {
        arrays
            .iter()
            .map(|(name, dtype, data)| {
                (
                    *name,
                    RawArray {
                        dtype,
                        shape: vec![data.len() / width(dtype)],
                        data,
                    },
                )
            })
            .collect()
    }

    fn run<'a>(arrays: &'a [(&'static str, &'static str, Vec<u8>)]) -> Result<Snapshot<'a>, String> {
        check(&map_of(arrays), 2, 3, 0, None, false)
    }

    fn with(name: &str, data: Vec<u8>) -> Vec<(&'static str, &'static str, Vec<u8>)> {
        valid()
            .into_iter()
            .map(|(n, d, v)| if n == name { (n, d, data.clone()) } else { (n, d, v) })
            .collect()
    }

    #[test]
    fn a_bernoulli_store_needs_each_feature_in_at_most_its_class_documents() {
        fn bounded(arrays: &[(&'static str, &'static str, Vec<u8>)]) -> Result<(), String> {
            check(&map_of(arrays), 2, 3, 0, None, true).map(|_| ())
        }
        assert!(bounded(&valid()).is_ok()); // D_0f = N_0 = 2 is allowed
        let within_rounding = with("cell_docs", f8s(&[2.0 * (1.0 + 1e-12), 1.0, 1.0]));
        assert!(bounded(&within_rounding).is_ok());
        let more = with("cell_docs", f8s(&[2.0, 1.0, 1.5]));
        let message = bounded(&more).unwrap_err();
        assert!(
            message.contains("feature 2 is in 1.5 documents of class 1, which has 1"),
            "{message}"
        );
        assert!(run(&more).is_ok(), "only models that need the bound check it");
    }

    #[test]
    fn a_valid_store_is_read() {
        // Version-1 files hold int64, version 2 uint32: both read the same.
        let narrow: Vec<_> = valid()
            .into_iter()
            .map(|(name, dtype, data)| match dtype {
                "<i8" => (
                    name,
                    "<u4",
                    data.chunks_exact(8).flat_map(|c| c[..4].to_vec()).collect(),
                ),
                _ => (name, dtype, data),
            })
            .collect();
        for arrays in [valid(), narrow] {
            let snapshot = run(&arrays).unwrap();
            assert_eq!(snapshot.ids.ids().collect::<Vec<_>>(), vec![0, 2]);
            assert_eq!(snapshot.free, vec![1]);
            let keys: Vec<&[u8]> = snapshot.keys.unwrap().iter().collect();
            assert_eq!(keys, vec![&b"spam"[..], &b"ham"[..]]);
            assert_eq!(snapshot.cell_class.iter().collect::<Vec<_>>(), vec![0, 0, 1]);
            assert_eq!(snapshot.cell_docs.iter().collect::<Vec<_>>(), vec![2.0, 1.0, 1.0]);
            assert_eq!(snapshot.last_seen.iter().collect::<Vec<_>>(), vec![2, 3]);
        }
    }

    #[test]
    fn keys_are_utf8_unless_a_key_ends_inside_a_character() {
        let arrays = with("feature_key", "sp\u{e9}am".as_bytes().to_vec());
        let arrays = arrays
            .into_iter()
            .map(|(n, d, v)| {
                if n == "feature_key_end" {
                    (n, d, i8s(&[3, 6]))
                } else {
                    (n, d, v)
                }
            })
            .collect::<Vec<_>>();
        assert!(!run(&arrays).unwrap().keys.unwrap().all_utf8()); // "sp\xc3" and "\xa9am"
        assert!(run(&valid()).unwrap().keys.unwrap().all_utf8());
    }

    #[test]
    fn each_inconsistency_is_named() {
        let cases = [
            (with("feature_id", i8s(&[2, 0])), "increasing"),
            (with("free_id", i8s(&[3])), "without gaps"),
            (with("cell_tokens", f8s(&[f64::NAN, 2.0, 1.0])), "non-finite"),
            (with("cell_docs", f8s(&[-1.0, 1.0, 1.0])), "negative"),
            (with("cell_feature", i8s(&[0, 1, 2])), "cell features must be listed"),
            (with("cell_class", i8s(&[0, 0, 2])), "cell classes must be in [0, 2)"),
            (with("cell_class", i8s(&[0, 1, 1])), "duplicate (feature, class) cells"),
            (with("feature_born", i8s(&[1, 4])), "feature born stamps"),
            (with("class_docs", f8s(&[2.0])), "must have shape (2,), got (1,)"),
            (with("cell_feature", i8s(&[0, 0, 0])), "duplicate"),
            (with("cell_feature", i8s(&[0, 2, 3])), "cell features must be listed"),
            (with("cell_feature", i8s(&[2, 0, 2])), "sorted by (feature, class)"),
            (with("cell_class", i8s(&[0, 0, 0])), "duplicate"),
            (with("feature_key_end", i8s(&[5, 4])), "increasing"),
            (with("feature_key_end", i8s(&[4, 9])), "within 'feature_key'"),
            (with("feature_key_end", i8s(&[4, 6])), "past the last key"),
            (with("feature_key_end", i8s(&[7])), "must have shape (2,)"),
        ];
        for (arrays, words) in cases {
            let message = run(&arrays).unwrap_err();
            assert!(message.contains(words), "{message:?} lacks {words:?}");
        }
        let mut missing = valid();
        missing.retain(|(name, _, _)| *name != "cell_docs");
        assert_eq!(run(&missing).unwrap_err(), "array 'cell_docs' is missing");
        let mut wrong = valid();
        wrong[7].1 = "<f8";
        assert_eq!(
            run(&wrong).unwrap_err(),
            "array 'cell_class' must be 1-d uint32 or int64, got float64 of shape (3,)"
        );
    }

    #[test]
    fn a_short_payload_is_refused() {
        let arrays = valid();
        let mut map = map_of(&arrays);
        map.get_mut("feature_id").unwrap().shape = vec![3];
        assert!(check(&map, 2, 3, 0, None, false).unwrap_err().contains("bytes"));
    }
}
