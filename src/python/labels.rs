//! A model's class labels: the Python objects, in the order the classes were first learned,
//! and the lookup label -> class index (a dict, so labels compare as Python compares them).

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

pub(super) struct Labels {
    labels: Vec<Py<PyAny>>,
    index: Py<PyDict>,
}

impl Labels {
    pub fn new(py: Python<'_>) -> Self {
        Labels {
            labels: Vec::new(),
            index: PyDict::new(py).unbind(),
        }
    }

    pub fn len(&self) -> usize {
        self.labels.len()
    }

    pub fn label<'py>(&self, py: Python<'py>, c: usize) -> Bound<'py, PyAny> {
        self.labels[c].bind(py).clone()
    }

    /// The index of a class, None when it was never seen.
    pub fn class_of(&self, label: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
        match self.index.bind(label.py()).get_item(label)? {
            Some(c) => Ok(Some(c.extract()?)),
            None => Ok(None),
        }
    }

    /// The class of each label of a batch, a model of `k` classes: its index, or for a new
    /// label k + its place among the batch's new labels (returned in order of appearance).
    pub fn classes_or_next<'py>(
        &self,
        labels: &Bound<'py, PyList>,
        k: usize,
    ) -> PyResult<(Vec<usize>, Vec<Bound<'py, PyAny>>)> {
        let mut new_labels: Vec<Bound<'py, PyAny>> = Vec::new();
        let mut classes = Vec::with_capacity(labels.len());
        for label in labels.iter() {
            let c = match self.class_of(&label)? {
                Some(c) => c,
                None => match new_labels.iter().position(|l| l.eq(&label).unwrap_or(false)) {
                    Some(j) => k + j,
                    None => {
                        new_labels.push(label.clone());
                        k + new_labels.len() - 1
                    }
                },
            };
            classes.push(c);
        }
        Ok((classes, new_labels))
    }

    /// Append a class; its index is the number of classes before it.
    pub fn push(&mut self, label: &Bound<'_, PyAny>) -> PyResult<()> {
        let c = self.labels.len();
        self.index.bind(label.py()).set_item(label, c)?;
        self.labels.push(label.clone().unbind());
        Ok(())
    }

    /// The labels, as new references (to read while the model holding them is borrowed).
    pub fn owned(&self, py: Python<'_>) -> Vec<Py<PyAny>> {
        self.labels.iter().map(|l| l.clone_ref(py)).collect()
    }

    pub fn list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.labels.iter().map(|l| l.bind(py)))
    }

    /// {label of classes[i]: values[i]} (exp: the values exponentiated).
    pub fn dict<'py>(
        &self,
        py: Python<'py>,
        classes: &[usize],
        values: &[f64],
        exp: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for (&c, &v) in classes.iter().zip(values) {
            out.set_item(self.label(py, c), if exp { v.exp() } else { v })?;
        }
        Ok(out)
    }
}
