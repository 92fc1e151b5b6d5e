//! `_core.FusionCore`: the online fusion of two log-odds (`crate::fusion`) behind
//! `streamnb.models.Fusion`.

use super::errors::{error, guard, Kind};
use crate::fusion::Fusion;
use crate::logistic::Step;
use pyo3::prelude::*;

#[pyclass(module = "streamnb._core")]
pub struct FusionCore {
    fusion: Fusion,
}

#[pymethods]
impl FusionCore {
    #[new]
    #[pyo3(signature = (*, rate, scale, clip, initial))]
    fn new(rate: f64, scale: f64, clip: f64, initial: (f64, f64)) -> PyResult<Self> {
        guard(|| {
            for (name, value) in [("learning_rate", rate), ("nb_scale", scale), ("nb_clip", clip)] {
                if !(value.is_finite() && value > 0.0) {
                    return Err(error(
                        Kind::InvalidParameter,
                        format!("{name} must be a finite number > 0, got {value}"),
                    ));
                }
            }
            if !(initial.0.is_finite() && initial.1.is_finite()) {
                return Err(error(
                    Kind::InvalidParameter,
                    "initial_weights must be two finite numbers",
                ));
            }
            Ok(FusionCore {
                fusion: Fusion::new(rate, scale, clip, [initial.0, initial.1]),
            })
        })
    }

    /// The fused log-odds of class 1 against class 0 from the two models' log-odds.
    fn log_odds(&self, z_nb: f64, z_lr: f64) -> f64 {
        self.fusion.log_odds(z_nb, z_lr)
    }

    /// One step of the stacker; returns what it used, (its two inputs, its gradient g), for `undo`.
    fn learn(&mut self, z_nb: f64, z_lr: f64, positive: bool, weight: f64) -> PyResult<(f64, f64, f64)> {
        guard(|| {
            let ([nb, lr], step) = self.fusion.learn(z_nb, z_lr, positive, weight);
            // two classes and no margin: every step moves, by one gradient; no L2: no decay
            Ok((nb, lr, step.g.first().copied().unwrap_or(0.0)))
        })
    }

    /// Undo exactly a step `learn` took, from what it returned. Raises InvalidInputError,
    /// changing nothing, for numbers that are not finite.
    fn undo(&mut self, input_nb: f64, input_lr: f64, g: f64) -> PyResult<()> {
        guard(|| {
            let step = Step { g: vec![g], decay: 1.0 };
            self.fusion
                .undo([input_nb, input_lr], &step)
                .map_err(|m| error(Kind::InvalidInput, m))
        })
    }

    /// The reverse step, for a message whose step was not kept (approximate).
    fn unlearn(&mut self, z_nb: f64, z_lr: f64, positive: bool, weight: f64) -> PyResult<()> {
        guard(|| {
            self.fusion.unlearn(z_nb, z_lr, positive, weight);
            Ok(())
        })
    }

    /// (a, b, c): the weights of naive Bayes' and logistic regression's log-odds, and the bias.
    fn weights(&self) -> (f64, f64, f64) {
        let [a, b, c] = self.fusion.weights();
        (a, b, c)
    }

    /// Steps the stacker took.
    #[getter]
    fn steps(&self) -> u64 {
        self.fusion.stacker.steps
    }

    /// Set the weights and steps (a saved fusion).
    fn load(&mut self, weights: (f64, f64, f64), steps: u64) -> PyResult<()> {
        guard(|| {
            let (a, b, c) = weights;
            if !(a.is_finite() && b.is_finite() && c.is_finite()) {
                return Err(error(Kind::ModelFormat, "the fusion weights must be finite"));
            }
            self.fusion.stacker.fold();
            self.fusion.stacker.import_rows(&[0, 1], &[a, b], &[]);
            self.fusion.stacker.import_bias(&[c], &[0.0]);
            self.fusion.stacker.steps = steps;
            Ok(())
        })
    }

    /// Parameter mixing with another fusion, weighing each by `mine` and `theirs` documents;
    /// `swapped`: the other's class 1 is this one's class 0.
    fn mix(&mut self, other: &FusionCore, mine: f64, theirs: f64, swapped: bool) {
        self.fusion.mix(&other.fusion, mine, theirs, swapped);
    }
}
