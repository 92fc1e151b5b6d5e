//! What a prediction returns to Python: the label, probabilities or log-probabilities. The
//! Python models pass an integer code; it becomes an `Output` once, where the call enters.

use super::errors::{error, Kind};
use super::labels::Labels;
use crate::nb::argmax;
use pyo3::prelude::*;
use pyo3::types::PyDict;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// The most probable class (the first of the classes given wins ties).
    Label,
    /// {label: P(c | x)}.
    Proba,
    /// {label: log P(c | x)}.
    LogProba,
}

impl Output {
    /// The code the Python models pass: 0 the label, 1 probabilities, 2 log-probabilities.
    pub fn from_code(code: u8) -> PyResult<Self> {
        match code {
            0 => Ok(Output::Label),
            1 => Ok(Output::Proba),
            2 => Ok(Output::LogProba),
            other => Err(error(
                Kind::InvalidParameter,
                format!("unknown prediction output {other}: 0 the label, 1 probabilities, 2 log-probabilities"),
            )),
        }
    }

    /// What a prediction returns before any class is learned: None, or an empty dict.
    pub fn nothing<'py>(self, py: Python<'py>) -> Bound<'py, PyAny> {
        match self {
            Output::Label => py.None().into_bound(py),
            Output::Proba | Output::LogProba => PyDict::new(py).into_any(),
        }
    }

    /// The prediction from the log-posteriors `log_proba` of `classes`.
    pub fn of<'py>(
        self,
        py: Python<'py>,
        labels: &Labels,
        classes: &[usize],
        log_proba: &[f64],
    ) -> PyResult<Bound<'py, PyAny>> {
        match self {
            Output::Label => Ok(labels.label(py, classes[argmax(log_proba)])),
            Output::Proba => Ok(labels.dict(py, classes, log_proba, true)?.into_any()),
            Output::LogProba => Ok(labels.dict(py, classes, log_proba, false)?.into_any()),
        }
    }
}
