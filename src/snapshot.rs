//! A saved count store, read and checked before anything is loaded from it.
//!
//! A model file may come from elsewhere: every array of the store (see `streamnb/persist.py`
//! for the format) is checked here, in one place, and a refusal names the first
//! inconsistency (wrong dtype or shape, non-finite or negative count, id out of range,
//! duplicate, a feature without counts ...). The arrays arrive as the raw little-endian
//! bytes of their `.npy` members, so loading needs no numpy.

use std::collections::HashMap;

/// One array as stored: numpy's dtype string (`<i8`, `<f8`, `|u1`), its shape, its bytes.
pub struct RawArray<'a> {
    pub dtype: &'a str,
    pub shape: Vec<usize>,
    pub data: &'a [u8],
}

/// The arrays of a saved store, checked (ids as the vocabulary and the cells use them).
#[derive(Debug)]
pub struct Snapshot {
    pub ids: Vec<u32>,
    pub free: Vec<u32>,
    pub class_docs: Vec<f64>,
    pub class_tokens: Vec<f64>,
    pub cell_feature: Vec<u32>,
    pub cell_class: Vec<usize>,
    pub cell_tokens: Vec<f64>,
    pub cell_docs: Vec<f64>,
    pub born: Vec<u64>,
    pub last_seen: Vec<u64>,
}

/// Ids are u32 and u32::MAX is reserved: every id must be below this.
const ID_LIMIT: i64 = u32::MAX as i64;

fn dtype_name(dtype: &str) -> &str {
    match dtype {
        "<i8" => "int64",
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

/// `arrays[name]`: 1-d, of `dtype`, of length `len` when given; its 8-byte items.
fn items<'a>(
    arrays: &'a HashMap<&str, RawArray<'a>>,
    name: &str,
    dtype: &str,
    len: Option<usize>,
) -> Result<impl Iterator<Item = [u8; 8]> + 'a, String> {
    let array = arrays.get(name).ok_or_else(|| format!("array '{name}' is missing"))?;
    require(array.dtype == dtype && array.shape.len() == 1, || {
        format!(
            "array '{name}' must be 1-d {}, got {} of shape {}",
            dtype_name(dtype),
            dtype_name(array.dtype),
            shape_text(&array.shape)
        )
    })?;
    if let Some(len) = len {
        require(array.shape[0] == len, || {
            format!(
                "array '{name}' must have shape ({len},), got {}",
                shape_text(&array.shape)
            )
        })?;
    }
    require(array.data.len() == array.shape[0].saturating_mul(8), || {
        format!(
            "array '{name}' has {} bytes, its shape {} needs {}",
            array.data.len(),
            shape_text(&array.shape),
            array.shape[0].saturating_mul(8)
        )
    })?;
    Ok(array.data.chunks_exact(8).map(|chunk| {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(chunk);
        bytes
    }))
}

fn ints(arrays: &HashMap<&str, RawArray<'_>>, name: &str, len: Option<usize>) -> Result<Vec<i64>, String> {
    Ok(items(arrays, name, "<i8", len)?.map(i64::from_le_bytes).collect())
}

/// A float64 count array: finite and >= 0.
fn counts(arrays: &HashMap<&str, RawArray<'_>>, name: &str, len: usize) -> Result<Vec<f64>, String> {
    let values: Vec<f64> = items(arrays, name, "<f8", Some(len))?.map(f64::from_le_bytes).collect();
    require(values.iter().all(|v| v.is_finite()), || {
        format!("array '{name}' holds non-finite counts")
    })?;
    require(values.iter().all(|&v| v >= 0.0), || {
        format!("array '{name}' holds negative counts")
    })?;
    Ok(values)
}

/// Ids that passed the range checks, as u32.
fn narrow(values: &[i64]) -> Vec<u32> {
    values.iter().map(|&v| v as u32).collect()
}

/// Check the arrays of a saved store with `k` classes and `n_learned` documents learned;
/// `n_buckets` for a hashed model (no vocabulary: no `free_id`).
pub fn check(
    arrays: &HashMap<&str, RawArray<'_>>,
    k: usize,
    n_learned: u64,
    n_buckets: Option<u32>,
) -> Result<Snapshot, String> {
    let ids = ints(arrays, "feature_id", None)?;
    let n = ids.len();
    require(
        ids.iter().all(|&i| i >= 0) && ids.windows(2).all(|w| w[0] < w[1]),
        || "feature ids must be >= 0 and increasing".into(),
    )?;
    require(ids.last().is_none_or(|&last| last < ID_LIMIT), || {
        "feature ids out of range".into()
    })?;
    let free = match n_buckets {
        None => {
            let free = ints(arrays, "free_id", None)?;
            let total = n + free.len();
            let mut seen = vec![false; total];
            let permutation = ids.iter().chain(&free).all(|&id| {
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
            free
        }
        Some(buckets) => {
            require(!arrays.contains_key("free_id"), || {
                "a hashed model has no vocabulary".into()
            })?;
            require(ids.last().is_none_or(|&last| last < i64::from(buckets)), || {
                format!("feature buckets must be in [0, {buckets})")
            })?;
            Vec::new()
        }
    };
    let class_docs = counts(arrays, "class_docs", k)?;
    let class_tokens = counts(arrays, "class_tokens", k)?;
    let feature = ints(arrays, "cell_feature", None)?;
    let m = feature.len();
    let class = ints(arrays, "cell_class", Some(m))?;
    let cell_tokens = counts(arrays, "cell_tokens", m)?;
    let cell_docs = counts(arrays, "cell_docs", m)?;
    let born = ints(arrays, "feature_born", Some(n))?;
    let last_seen = ints(arrays, "feature_last_seen", Some(n))?;

    let mut position = Vec::with_capacity(m);
    for f in &feature {
        match ids.binary_search(f) {
            Ok(p) => position.push(p),
            Err(_) => return Err("cell features must be listed feature ids".into()),
        }
    }
    require(class.iter().all(|&c| (0..k as i64).contains(&c)), || {
        format!("cell classes must be in [0, {k})")
    })?;
    let mut keys: Vec<(usize, i64)> = position.iter().copied().zip(class.iter().copied()).collect();
    keys.sort_unstable();
    require(keys.windows(2).all(|w| w[0] != w[1]), || {
        "duplicate (feature, class) cells".into()
    })?;
    require(
        cell_tokens.iter().zip(&cell_docs).all(|(&t, &d)| t != 0.0 || d != 0.0),
        || "a stored cell has no count".into(),
    )?;
    let mut feature_cells = vec![0usize; n];
    for &p in &position {
        feature_cells[p] += 1;
    }
    require(feature_cells.iter().all(|&c| c > 0), || {
        "a vocabulary feature has no count".into()
    })?;
    for (name, stamps) in [("born", &born), ("last_seen", &last_seen)] {
        require(stamps.iter().all(|&s| s >= 0 && s as u64 <= n_learned), || {
            format!("feature {name} stamps must be in [0, {n_learned}]")
        })?;
    }
    let mut class_cells = vec![0usize; k];
    for &c in &class {
        class_cells[c as usize] += 1;
    }
    require((0..k).all(|c| !(class_docs[c] == 0.0 && class_cells[c] > 0)), || {
        "a class with no documents has feature counts".into()
    })?;
    require((0..k).all(|c| !(class_cells[c] == 0 && class_tokens[c] != 0.0)), || {
        "a class with no feature counts has T_c != 0".into()
    })?;
    Ok(Snapshot {
        ids: narrow(&ids),
        free: narrow(&free),
        class_docs,
        class_tokens,
        cell_feature: narrow(&feature),
        cell_class: class.iter().map(|&c| c as usize).collect(),
        cell_tokens,
        cell_docs,
        born: born.iter().map(|&s| s as u64).collect(),
        last_seen: last_seen.iter().map(|&s| s as u64).collect(),
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

    fn run(arrays: &[(&'static str, &'static str, Vec<u8>)]) -> Result<Snapshot, String> {
        let map = arrays
            .iter()
            .map(|(name, dtype, data)| {
                (
                    *name,
                    RawArray {
                        dtype,
                        shape: vec![data.len() / 8],
                        data,
                    },
                )
            })
            .collect();
        check(&map, 2, 3, None)
    }

    fn with(name: &str, data: Vec<u8>) -> Vec<(&'static str, &'static str, Vec<u8>)> {
        valid()
            .into_iter()
            .map(|(n, d, v)| if n == name { (n, d, data.clone()) } else { (n, d, v) })
            .collect()
    }

    #[test]
    fn a_valid_store_is_read() {
        let snapshot = run(&valid()).unwrap();
        assert_eq!(snapshot.ids, vec![0, 2]);
        assert_eq!(snapshot.free, vec![1]);
        assert_eq!(snapshot.cell_class, vec![0, 0, 1]);
        assert_eq!(snapshot.last_seen, vec![2, 3]);
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
        ];
        for (arrays, words) in cases {
            let message = run(&arrays).unwrap_err();
            assert!(message.contains(words), "{message:?} lacks {words:?}");
        }
        let mut missing = valid();
        missing.retain(|(name, _, _)| *name != "cell_docs");
        assert_eq!(run(&missing).unwrap_err(), "array 'cell_docs' is missing");
        let mut wrong = valid();
        wrong[5].1 = "<f8";
        assert_eq!(
            run(&wrong).unwrap_err(),
            "array 'cell_class' must be 1-d int64, got float64 of shape (3,)"
        );
    }

    #[test]
    fn a_short_payload_is_refused() {
        let arrays = valid();
        let mut map: HashMap<&str, RawArray<'_>> = arrays
            .iter()
            .map(|(name, dtype, data)| {
                (
                    *name,
                    RawArray {
                        dtype,
                        shape: vec![data.len() / 8],
                        data,
                    },
                )
            })
            .collect();
        map.get_mut("feature_id").unwrap().shape = vec![3];
        assert!(check(&map, 2, 3, None).unwrap_err().contains("bytes"));
    }
}
