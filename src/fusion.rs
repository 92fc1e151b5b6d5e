//! Online fusion of two binary classifiers' log-odds: naive Bayes, which is right early, and
//! logistic regression, which is right late (Ng & Jordan 2002). A third, tiny logistic
//! regression (the stacker) weighs them as the stream goes:
//!
//!   z = a * clip(z_nb / s, -m, m) + b * z_lr + c
//!
//! z_nb, z_lr the two models' log P(c1|x) - log P(c0|x) before they learn x; s = `scale`
//! and m = `clip` bring naive Bayes' log-odds (hundreds of nats, and overconfident: its
//! independence assumption counts correlated evidence again and again) to the scale of a
//! calibrated logit, and cap what a confidently wrong naive Bayes can do; (a, b, c) start at
//! (a0, b0, 0) and follow the gradient of the log-loss of the fused prediction, one step per
//! learned document with a constant rate (Cormack's online fusion of spam filters, TREC 2007,
//! fused logits with a logistic regression the same way).
//!
//! A step returns what it used, its inputs and its `Step` (`Logistic::learn`), so that it
//! can be undone exactly (`undo`): the inputs cannot be read again from the message, since
//! the two models' log-odds move as they learn.

use crate::feedback::Feedback;
use crate::logistic::{Logistic, Schedule, Settings, Step};

/// The stacker's feature ids: naive Bayes' clipped log-odds, logistic regression's log-odds.
const NB: u32 = 0;
const LR: u32 = 1;

#[derive(Clone, Debug)]
pub struct Fusion {
    pub stacker: Logistic,
    pub scale: f64,
    pub clip: f64,
    /// What the fusion does with mail that comes without labels (`crate::feedback`).
    pub feedback: Feedback,
}

impl Fusion {
    /// A fusion starting at z = a0 * clip(z_nb / s) + b0 * z_lr.
    pub fn new(rate: f64, scale: f64, clip: f64, initial: [f64; 2]) -> Self {
        let mut stacker = Logistic::new(Settings {
            rate,
            schedule: Schedule::Constant,
            l2: 0.0,
            margin: None,
            sublinear: false,
            idf_power: 0.0,
            normalize: false,
        });
        stacker.add_class();
        stacker.add_class();
        stacker.reserve_rows(2);
        stacker.import_rows(&[NB, LR], &initial, &[]);
        Fusion {
            stacker,
            scale,
            clip,
            feedback: Feedback::default(),
        }
    }

    /// The stacker's inputs (a NaN log-odds, which says nothing, counts as 0).
    fn inputs(&self, z_nb: f64, z_lr: f64) -> [f64; 2] {
        let nb = if z_nb.is_nan() {
            0.0
        } else {
            (z_nb / self.scale).clamp(-self.clip, self.clip)
        };
        let lr = if z_lr.is_nan() { 0.0 } else { z_lr };
        [nb, lr]
    }

    /// The stacker's fused log-odds of class 1 against class 0 (what it learns on).
    pub fn log_odds(&self, z_nb: f64, z_lr: f64) -> f64 {
        self.stacker.scores(&[NB, LR], &self.inputs(z_nb, z_lr))[1]
    }

    /// The log-odds the fusion answers with: the fused ones, moved towards logistic
    /// regression's while labels are scarce (`Feedback::blend`).
    pub fn answer(&self, z_nb: f64, z_lr: f64) -> f64 {
        self.feedback.blend(self.log_odds(z_nb, z_lr), z_lr)
    }

    /// One step of the stacker on a document of class 1 (`positive`) or 0; returns its
    /// inputs and what the step used, for `undo`.
    pub fn learn(&mut self, z_nb: f64, z_lr: f64, positive: bool, weight: f64) -> ([f64; 2], Step) {
        let inputs = self.inputs(z_nb, z_lr);
        let step = self.step_on(inputs, positive, weight);
        (inputs, step)
    }

    /// One step of the stacker on its inputs as `learn` makes them (a replay takes a kept
    /// step again from naive Bayes' kept input: src/replay.rs). The same two log-odds judge
    /// which part was right, if they disagree (`Feedback::judge`: the sign of naive Bayes'
    /// clipped input is its log-odds' sign), so that `undo` and a replay take the judgment
    /// back with the step.
    pub fn step_on(&mut self, inputs: [f64; 2], positive: bool, weight: f64) -> Step {
        self.feedback.judge(inputs[0], inputs[1], positive);
        self.stacker
            .learn(&[NB, LR], &inputs, usize::from(positive), weight, None, weight)
    }

    /// Take back exactly a step `learn` took on a message of class 1 (`positive`) or 0,
    /// from the inputs and step it returned (see `Logistic::undo`), and its judgment
    /// (`Feedback::unjudge`). Err, changing nothing, for a step the stacker could not have
    /// taken.
    pub fn undo(&mut self, inputs: [f64; 2], step: &Step, positive: bool) -> Result<(), String> {
        if !inputs.iter().all(|v| v.is_finite()) {
            return Err(format!("the stacker's inputs must be finite, got {inputs:?}"));
        }
        self.stacker.check_step(step)?;
        self.stacker.undo(&[NB, LR], &inputs, step, 0.0);
        self.feedback.unjudge(inputs[0], inputs[1], positive);
        Ok(())
    }

    /// The reverse step, when the step was not kept (see `Logistic::unlearn`), and the
    /// judgment the message's two log-odds as they are now would have made taken back.
    pub fn unlearn(&mut self, z_nb: f64, z_lr: f64, positive: bool, weight: f64) {
        let inputs = self.inputs(z_nb, z_lr);
        self.stacker
            .unlearn(&[NB, LR], &inputs, usize::from(positive), weight, weight);
        self.feedback.unjudge(inputs[0], inputs[1], positive);
    }

    /// Parameter mixing with another fusion (see `Logistic::mix`), each weighing by the
    /// documents it learned. `swapped`: the other's class 1 is this one's class 0. Its inputs
    /// are then log-odds of the other sign, and so is its output: z' = -z, so its (a, b)
    /// mean the same here and only its bias changes sign.
    pub fn mix(&mut self, other: &Fusion, mine: f64, theirs: f64, swapped: bool) {
        self.feedback.merge(&other.feedback);
        let mut other = other.stacker.clone();
        if swapped {
            let (bias, squares) = other.export_bias();
            let flipped: Vec<f64> = bias.iter().map(|b| -b).collect();
            other.import_bias(&flipped, &squares);
        }
        self.stacker.mix(&other, &[NB, LR], &[0, 1], mine, theirs);
    }

    /// (a, b, c): the weights of the two log-odds and the bias.
    pub fn weights(&self) -> [f64; 3] {
        [self.stacker.row(NB)[0], self.stacker.row(LR)[0], self.stacker.bias()[0]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_as_the_initial_mix_and_clips_naive_bayes() {
        let f = Fusion::new(0.01, 30.0, 3.0, [1.0, 0.5]);
        assert_eq!(f.log_odds(60.0, 2.0), 2.0 + 1.0);
        assert_eq!(f.log_odds(-900.0, 0.0), -3.0);
        assert_eq!(f.log_odds(f64::INFINITY, -1.0), 3.0 - 0.5);
        assert_eq!(f.log_odds(f64::NAN, 4.0), 2.0);
    }

    #[test]
    fn learns_to_trust_the_model_that_is_right() {
        // naive Bayes says the opposite of the truth, logistic regression the truth
        let mut f = Fusion::new(0.05, 30.0, 3.0, [1.0, 0.5]);
        for i in 0..2000 {
            let positive = i % 2 == 0;
            let sign = if positive { 1.0 } else { -1.0 };
            f.learn(-30.0 * sign, 2.0 * sign, positive, 1.0);
        }
        let [a, b, _] = f.weights();
        assert!(a < 0.5 && b > 1.0, "{a} {b}");
        assert!(f.log_odds(-30.0, 2.0) > 0.0);
    }

    #[test]
    fn undo_right_after_learn_gives_the_weights_back() {
        let mut f = Fusion::new(0.05, 30.0, 3.0, [1.0, 0.5]);
        for i in 0..50 {
            let sign = if i % 3 == 0 { 1.0 } else { -1.0 };
            f.learn(25.0 * sign, 1.5 * sign, i % 2 == 0, 1.0);
        }
        let (before, wins) = (f.weights(), f.feedback.wins);
        // the inputs are what the step read: the log-odds given are clipped (90 / 30 -> 3);
        // the two disagree, and logistic regression is wrong: naive Bayes wins
        let (inputs, step) = f.learn(90.0, -0.4, true, 0.5);
        assert_eq!(inputs, [3.0, -0.4]);
        assert!(f.feedback.wins[1] > wins[1]);
        f.undo(inputs, &step, true).unwrap();
        for (a, b) in f.weights().iter().zip(before) {
            assert!((a - b).abs() < 1e-15, "{a} vs {b}");
        }
        for (a, b) in f.feedback.wins.iter().zip(wins) {
            assert!((a - b).abs() < 1e-12 * b, "{a} vs {b}");
        }
        let restored = (f.weights(), f.feedback.wins);
        assert!(f.undo([f64::NAN, 0.0], &step, true).is_err());
        assert!(f
            .undo(
                inputs,
                &Step {
                    g: vec![0.1],
                    decay: 0.9
                },
                true
            )
            .is_err());
        assert_eq!((f.weights(), f.feedback.wins), restored); // refused: nothing changed
    }

    #[test]
    fn mixing_a_fusion_of_the_other_class_order_keeps_its_meaning() {
        let mut a = Fusion::new(0.05, 30.0, 3.0, [1.0, 0.5]);
        let mut b = Fusion::new(0.05, 30.0, 3.0, [1.0, 0.5]);
        for i in 0..200 {
            let positive = i % 3 == 0;
            let sign = if positive { 1.0 } else { -1.0 };
            a.learn(20.0 * sign, sign, positive, 1.0);
            b.learn(-20.0 * sign, -sign, !positive, 1.0); // the same stream, classes named the other way
        }
        let (wa, wb) = (a.weights(), b.weights());
        assert!((wa[0] - wb[0]).abs() < 1e-12 && (wa[1] - wb[1]).abs() < 1e-12 && (wa[2] + wb[2]).abs() < 1e-12);
        let before = a.weights();
        a.mix(&b, 1.0, 1.0, true);
        for (x, y) in a.weights().iter().zip(before) {
            assert!((x - y).abs() < 1e-12);
        }
    }
}
