//! `_core.EmailWeights`: the spam filter's field-mass weights (`crate::weighting`) over the
//! core's email tokenizer. A model holding one (`Core.set_featurizer`) reads a raw message
//! into weights with no Python string per token, and scores with EmailNB's IDF
//! (`Core.set_idf`); the methods here give the same numbers as dicts, for inspection and
//! for tokenizers the core does not run.

use super::errors::{error, guard, Kind};
use super::keys::{str_key, token_of};
use super::mail::EmailTokenizer;
use crate::bag::Bag;
use crate::mail::features::{EmailFeatures, Field};
use crate::weighting::FieldMasses;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use std::hash::BuildHasher;

#[pyclass(module = "streamnb._core", frozen)]
pub struct EmailWeights {
    pub tokenizer: Py<EmailTokenizer>,
    pub masses: FieldMasses,
}

impl EmailWeights {
    pub fn features(&self) -> &EmailFeatures {
        &self.tokenizer.get().features
    }

    /// The features of a raw message (hashed with `hasher`) and their learning weights.
    pub fn weigh_raw<H: BuildHasher>(&self, raw: &[u8], hasher: &H) -> (Bag, Vec<f64>) {
        let features = self.features();
        let mut bag = Bag::default();
        features.count_into(raw, &mut bag, hasher);
        let fields: Vec<Field> = (0..bag.len()).map(|i| features.field(bag.feature(i))).collect();
        let mut values: Vec<f64> = (0..bag.len()).map(|i| bag.count(i)).collect();
        self.masses.weigh(&fields, &mut values);
        (bag, values)
    }

    /// (feature, field, value) of a mapping's items, in its order; features must be str.
    fn items<'py>(&self, mapping: &Bound<'py, PyAny>, what: &str) -> PyResult<Vec<(Bound<'py, PyAny>, Field, f64)>> {
        let features = self.features();
        let mut scratch = Vec::new();
        let mut out = Vec::new();
        for item in mapping.call_method0("items")?.try_iter()? {
            let (key, value): (Bound<'py, PyAny>, Bound<'py, PyAny>) = item?.extract()?;
            let Ok(text) = key.cast::<PyString>() else {
                return Err(error(
                    Kind::InvalidType,
                    format!("{what} must be keyed by str features, got {}", key.repr()?),
                ));
            };
            let field = features.field(str_key(text, &mut scratch)?);
            let value: f64 = value.extract().map_err(|_| {
                error(
                    Kind::InvalidType,
                    format!(
                        "{what} values must be numbers, got {}",
                        value.repr().map(|r| r.to_string()).unwrap_or_default()
                    ),
                )
            })?;
            out.push((key, field, value));
        }
        Ok(out)
    }

    fn dict<'py>(
        py: Python<'py>,
        keys: impl Iterator<Item = Bound<'py, PyAny>>,
        values: &[f64],
    ) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for (key, &v) in keys.zip(values) {
            if v > 0.0 {
                out.set_item(key, v)?;
            }
        }
        Ok(out)
    }
}

#[pymethods]
impl EmailWeights {
    /// `masses`: the mass of each field, in the order of `FIELDS`.
    #[new]
    fn new(tokenizer: Bound<'_, EmailTokenizer>, masses: Vec<f64>) -> PyResult<Self> {
        guard(|| {
            let masses: [f64; Field::COUNT] = masses.try_into().map_err(|_| {
                error(
                    Kind::InvalidParameter,
                    format!("masses must be {} numbers", Field::COUNT),
                )
            })?;
            if let Some(bad) = masses.iter().find(|m| !(m.is_finite() && **m > 0.0)) {
                return Err(error(
                    Kind::InvalidParameter,
                    format!("masses must be finite numbers > 0, got {bad}"),
                ));
            }
            Ok(EmailWeights {
                tokenizer: tokenizer.unbind(),
                masses: FieldMasses(masses),
            })
        })
    }

    /// The field names, in the order of `masses`.
    #[classattr]
    #[allow(non_snake_case)]
    fn FIELDS() -> Vec<&'static str> {
        Field::ALL.iter().map(|f| f.name()).collect()
    }

    /// {feature: weight} of a raw message, in first-appearance order (GIL released while
    /// it is read and weighed).
    fn weigh_message<'py>(&self, py: Python<'py>, raw: &[u8]) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let (bag, values) = py.detach(|| self.weigh_raw(raw, &super::tokenizer::bag_hasher()));
            let out = PyDict::new(py);
            for (i, &v) in values.iter().enumerate() {
                if v > 0.0 {
                    out.set_item(token_of(py, bag.feature(i))?, v)?;
                }
            }
            Ok(out)
        })
    }

    /// The field a feature is weighed in (`EmailFeatures::field`).
    fn field(&self, feature: &Bound<'_, PyString>) -> PyResult<&'static str> {
        guard(|| {
            let mut scratch = Vec::new();
            Ok(self.features().field(str_key(feature, &mut scratch)?).name())
        })
    }

    /// {feature: weight} of a message given as its email tokenizer features (counts).
    fn weigh<'py>(&self, py: Python<'py>, features: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let items = self.items(features, "features")?;
            let fields: Vec<Field> = items.iter().map(|i| i.1).collect();
            let mut values: Vec<f64> = items.iter().map(|i| i.2).collect();
            self.masses.weigh(&fields, &mut values);
            Self::dict(py, items.into_iter().map(|i| i.0), &values)
        })
    }

    /// `weights` times `factors` (1 where missing), each field scaled back to its mass;
    /// features whose product is not > 0 left out.
    #[pyo3(signature = (weights, factors=None))]
    fn reweigh<'py>(
        &self,
        py: Python<'py>,
        weights: &Bound<'py, PyAny>,
        factors: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let items = self.items(weights, "weights")?;
            let fields: Vec<Field> = items.iter().map(|i| i.1).collect();
            let mut values = Vec::with_capacity(items.len());
            for (key, _, v) in &items {
                let factor = match factors {
                    Some(f) => f.call_method1("get", (key, 1.0))?.extract::<f64>()?,
                    None => 1.0,
                };
                values.push(v * factor);
            }
            self.masses.scale(&fields, &mut values);
            Self::dict(py, items.into_iter().map(|i| i.0), &values)
        })
    }
}
