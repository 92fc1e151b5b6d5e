//! Mail without labels: what a binary fusion (src/fusion.rs) does with the messages it
//! classifies that get no label, or get one late.
//!
//! Users label few messages. A filter that learns only from labels stops following the
//! stream when they stop, and naive Bayes, whose counts describe the mail as it was when
//! labels last came, ages worst: on trec07p-dev with labels for the first 10,000 messages
//! only, naive Bayes ranks the last 10,000 at (1-AUC)% 0.31 and logistic regression on byte
//! 4-grams at 0.014 (benchmarks/bench_feedback.py). Three things are kept as the stream goes,
//! each from the messages themselves:
//!
//! 1. **Label coverage.** u = sum over the messages seen without a label of (1 - d) d^age,
//!    d = 2^(-1/H), H = `COVERAGE_HALF_LIFE` messages, age = messages seen since; the
//!    coverage is 1 - u (1 while every message is labelled, towards 0 once labels stop).
//!    A message labelled after it was seen without one has its term taken back exactly
//!    (its stamp on the clock of messages seen gives its age).
//! 2. **Which part to lean on.** When the two parts' log-odds of a labelled message disagree
//!    in sign (read before either learns it: the stacker's two inputs), the part that was
//!    right wins; both tallies start at one win and decay by 2^(-1/W) per disagreement, W =
//!    `WINS_HALF_LIFE`. The judgment is part of the stacker's step (`Fusion::step_on`), so
//!    an unlearn or a replay takes it back with the step. When logistic regression has won
//!    more, the fused log-odds move towards its own as the coverage falls:
//!
//!    ```text
//!    z = c * z_fused + (1 - c) * z_lr            (c the coverage)
//!    ```
//!
//!    logistic regression's log-odds are calibrated by its own training, so the scale of z
//!    holds while the weight shifts. While every message is labelled c = 1 and z is the
//!    fused log-odds, bit for bit. A stream where naive Bayes wins the disagreements (the
//!    SpamAssassin corpus: a small stream, where naive Bayes learns faster) keeps the
//!    fusion as it is.
//! 3. **The provisional lesson** (guarded self-training). A message seen without a label
//!    is learned by logistic regression, and by it only, as the class its own log-odds give
//!    it, with weight w * min(`BALANCE_CAP`, (N_0 + N_1) / (2 N_k)) (N_k the labelled
//!    messages of that class k: a class labelled less often is not drowned by the other's
//!    provisional lessons), in one constant-rate step of `PROVISIONAL_RATE` that leaves
//!    AdaGrad's sums alone (`Logistic::provisional`). Guards: no lesson while logistic
//!    regression says nothing (log-odds 0); none where naive Bayes disagrees while the
//!    fusion does not lean on logistic regression (its own verdicts could run away with it:
//!    on trec07p-dev's active task with 250 labels, without this guard, a campaign it took
//!    for ham taught it more of the same until 4,400 spams were called ham). Once it leans,
//!    its lessons no longer wait for naive Bayes, whose counts describe the labelled mail
//!    (the mail of a user who never labels is unlike it: CHANGELOG.md has the figures). The step
//!    is kept (`streamnb.steps`); the label, when it comes, takes it back (the move was
//!    rate g x: exactly, but for what steps taken since on weights that held it took from
//!    it) before the lesson.
//!
//! The constants were chosen on trec07p-dev's delay, partial and active tasks and checked on
//! the SpamAssassin stream with labels for its first fifth: benchmarks/bench_feedback.py.

/// Messages after which a message seen without a label counts half in the coverage.
pub const COVERAGE_HALF_LIFE: f64 = 1000.0;
/// Disagreements after which a win counts half.
pub const WINS_HALF_LIFE: f64 = 100.0;
/// The largest class-balance factor of a provisional lesson's weight.
pub const BALANCE_CAP: f64 = 3.0;
/// The constant step size of logistic regression's provisional lessons.
pub const PROVISIONAL_RATE: f64 = 0.002;

/// The fusion's account of the mail it saw without labels (see the module docstring).
#[derive(Clone, Debug, PartialEq)]
pub struct Feedback {
    /// u: the decayed weight of the messages seen without a label.
    pub unlabelled: f64,
    /// Messages seen (each message once, labelled or not): the clock of the stamps.
    pub clock: u64,
    /// Disagreements won, decayed: [logistic regression, naive Bayes].
    pub wins: [f64; 2],
}

impl Default for Feedback {
    fn default() -> Self {
        Feedback {
            unlabelled: 0.0,
            clock: 0,
            wins: [1.0, 1.0],
        }
    }
}

/// d = 2^(-1 / half_life)
fn decay_per(half_life: f64) -> f64 {
    (-std::f64::consts::LN_2 / half_life).exp()
}

/// The tallies never fall below this (they decay towards 0 after a long run of one-sided
/// disagreements, and a saved tally must be > 0).
const MIN_WINS: f64 = 1e-300;
/// u stays below 1 (a saved u must be in [0, 1)).
const MAX_UNLABELLED: f64 = 1.0 - f64::EPSILON;

/// Which part was right when the two disagree in sign on a message of class 1 (`positive`)
/// or 0: 0 for logistic regression, 1 for naive Bayes; None when they agree or one says
/// nothing.
fn winner(z_nb: f64, z_lr: f64, positive: bool) -> Option<usize> {
    let (nb, lr) = (side(z_nb)?, side(z_lr)?);
    (nb != lr).then_some(if lr == positive { 0 } else { 1 })
}

/// The sign of a log-odds, None for 0 or NaN (a part that says nothing).
fn side(z: f64) -> Option<bool> {
    if z > 0.0 {
        Some(true)
    } else if z < 0.0 {
        Some(false)
    } else {
        None
    }
}

impl Feedback {
    /// 1 - u: the share of the recent messages that came with a label.
    pub fn coverage(&self) -> f64 {
        1.0 - self.unlabelled
    }

    /// A new message is seen, with its label (`labelled`) or without; returns its stamp.
    pub fn seen(&mut self, labelled: bool) -> u64 {
        let d = decay_per(COVERAGE_HALF_LIFE);
        self.unlabelled *= d;
        if !labelled {
            self.unlabelled += 1.0 - d;
        }
        self.clock += 1;
        self.clock
    }

    /// A lesson taken back (an unlearn): the decay its message gave u is taken off. Right
    /// after the lesson this gives u back to rounding; later, the message keeps its place
    /// on the clock (the stamps stay valid) and the messages seen after it, whose terms it
    /// did not age, are made one message younger too: a factor 2^(1/H), 0.07%, on u.
    pub fn unseen(&mut self) {
        let d = decay_per(COVERAGE_HALF_LIFE);
        self.unlabelled = (self.unlabelled / d).min(MAX_UNLABELLED);
    }

    /// The label of the message stamped `stamp`, seen without one, has come: its term of u
    /// is taken back (it has aged by the messages seen since).
    pub fn labelled_later(&mut self, stamp: u64) {
        let d = decay_per(COVERAGE_HALF_LIFE);
        let age = self.clock.saturating_sub(stamp) as f64;
        self.unlabelled = (self.unlabelled - (1.0 - d) * d.powf(age)).max(0.0);
    }

    /// A labelled message of class 1 (`positive`) or 0 whose parts' log-odds were z_nb and
    /// z_lr before they learned it: when they disagree in sign, the right one wins.
    pub fn judge(&mut self, z_nb: f64, z_lr: f64, positive: bool) {
        if let Some(winner) = winner(z_nb, z_lr, positive) {
            let d = decay_per(WINS_HALF_LIFE);
            for w in &mut self.wins {
                *w = (*w * d).max(MIN_WINS);
            }
            self.wins[winner] += 1.0;
        }
    }

    /// Take back the judgment of a labelled message (`judge` with the same arguments): the
    /// win out, then the decay off. Right after the judgment this gives back the tallies
    /// to rounding; with judgments in between (a message unlearned later, without replay)
    /// the win it takes out has decayed since, so the tallies keep a little of it (each
    /// stays above 0).
    pub fn unjudge(&mut self, z_nb: f64, z_lr: f64, positive: bool) {
        if let Some(winner) = winner(z_nb, z_lr, positive) {
            let d = decay_per(WINS_HALF_LIFE);
            self.wins[winner] -= 1.0;
            for w in &mut self.wins {
                *w = (*w / d).max(MIN_WINS);
            }
        }
    }

    /// Has logistic regression won more of the disagreements (decayed) than naive Bayes?
    pub fn leans_on_lr(&self) -> bool {
        let [lr, nb] = self.wins;
        lr > nb
    }

    /// The log-odds the fusion answers with: the fused ones, moved towards logistic
    /// regression's as the coverage falls when it has won more disagreements.
    pub fn blend(&self, fused: f64, z_lr: f64) -> f64 {
        if self.unlabelled == 0.0 || !self.leans_on_lr() || z_lr.is_nan() {
            return fused;
        }
        let c = self.coverage();
        c * fused + (1.0 - c) * z_lr
    }

    /// The provisional lesson of a message seen without a label, from its parts' log-odds
    /// and the labelled messages of each class (`counts`, class 0 then 1): Some((is it
    /// class 1, its weight)) or None. `weight` is w, the weight of a balanced lesson.
    pub fn provisional(&self, z_nb: f64, z_lr: f64, counts: [f64; 2], weight: f64) -> Option<(bool, f64)> {
        if weight <= 0.0 {
            return None;
        }
        let lr = side(z_lr)?;
        if !self.leans_on_lr() && side(z_nb) != Some(lr) {
            return None;
        }
        let mine = counts[usize::from(lr)];
        let balance = if mine > 0.0 {
            ((counts[0] + counts[1]) / (2.0 * mine)).min(BALANCE_CAP)
        } else {
            BALANCE_CAP
        };
        Some((lr, weight * balance))
    }

    /// Another fusion's account taken in (a merge): u weighed by the messages each saw, the
    /// wins added (the parts', whatever order the classes have; the two starting wins of
    /// each count). The clock stays this fusion's: the stamps it gave stay valid, and the
    /// other's messages seen without a label keep their lessons as the merge mixed them
    /// (their records are not taken: src/python/records.rs, `merge_records`).
    pub fn merge(&mut self, other: &Feedback) {
        let (mine, theirs) = (self.clock as f64, other.clock as f64);
        if mine + theirs > 0.0 {
            self.unlabelled = (self.unlabelled * mine + other.unlabelled * theirs) / (mine + theirs);
        }
        self.wins = [self.wins[0] + other.wins[0], self.wins[1] + other.wins[1]];
    }

    /// Check a saved account: u in [0, 1), the wins finite and > 0. Err says what is wrong.
    pub fn check(unlabelled: f64, wins: [f64; 2]) -> Result<(), &'static str> {
        if !(unlabelled.is_finite() && (0.0..1.0).contains(&unlabelled)) {
            return Err("the unlabelled share must be a number in [0, 1)");
        }
        if !wins.iter().all(|w| w.is_finite() && *w > 0.0) {
            return Err("the disagreements won must be finite numbers > 0");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_falls_when_labels_stop_and_a_late_label_takes_its_term_back() {
        let mut f = Feedback::default();
        for _ in 0..500 {
            f.seen(true);
        }
        assert_eq!(f.unlabelled, 0.0);
        assert_eq!(f.coverage(), 1.0);
        let stamp = f.seen(false);
        let u = f.unlabelled;
        assert!(u > 0.0);
        for _ in 0..10 {
            f.seen(true);
        }
        f.labelled_later(stamp);
        assert!(f.unlabelled.abs() < 1e-18, "{}", f.unlabelled);
        let mut g = Feedback::default();
        for _ in 0..(COVERAGE_HALF_LIFE as usize) {
            g.seen(false);
        }
        assert!((g.coverage() - 0.5).abs() < 1e-9, "{}", g.coverage());
    }

    #[test]
    fn blend_is_the_fused_log_odds_while_every_message_is_labelled_or_nb_wins() {
        let mut f = Feedback::default();
        f.seen(true);
        assert_eq!(f.blend(3.25, -7.0), 3.25);
        for _ in 0..(COVERAGE_HALF_LIFE as usize) {
            f.seen(false);
        }
        assert_eq!(f.blend(3.25, -7.0), 3.25); // no disagreement judged: the tallies are level
        f.judge(-4.0, 2.0, true); // logistic regression right once: ahead
        assert!(f.leans_on_lr());
        let c = f.coverage();
        assert!((f.blend(3.25, -7.0) - (c * 3.25 - (1.0 - c) * 7.0)).abs() < 1e-12);
        for _ in 0..30 {
            f.judge(-4.0, 2.0, false); // naive Bayes right
        }
        assert!(!f.leans_on_lr());
        assert_eq!(f.blend(3.25, -7.0), 3.25);
    }

    #[test]
    fn a_judgment_and_a_lesson_taken_back_right_after_give_the_account_back() {
        let mut f = Feedback::default();
        for i in 0..500 {
            f.seen(i % 3 == 0);
            f.judge(if i % 2 == 0 { 1.0 } else { -1.0 }, 1.0, i % 5 == 0);
        }
        let before = f.clone();
        f.seen(true);
        f.judge(-2.0, 3.0, false);
        assert_ne!(f.wins, before.wins);
        f.unjudge(-2.0, 3.0, false);
        f.unseen();
        assert!((f.unlabelled - before.unlabelled).abs() <= 1e-15 * before.unlabelled.max(1e-300));
        for (a, b) in f.wins.iter().zip(before.wins) {
            assert!((a - b).abs() <= 1e-12 * b, "{a} vs {b}");
        }
        f.unjudge(3.0, 3.0, true); // they agreed: there was nothing to take back
        for (a, b) in f.wins.iter().zip(before.wins) {
            assert!((a - b).abs() <= 1e-12 * b);
        }
        for _ in 0..5000 {
            f.unjudge(-2.0, 3.0, false); // far more than were judged: the tallies stay > 0
            f.unseen();
        }
        assert!(Feedback::check(f.unlabelled, f.wins).is_ok(), "{f:?}");
    }

    #[test]
    fn provisional_lessons_follow_logistic_regression_with_the_guards() {
        let mut f = Feedback::default();
        // labels come: naive Bayes must agree
        assert_eq!(f.provisional(-30.0, 2.0, [10.0, 30.0], 0.3), None);
        let (spam, w) = f.provisional(30.0, 2.0, [10.0, 30.0], 0.3).unwrap();
        assert!(spam && (w - 0.3 * 40.0 / 60.0).abs() < 1e-12);
        let (spam, w) = f.provisional(-1.0, -2.0, [10.0, 30.0], 0.3).unwrap();
        assert!(!spam && (w - 0.3 * 2.0).abs() < 1e-12);
        assert_eq!(f.provisional(3.0, 0.0, [10.0, 30.0], 0.3), None);
        assert_eq!(f.provisional(3.0, 2.0, [10.0, 30.0], 0.0), None);
        // labels stopped: still naive Bayes' agreement, until logistic regression has been
        // the more often right of the two; then it alone decides, the balance capped
        for _ in 0..20_000 {
            f.seen(false);
        }
        assert_eq!(f.provisional(-30.0, 2.0, [1.0, 0.0], 0.3), None);
        for _ in 0..20 {
            f.judge(-4.0, 2.0, true);
        }
        let (spam, w) = f.provisional(-30.0, 2.0, [1.0, 0.0], 0.3).unwrap();
        assert!(spam && (w - 0.3 * BALANCE_CAP).abs() < 1e-12);
        // while labels come too, once it leans: the label takes the lesson back if it was wrong
        let mut g = Feedback::default();
        g.judge(-4.0, 2.0, true);
        assert!(g.coverage() == 1.0 && g.leans_on_lr());
        assert!(g.provisional(-30.0, 2.0, [10.0, 30.0], 0.3).is_some());
    }

    #[test]
    fn wins_decay_and_only_disagreements_count() {
        let mut f = Feedback::default();
        f.judge(2.0, 3.0, true);
        f.judge(0.0, 3.0, false);
        assert_eq!(f.wins, [1.0, 1.0]);
        for _ in 0..1000 {
            f.judge(2.0, -3.0, true);
        }
        let d = decay_per(WINS_HALF_LIFE);
        assert!((f.wins[1] - 1.0 / (1.0 - d)).abs() < 1.0);
        assert!(f.wins[0] < 1e-3);
        assert!(Feedback::check(f.unlabelled, f.wins).is_ok());
        assert!(Feedback::check(1.0, f.wins).is_err());
        assert!(Feedback::check(0.5, [0.0, 1.0]).is_err());
    }
}
