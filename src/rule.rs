//! The spam filter's default verdicts (streamnb.filter.rules.LogOddsRule), decided on a
//! message's log-odds z = log P(spam|x) - log P(ham|x): spam from t, ham below h, unsure
//! between, the cutoffs moved out while a class is little known. The 0-1 score it shows
//! (`Verdict.score`, spamd's score) is drawn from z for display, the verdict never read off it.

/// A verdict: ham, unsure or spam.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Ham,
    Unsure,
    Spam,
}

/// Nats per e-fold of the display score beyond the cutoffs.
pub const SCALE: f64 = 10.0;

/// The rule's settings: its cutoffs before caution, and the caution c.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogOddsRule {
    pub ham_log_odds: f64,
    pub spam_log_odds: f64,
    pub caution: f64,
}

impl LogOddsRule {
    /// (h, t) for a model that learned `n_spam` and `n_ham` messages (its class counts):
    /// t = spam_log_odds + c * 100 / n_ham, h = ham_log_odds - c * 100 / n_spam, each
    /// infinite while the class it rules out is unknown.
    pub fn cutoffs(&self, n_spam: f64, n_ham: f64) -> (f64, f64) {
        let moved = |n: f64| {
            if n > 0.0 {
                self.caution * 100.0 / n
            } else {
                f64::INFINITY
            }
        };
        (self.ham_log_odds - moved(n_spam), self.spam_log_odds + moved(n_ham))
    }
}

/// The verdict of z between cutoffs h <= t: spam from t, ham below h, else unsure (also
/// for a NaN z, or while either cutoff is infinite).
pub fn decide(z: f64, h: f64, t: f64) -> Verdict {
    if !(t - h).is_finite() || z.is_nan() {
        Verdict::Unsure
    } else if z >= t {
        Verdict::Spam
    } else if z < h {
        Verdict::Ham
    } else {
        Verdict::Unsure
    }
}

/// The display score of z, with h drawn at `low` and t at `high` (0 < low < high < 1):
/// linear between, approaching 0 below h and 1 from t exponentially (one e-fold every
/// `SCALE` nats); the middle of the band for a NaN z or an infinite cutoff. Below `high`
/// exactly when z < t, so the score shows the verdict.
pub fn display_score(z: f64, h: f64, t: f64, low: f64, high: f64) -> f64 {
    if z.is_nan() || !(t - h).is_finite() {
        return 0.5 * (low + high);
    }
    if z >= t {
        return if z.is_infinite() {
            1.0
        } else {
            high + (1.0 - high) * -(-(z - t) / SCALE).exp_m1()
        };
    }
    if z < h {
        return if z.is_infinite() {
            0.0
        } else {
            low * ((z - h) / SCALE).exp()
        };
    }
    (low + (high - low) * (z - h) / (t - h)).min(high.next_down())
}

#[cfg(test)]
mod tests {
    use super::{decide, display_score, LogOddsRule, Verdict};

    #[test]
    fn the_cutoffs_move_out_while_a_class_is_little_known() {
        let rule = LogOddsRule {
            ham_log_odds: -5.0,
            spam_log_odds: 16.0,
            caution: 8.0,
        };
        assert_eq!(rule.cutoffs(20.0, 10.0), (-5.0 - 40.0, 16.0 + 80.0));
        let (h, t) = rule.cutoffs(0.0, 10.0);
        assert_eq!((h, t), (f64::NEG_INFINITY, 96.0));
        assert_eq!(decide(1e9, h, t), Verdict::Unsure); // a class unknown: never decided
    }

    #[test]
    fn verdicts_are_decided_on_the_log_odds_and_the_score_shows_them() {
        let (h, t, low, high) = (-3.0, 4.0, 0.2, 0.9);
        for (z, verdict) in [
            (4.0, Verdict::Spam),
            (4.0 - 1e-12, Verdict::Unsure),
            (-3.0, Verdict::Unsure),
            (-3.0 - 1e-12, Verdict::Ham),
            (f64::INFINITY, Verdict::Spam),
            (f64::NEG_INFINITY, Verdict::Ham),
            (f64::NAN, Verdict::Unsure),
        ] {
            assert_eq!(decide(z, h, t), verdict, "{z}");
            let score = display_score(z, h, t, low, high);
            let shown = if score >= high {
                Verdict::Spam
            } else if score < low {
                Verdict::Ham
            } else {
                Verdict::Unsure
            };
            assert_eq!(shown, verdict, "{z} {score}");
        }
        assert_eq!(display_score(f64::NAN, h, t, low, high), 0.55);
        assert_eq!(display_score(0.5, h, t, low, high), 0.55); // halfway between h and t
        let mut last = -1.0;
        for i in 0..400 {
            let score = display_score(-60.0 + 0.3 * i as f64, h, t, low, high);
            assert!(score > last, "strictly monotone");
            last = score;
        }
    }
}
