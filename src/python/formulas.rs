//! Formulas Python calls without a model: the class prior and the posterior normalisation for
//! models whose likelihood is computed in numpy (the record models: Gaussian, categorical,
//! mixed: `nb::class_log_prior`, `nb::log_posterior`), the spam filter's log-odds verdicts
//! (`rule`) and the service's site blend (`site`), so each stays in one place.

use super::errors::{error, guard, Kind};
use crate::nb::{self, Prior};
use crate::{rule, site};
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

/// l, the weight of a user's model against the site model's (`site::user_share`), from the
/// class counts (spam, ham) of each.
#[pyfunction]
pub fn site_user_share(user: (f64, f64), site: (f64, f64), k: f64) -> PyResult<f64> {
    guard(|| Ok(site::user_share(user.0, user.1, site.0, site.1, k)))
}

/// (l, z, spam, ham) of the blend of the site model's and a user's (log-odds, spam, ham)
/// (`site::blend`).
#[pyfunction]
pub fn site_blend(site: (f64, f64, f64), user: (f64, f64, f64), k: f64) -> PyResult<(f64, f64, f64, f64)> {
    guard(|| {
        let side = |(log_odds, spam, ham): (f64, f64, f64)| site::Side { log_odds, spam, ham };
        let blended = site::blend(side(site), side(user), k);
        Ok((blended.share, blended.log_odds, blended.spam, blended.ham))
    })
}

/// The `top` strongest (feature number, weight) of both models' clues weighed by share
/// (`site::blend_clues`).
#[pyfunction]
pub fn site_blend_clues(
    n_features: usize,
    site: Vec<(usize, f64)>,
    user: Vec<(usize, f64)>,
    share: f64,
    top: usize,
) -> PyResult<Vec<(usize, f64)>> {
    guard(|| Ok(site::blend_clues(n_features, &site, &user, share, top)))
}

/// (h, t) of the log-odds rule (ham_log_odds, spam_log_odds, caution) for a model that
/// learned `n_spam` and `n_ham` messages, with label coverage `coverage`
/// (`rule::LogOddsRule::cutoffs`).
#[pyfunction]
pub fn log_odds_cutoffs(rule: (f64, f64, f64), n_spam: f64, n_ham: f64, coverage: f64) -> PyResult<(f64, f64)> {
    guard(|| {
        let (ham_log_odds, spam_log_odds, caution) = rule;
        Ok(rule::LogOddsRule {
            ham_log_odds,
            spam_log_odds,
            caution,
        }
        .cutoffs(n_spam, n_ham, coverage))
    })
}

/// The verdict of log-odds z between cutoffs h and t (`rule::decide`): -1 ham, 0 unsure, 1 spam.
#[pyfunction]
pub fn log_odds_decide(z: f64, h: f64, t: f64) -> PyResult<i8> {
    guard(|| {
        Ok(match rule::decide(z, h, t) {
            rule::Verdict::Ham => -1,
            rule::Verdict::Unsure => 0,
            rule::Verdict::Spam => 1,
        })
    })
}

/// The display score of log-odds z, h drawn at `low` and t at `high` (`rule::display_score`).
#[pyfunction]
pub fn log_odds_score(z: f64, h: f64, t: f64, low: f64, high: f64) -> PyResult<f64> {
    guard(|| Ok(rule::display_score(z, h, t, low, high)))
}
