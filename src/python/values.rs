//! Python values as the core reports them: how a value is described in an error message,
//! floats as Python formats them, and float arrays handed over as bytes.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyByteArray, PyFloat};

static HELPERS: PyOnceLock<(Py<PyAny>, Py<PyAny>, Py<PyAny>)> = PyOnceLock::new();

/// (streamnb.errors.describe, numbers.Real, collections.abc.Mapping)
pub(super) fn helpers(py: Python<'_>) -> PyResult<&(Py<PyAny>, Py<PyAny>, Py<PyAny>)> {
    HELPERS.get_or_try_init(py, || {
        Ok((
            py.import("streamnb.errors")?.getattr("describe")?.unbind(),
            py.import("numbers")?.getattr("Real")?.unbind(),
            py.import("collections.abc")?.getattr("Mapping")?.unbind(),
        ))
    })
}

pub(super) fn describe(value: &Bound<'_, PyAny>) -> String {
    let py = value.py();
    helpers(py)
        .and_then(|h| h.0.bind(py).call1((value,)))
        .and_then(|s| s.extract::<String>())
        .unwrap_or_else(|_| "<value>".to_string())
}

pub(super) fn repr(value: &Bound<'_, PyAny>) -> String {
    value
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "<value>".to_string())
}

/// A float as Python's `format(x, "g")`.
pub(super) fn g(py: Python<'_>, x: f64) -> String {
    PyFloat::new(py, x)
        .call_method1("__format__", ("g",))
        .and_then(|s| s.extract::<String>())
        .unwrap_or_else(|_| x.to_string())
}

pub(super) fn float_repr(py: Python<'_>, x: f64) -> String {
    repr(&PyFloat::new(py, x).into_any())
}

pub(super) fn f64_bytes<'py>(py: Python<'py>, values: &[f64]) -> PyResult<Bound<'py, PyByteArray>> {
    PyByteArray::new_with(py, values.len() * 8, |buf| {
        for (chunk, v) in buf.chunks_exact_mut(8).zip(values) {
            chunk.copy_from_slice(&v.to_le_bytes());
        }
        Ok(())
    })
}

pub(super) fn i64_bytes<'py>(
    py: Python<'py>,
    values: impl ExactSizeIterator<Item = i64>,
) -> PyResult<Bound<'py, PyByteArray>> {
    let values: Vec<i64> = values.collect();
    PyByteArray::new_with(py, values.len() * 8, |buf| {
        for (chunk, v) in buf.chunks_exact_mut(8).zip(&values) {
            chunk.copy_from_slice(&v.to_le_bytes());
        }
        Ok(())
    })
}
