//! `_core.FusionCore`: the online fusion of two log-odds (`crate::fusion`) behind
//! `streamnb.models.Fusion`.

use super::errors::{error, guard, Kind};
use super::logistic::LogisticCore;
use super::records;
use crate::feedback::{Feedback, PROVISIONAL_RATE};
use crate::fusion::Fusion;
use crate::records::Stacked;
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

    /// The log-odds of class 1 against class 0 the fusion answers with, from the two
    /// models' log-odds (`Fusion::answer`: the fused ones, moved towards logistic
    /// regression's while labels are scarce).
    fn log_odds(&self, z_nb: f64, z_lr: f64) -> f64 {
        self.fusion.answer(z_nb, z_lr)
    }

    /// The stacker's own fused log-odds (what it learns on; `log_odds` answers with them
    /// moved towards logistic regression's while labels are scarce).
    fn fused(&self, z_nb: f64, z_lr: f64) -> f64 {
        self.fusion.log_odds(z_nb, z_lr)
    }

    /// A new message seen, with its label or without (`Feedback::seen`); returns its stamp.
    fn seen(&mut self, labelled: bool) -> u64 {
        self.fusion.feedback.seen(labelled)
    }

    /// A lesson taken back (an unlearn): the decay its message gave the coverage taken off
    /// (`Feedback::unseen`).
    fn unseen(&mut self) {
        self.fusion.feedback.unseen();
    }

    /// The label of the message stamped `stamp`, seen without one, has come.
    fn labelled_later(&mut self, stamp: u64) {
        self.fusion.feedback.labelled_later(stamp);
    }

    /// The provisional lesson of a message seen without a label: (is it class 1, its
    /// weight), or None (`Feedback::provisional`). `counts`: the labelled messages of class
    /// 0 and 1; `weight`: a balanced lesson's weight.
    fn provisional(&self, z_nb: f64, z_lr: f64, counts: (f64, f64), weight: f64) -> Option<(bool, f64)> {
        self.fusion
            .feedback
            .provisional(z_nb, z_lr, [counts.0, counts.1], weight)
    }

    /// (u, clock, wins of logistic regression, wins of naive Bayes): the account of the
    /// mail seen without labels (`crate::feedback`), for a model file.
    fn feedback(&self) -> (f64, u64, f64, f64) {
        let f = &self.fusion.feedback;
        (f.unlabelled, f.clock, f.wins[0], f.wins[1])
    }

    /// The coverage, 1 - u: the share of the recent messages that came with a label.
    #[getter]
    fn coverage(&self) -> f64 {
        self.fusion.feedback.coverage()
    }

    /// Set the account (a saved fusion); ModelFormatError for values it cannot hold.
    fn load_feedback(&mut self, unlabelled: f64, clock: u64, wins: (f64, f64)) -> PyResult<()> {
        guard(|| {
            Feedback::check(unlabelled, [wins.0, wins.1]).map_err(|m| error(Kind::ModelFormat, m))?;
            self.fusion.feedback = Feedback {
                unlabelled,
                clock,
                wins: [wins.0, wins.1],
            };
            Ok(())
        })
    }

    /// The constant rate of logistic regression's provisional lessons.
    #[classattr]
    fn provisional_rate() -> f64 {
        PROVISIONAL_RATE
    }

    /// One step of the stacker; returns what it used, (its two inputs, its gradient g), for
    /// `undo`. With `lr` and `fingerprint`: kept with the lesson logistic regression's
    /// records keep under that fingerprint (`LogisticCore.learn_one`), for `unlearn_kept`.
    #[pyo3(signature = (z_nb, z_lr, positive, weight, lr=None, fingerprint=None))]
    fn learn(
        &mut self,
        z_nb: f64,
        z_lr: f64,
        positive: bool,
        weight: f64,
        lr: Option<&Bound<'_, LogisticCore>>,
        fingerprint: Option<&[u8]>,
    ) -> PyResult<(f64, f64, f64)> {
        guard(|| {
            let fp = fingerprint.map(records::fingerprint).transpose()?;
            let (inputs, step) = self.fusion.learn(z_nb, z_lr, positive, weight);
            // two classes and no margin: every step moves, by one gradient; no L2: no decay
            let g = step.g.first().copied().unwrap_or(0.0);
            if let (Some(lr), Some(fp)) = (lr, fp) {
                lr.borrow_mut().attach_stacker(&fp, Stacked { inputs, g });
            }
            Ok((inputs[0], inputs[1], g))
        })
    }

    /// Unlearn the message x whose lesson `lr`'s records keep (`fingerprint`), from
    /// logistic regression and the stacker: by replay when its document is kept
    /// (`crate::replay`), else their kept steps undone; its record is forgotten. `classes`:
    /// the fusion's class 0 and class 1 (None while it knows one). InvalidInputError, changing nothing, when it cannot.
    fn unlearn_kept(
        &mut self,
        lr: &Bound<'_, LogisticCore>,
        x: &Bound<'_, PyAny>,
        fingerprint: &[u8],
        classes: Option<(Bound<'_, PyAny>, Bound<'_, PyAny>)>,
    ) -> PyResult<()> {
        guard(|| {
            let fp = records::fingerprint(fingerprint)?;
            let mut lr = lr.borrow_mut();
            let Some((first, second)) = classes else {
                return lr.unlearn_record(x, fp, None); // no stacker step was taken yet
            };
            let pair = [
                lr.known_class(&first, "unlearn the stacker's")?,
                lr.known_class(&second, "unlearn the stacker's")?,
            ];
            lr.unlearn_record(x, fp, Some((&mut self.fusion, pair)))
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
