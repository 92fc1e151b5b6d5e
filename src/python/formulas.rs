//! The class prior and the posterior normalisation for models whose likelihood is computed
//! in numpy (the record models: Gaussian, categorical, mixed), so the formulas stay in one
//! place (`nb::class_log_prior`, `nb::log_posterior`).

use super::errors::{error, guard, Kind};
use crate::nb::{self, Prior};
use pyo3::prelude::*;

/// log P(c) for every class from N_c (`prior`: "mle", "laplace", "uniform" or "fixed" with
/// one weight per class).
#[pyfunction]
#[pyo3(signature = (counts, prior, fixed_weights=None))]
pub fn class_log_prior(counts: Vec<f64>, prior: &str, fixed_weights: Option<Vec<f64>>) -> PyResult<Vec<f64>> {
    guard(|| {
        let prior = match prior {
            "mle" => Prior::Mle,
            "laplace" => Prior::Laplace,
            "uniform" => Prior::Uniform,
            "fixed" => Prior::Fixed,
            other => return Err(error(Kind::InvalidParameter, format!("unknown class prior {other:?}"))),
        };
        let mut out = Vec::with_capacity(counts.len());
        nb::class_log_prior(&counts, prior, &fixed_weights.unwrap_or_default(), &mut out);
        Ok(out)
    })
}

/// log P(c | x) from the joint log-likelihood of the active classes and their log prior.
#[pyfunction]
#[pyo3(signature = (jll, log_prior, normalise=true))]
pub fn log_posterior(mut jll: Vec<f64>, log_prior: Vec<f64>, normalise: bool) -> PyResult<Vec<f64>> {
    guard(|| {
        nb::log_posterior(&mut jll, || log_prior, normalise);
        Ok(jll)
    })
}
