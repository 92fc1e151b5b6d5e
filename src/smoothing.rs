//! Smoothing chosen online from the model's own evidence (`alpha="auto"`, `mu="auto"`).
//!
//! Every candidate smoothing is a function of the same counts. So before a document is
//! learned, each candidate scores it (`NaiveBayes::joint_log_likelihoods`: one read of the
//! document's counts for all of them), the log-probability it gave the true class is added
//! to its evidence, and predictions use the candidate with the best evidence so far. No
//! count is kept twice and nothing is ever refitted.
//!
//! The evidence is *tempered* log loss. A naive Bayes posterior is famously overconfident
//! (a document's words are not independent), and plain log loss rewards whatever makes it
//! less so: measured on 20 Newsgroups, SpamAssassin and trec07p-dev
//! (benchmarks/bench_smoothing.py), it picks alpha 10 to 100 times too large (on trec07p-dev
//! 22% worse (1-AUC)% than the best fixed alpha; on 20 Newsgroups BernoulliNB 3.5 points less
//! accurate). So each candidate's scores are also divided by temperatures tau (the powers of
//! two `TEMPERATURES` lists) and the evidence of a candidate is its log-likelihood of the
//! true classes at its best temperature:
//!
//!   E_j = max_tau sum_i w_i log softmax(jll_ij / tau)[y_i]
//!
//! which tells how well candidate j ranks the classes, apart from how well its
//! probabilities are calibrated (temperature scaling, Guo et al. 2017). Only the choice
//! uses tau: predictions are the chosen candidate's own, bit for bit those of a model with
//! that smoothing fixed.
//!
//! What the evidence is, exactly: a record of the stream as the model saw it. A document
//! counts when it is learned into a class that already has documents, beside at least one
//! other such class (before that, every candidate gives it probability 1 or 0 alike), with
//! the weight it is learned with; with a decay, the record before each such document is
//! multiplied by `decay` first. Unlearning a document takes its counts out, not what it
//! taught the choice (that depended on the counts of its time). Merging adds the two records
//! (this one's aged by the other's documents first), as if the streams had been scored one
//! after the other each by its own model.
//!
//! Which documents are scored. Scoring a document under every candidate reads all of its
//! counts, as a prediction does, and more (on 20 Newsgroups, as much as three fixed-alpha
//! learns): a learn that scored its own document cost 1.5 to 4 times a fixed smoothing's, a
//! batch 3 to 6 times (benchmarks/bench_smoothing.py, cost rows). So:
//!
//! - a document learned right after a prediction of it (which left every candidate's scores
//!   with it) is always recorded, with its weight: prequential use costs nothing more, and
//!   its record is the whole stream;
//! - of the others, every one is scored (`sample` off, the default: the choice reads every
//!   document), or with `sample` every one while the record counts fewer than `RAMP`
//!   documents (a small training set gets the whole record, and the choice settles there); after that
//!   a run of `BLOCK` consecutive ones every `PERIOD` documents counted, each recorded with
//!   `PERIOD / BLOCK` times its weight; the rest are passed over: they count (the record
//!   ages by them, `scored` includes them) but are not scored.
//!
//! With `sample`, the count of documents alone decides, however they are learned (a batch's
//! record is that of its rows in turn), so the schedule needs no state of its own: a model file's `scored`
//! keeps its place. The weight makes the record an estimate of the sum over every document,
//! so evidence values (and a decay's half-life, in documents) keep their meaning and the
//! choice, a comparison of the candidates' sums, reads it as before. Runs rather than one
//! document in `PERIOD / BLOCK`: a batch learns the rows between two scored ones as one
//! update per class, so runs keep it long stretches (measured on 20 Newsgroups: one in 32
//! spread out cost a batch 1.4 to 1.5 times a fixed smoothing's, runs of 32 1.2 times). The
//! price: past the ramp the choice reads one in 32 of the documents learned without a
//! prediction, a noisier estimate (measured: docs/design.md), which is why it is asked for
//! (`sample_evidence=True`), not the default.

/// The smoothing of one prediction: additive `alpha`, and with `mu` (multinomial models
/// only) Dirichlet-prior smoothing toward the pooled distribution smoothed by alpha.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Smoothing {
    pub alpha: f64,
    pub mu: Option<f64>,
}

impl Smoothing {
    pub fn additive(alpha: f64) -> Self {
        Smoothing { alpha, mu: None }
    }
}

/// The schedule of documents learned without a prediction's scores (see the module's
/// documentation): every one is scored while the record counts fewer than RAMP documents;
/// after that, a run of BLOCK consecutive ones every PERIOD documents counted, each weighing
/// PERIOD / BLOCK (an integer) times its weight, and the others are passed over.
pub const RAMP: u64 = 1024;
pub const PERIOD: u64 = 1024;
pub const BLOCK: u64 = 32;

/// The temperatures tau = 2^(16 - t), t = 0 .. 32: from 65536 down to 1/65536. Naive Bayes
/// scores of long documents are overconfident by factors of tens to thousands (measured best
/// temperatures: 4 to 1024); ComplementNB with weight normalisation is underconfident by as
/// much (its weights are divided by sums over the vocabulary).
pub const TEMPERATURES: usize = 33;

/// 1 / tau of temperature t.
#[inline]
pub fn inverse_temperature(t: usize) -> f64 {
    INVERSE_TEMPERATURES[t]
}

const INVERSE_TEMPERATURES: [f64; TEMPERATURES] = {
    let mut betas = [0.0; TEMPERATURES];
    let mut t = 0;
    let mut beta = 1.0 / 65536.0;
    while t < TEMPERATURES {
        betas[t] = beta;
        beta *= 2.0;
        t += 1;
    }
    betas
};

/// Every 8th power is computed directly, the ones between by squaring the one before:
/// each squaring doubles the relative error, so it stays below 2^8 ulps.
const DIRECT_EVERY: usize = 8;

/// What the candidates say about one document before it is learned: computed by a
/// prediction and kept with the document, so learning it right after reads them again.
#[derive(Clone, Debug)]
pub struct CandidateScores {
    /// The count store's version they hold at (`Store::version`).
    pub version: u64,
    /// The joint log-likelihood of every class under every candidate (J x K, row-major).
    pub jll: Vec<f64>,
    /// The classes with documents, in index order (what the posteriors range over).
    pub active: Vec<usize>,
    /// Per candidate, the largest joint log-likelihood over the active classes.
    pub top: Vec<f64>,
    /// Per candidate and temperature (J x T): ln sum_c exp((jll_c - top) / tau).
    pub log_sums: Vec<f64>,
    /// Computed for a prediction (recorded whatever the schedule), or for the schedule.
    pub predicted: bool,
}

impl CandidateScores {
    pub fn new(version: u64, jll: Vec<f64>, active: Vec<usize>, k: usize) -> Self {
        let n_candidates = jll.len().checked_div(k).unwrap_or(0);
        let mut top = Vec::with_capacity(n_candidates);
        let mut log_sums = Vec::with_capacity(n_candidates * TEMPERATURES);
        let mut scores = Vec::with_capacity(active.len());
        for row in jll.chunks_exact(k.max(1)).take(n_candidates) {
            scores.clear();
            scores.extend(active.iter().map(|&c| row[c]));
            let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            top.push(best);
            log_sums.extend(tempered_log_sums(&scores, best));
        }
        CandidateScores {
            version,
            jll,
            active,
            top,
            log_sums,
            predicted: false,
        }
    }

    pub fn heap_bytes(&self) -> usize {
        (self.jll.capacity() + self.top.capacity() + self.log_sums.capacity()) * 8 + self.active.capacity() * 8
    }
}

/// ln sum_c exp((v_c - top) / tau) for every temperature (`top` = max v). Terms of classes
/// at -inf, or so far below that they underflow, add nothing; `top`'s own term is 1, so every
/// sum is at least 1 (a finite top).
fn tempered_log_sums(v: &[f64], top: f64) -> [f64; TEMPERATURES] {
    let mut sums = [0.0; TEMPERATURES];
    for &x in v {
        let d = x - top;
        if d == 0.0 {
            sums.iter_mut().for_each(|s| *s += 1.0);
            continue;
        }
        if d.is_nan() || d == f64::NEG_INFINITY {
            continue;
        }
        let mut e = 0.0;
        for (t, sum) in sums.iter_mut().enumerate() {
            // exp(d / tau_t) = exp(d / tau_{t-1})^2: the inverse temperatures double
            e = if t % DIRECT_EVERY == 0 {
                (d * inverse_temperature(t)).exp()
            } else {
                e * e
            };
            if e == 0.0 {
                break; // and so at every colder temperature
            }
            *sum += e;
        }
    }
    sums.map(f64::ln)
}

/// The candidates and their evidence.
#[derive(Clone, Debug, PartialEq)]
pub struct AutoSmoothing {
    /// In increasing order of smoothing (alpha or mu: one of them varies): ties in the
    /// evidence go to the later one, the smoother model (before any evidence, the smoothest).
    pub candidates: Vec<Smoothing>,
    /// Per candidate and temperature (J x T): sum over the documents scored of
    /// weight x decay^(documents scored since) x log softmax(jll / tau)[y]. Always <= 0.
    log_likelihood: Vec<f64>,
    /// Documents the record counts: scored, or passed over by the schedule (see the module's
    /// documentation).
    pub scored: u64,
    /// What the record is multiplied by before each document counted (1: no decay).
    pub decay: f64,
    /// Score documents learned without a prediction on the schedule (`schedule`), or every one.
    pub sample: bool,
    chosen: usize,
}

/// Why evidence could not be merged or restored.
#[derive(Debug, PartialEq)]
pub enum EvidenceError {
    /// The two models choose among different candidates (or only one chooses).
    DifferentCandidates,
    /// A saved record of the wrong size, or holding a value no record can hold.
    Malformed(String),
}

impl AutoSmoothing {
    /// `new` for (alpha, mu) `candidates` checked: at least one, every alpha and mu finite
    /// and > 0, and the decay in (0, 1]. Err (a message) names them otherwise.
    pub fn checked(candidates: Vec<(f64, Option<f64>)>, decay: f64, sample: bool) -> Result<Self, String> {
        let valid = |v: f64| v.is_finite() && v > 0.0;
        if candidates.is_empty()
            || !candidates.iter().all(|&(a, mu)| valid(a) && mu.is_none_or(valid))
            || !(decay > 0.0 && decay <= 1.0)
        {
            return Err(format!(
                "smoothing candidates must be finite numbers > 0 and the decay in (0, 1], got {candidates:?} and {decay}"
            ));
        }
        let candidates = candidates
            .into_iter()
            .map(|(alpha, mu)| Smoothing { alpha, mu })
            .collect();
        Ok(AutoSmoothing {
            sample,
            ..AutoSmoothing::new(candidates, decay)
        })
    }

    /// `candidates` in increasing order of smoothing; `decay` in (0, 1].
    pub fn new(candidates: Vec<Smoothing>, decay: f64) -> Self {
        let n = candidates.len();
        AutoSmoothing {
            chosen: n.saturating_sub(1),
            candidates,
            log_likelihood: vec![0.0; n * TEMPERATURES],
            scored: 0,
            decay,
            sample: false,
        }
    }

    /// The smoothing predictions use now.
    pub fn chosen(&self) -> Smoothing {
        self.candidates[self.chosen]
    }

    pub fn chosen_index(&self) -> usize {
        self.chosen
    }

    /// Per candidate: (evidence E_j, the index of the temperature that gives it; the
    /// coldest (tau = 1) on ties, and so before any evidence).
    pub fn evidence(&self) -> Vec<(f64, usize)> {
        self.log_likelihood
            .chunks_exact(TEMPERATURES)
            .map(|row| {
                let mut best = 16; // tau = 1
                for (t, &v) in row.iter().enumerate() {
                    if v > row[best] {
                        best = t;
                    }
                }
                (row[best], best)
            })
            .collect()
    }

    fn choose(&mut self) {
        let evidence = self.evidence();
        let mut chosen = 0;
        for (j, &(e, _)) in evidence.iter().enumerate() {
            if e >= evidence[chosen].0 {
                chosen = j;
            }
        }
        self.chosen = chosen;
    }

    /// Does a document learned with `weight` into a class that has documents (`y_has_documents`),
    /// when `classes_with_documents` classes have some, count in the record? Before that, every
    /// candidate gives it probability 1 or 0 alike.
    pub fn counts(classes_with_documents: usize, y_has_documents: bool, weight: f64) -> bool {
        classes_with_documents >= 2 && y_has_documents && weight > 0.0
    }

    /// The schedule, for the next document that counts and holds no prediction's scores:
    /// Some(what its weight is multiplied by) when it is scored, None when it is passed over
    /// (`pass_over`). Without `sample` every document is scored; with it, the number of
    /// documents counted alone decides.
    pub fn schedule(&self) -> Option<f64> {
        if !self.sample || self.scored < RAMP {
            return Some(1.0);
        }
        ((self.scored - RAMP) % PERIOD < BLOCK).then_some((PERIOD / BLOCK) as f64)
    }

    /// Count a document without scoring it (the schedule passes it over): the record ages.
    pub fn pass_over(&mut self) {
        if self.decay != 1.0 {
            self.log_likelihood.iter_mut().for_each(|e| *e *= self.decay);
        }
        self.scored += 1;
    }

    /// Add one document of class `y` (an index into the classes), learned with `weight`,
    /// to the record: nothing unless it counts (`counts`) and every candidate's scores are
    /// numbers.
    pub fn record(&mut self, scores: &CandidateScores, y: usize, weight: f64) {
        let k = if scores.top.is_empty() {
            return;
        } else {
            scores.jll.len() / scores.top.len()
        };
        if !AutoSmoothing::counts(scores.active.len(), scores.active.contains(&y), weight) {
            return;
        }
        let margins: Vec<f64> = (0..self.candidates.len())
            .map(|j| scores.jll[j * k + y] - scores.top[j])
            .collect();
        let defined = margins.iter().all(|m| m.is_finite())
            && scores.log_sums.iter().all(|s| s.is_finite())
            && margins.len() * TEMPERATURES == scores.log_sums.len();
        if !defined {
            return;
        }
        for ((row, sums), &margin) in self
            .log_likelihood
            .chunks_exact_mut(TEMPERATURES)
            .zip(scores.log_sums.chunks_exact(TEMPERATURES))
            .zip(&margins)
        {
            for (t, (e, &log_sum)) in row.iter_mut().zip(sums).enumerate() {
                // log softmax(jll / tau)[y] = (jll_y - top) / tau - ln sum_c exp((jll_c - top) / tau)
                let log_p = (margin * inverse_temperature(t) - log_sum).min(0.0);
                *e = self.decay * *e + weight * log_p;
            }
        }
        self.scored += 1;
        self.choose();
    }

    /// Append another model's record to this one: this record ages by the other's documents
    /// (decay^scored), then the two add up. Refused (nothing changed) unless both choose
    /// among the same candidates with the same decay.
    pub fn merge(&mut self, other: &AutoSmoothing) -> Result<(), EvidenceError> {
        if self.candidates != other.candidates || self.decay != other.decay {
            return Err(EvidenceError::DifferentCandidates);
        }
        let age = self.decay.powf(other.scored as f64);
        for (mine, theirs) in self.log_likelihood.iter_mut().zip(&other.log_likelihood) {
            *mine = age * *mine + theirs;
        }
        self.scored = self.scored.saturating_add(other.scored);
        self.choose();
        Ok(())
    }

    /// The record as a model file keeps it: (J x T values, documents scored).
    pub fn state(&self) -> (&[f64], u64) {
        (&self.log_likelihood, self.scored)
    }

    /// Take a saved record (`state`); every value checked first, nothing changed on error.
    pub fn restore(&mut self, values: &[f64], scored: u64) -> Result<(), EvidenceError> {
        let expected = self.candidates.len() * TEMPERATURES;
        if values.len() != expected {
            return Err(EvidenceError::Malformed(format!(
                "the evidence holds {} values, expected {} ({} candidates x {TEMPERATURES} temperatures)",
                values.len(),
                expected,
                self.candidates.len()
            )));
        }
        if let Some(bad) = values.iter().find(|v| !(v.is_finite() && **v <= 0.0)) {
            return Err(EvidenceError::Malformed(format!(
                "the evidence holds {bad}: a log-likelihood is a finite number <= 0"
            )));
        }
        if scored == 0 && values.iter().any(|&v| v != 0.0) {
            return Err(EvidenceError::Malformed(
                "the evidence of no document must be 0".to_string(),
            ));
        }
        self.log_likelihood.copy_from_slice(values);
        self.scored = scored;
        self.choose();
        Ok(())
    }

    pub fn heap_bytes(&self) -> usize {
        self.log_likelihood.capacity() * 8 + self.candidates.capacity() * std::mem::size_of::<Smoothing>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scores(jll: &[f64], k: usize) -> CandidateScores {
        CandidateScores::new(0, jll.to_vec(), (0..k).collect(), k)
    }

    #[test]
    fn tempered_sums_match_the_direct_formula() {
        let v = [-3.0, 0.0, -700.0, -0.25, f64::NEG_INFINITY];
        let sums = tempered_log_sums(&v, 0.0);
        for (t, &s) in sums.iter().enumerate() {
            let beta = inverse_temperature(t);
            let direct: f64 = v.iter().map(|&x| (x * beta).exp()).sum::<f64>().ln();
            assert!(
                (s - direct).abs() <= 1e-12 * direct.abs().max(1.0),
                "t={t}: {s} vs {direct}"
            );
        }
    }

    #[test]
    fn the_candidate_that_ranks_the_true_class_first_wins() {
        let grid = vec![Smoothing::additive(0.01), Smoothing::additive(1.0)];
        let mut auto = AutoSmoothing::new(grid, 1.0);
        assert_eq!(auto.chosen_index(), 1, "no evidence: the smoothest");
        // candidate 0 puts class 0 on top, candidate 1 class 1; the truth is class 0
        let s = scores(&[0.0, -5.0, -5.0, 0.0], 2);
        auto.record(&s, 0, 1.0);
        assert_eq!(auto.chosen_index(), 0);
        let (evidence, _) = auto.evidence()[1];
        assert!(evidence < auto.evidence()[0].0);
        assert_eq!(auto.scored, 1);
    }

    #[test]
    fn documents_that_tell_nothing_are_not_recorded() {
        let mut auto = AutoSmoothing::new(vec![Smoothing::additive(0.1), Smoothing::additive(1.0)], 1.0);
        let one_class = CandidateScores::new(0, vec![0.0, -1.0, 0.0, -1.0], vec![0], 2);
        auto.record(&one_class, 0, 1.0);
        let two = scores(&[0.0, -1.0, 0.0, -1.0], 2);
        auto.record(&two, 5, 1.0); // a class without documents
        auto.record(&two, 1, 0.0);
        assert_eq!(auto.scored, 0);
        assert!(auto.state().0.iter().all(|&v| v == 0.0));
    }

    #[test]
    fn merging_appends_the_records_with_the_decay() {
        let grid = vec![Smoothing::additive(0.1), Smoothing::additive(1.0)];
        let s1 = scores(&[0.0, -2.0, -1.0, 0.0], 2);
        let s2 = scores(&[-3.0, 0.0, 0.0, -0.5], 2);
        let mut streamed = AutoSmoothing::new(grid.clone(), 0.5);
        streamed.record(&s1, 0, 1.0);
        streamed.record(&s2, 1, 2.0);
        let mut a = AutoSmoothing::new(grid.clone(), 0.5);
        a.record(&s1, 0, 1.0);
        let mut b = AutoSmoothing::new(grid.clone(), 0.5);
        b.record(&s2, 1, 2.0);
        a.merge(&b).unwrap();
        assert_eq!(a, streamed);
        let other = AutoSmoothing::new(vec![Smoothing::additive(0.1)], 0.5);
        assert_eq!(a.merge(&other), Err(EvidenceError::DifferentCandidates));
    }

    #[test]
    fn restore_checks_every_value() {
        let mut auto = AutoSmoothing::new(vec![Smoothing::additive(1.0)], 1.0);
        assert!(auto.restore(&[0.0; 3], 1).is_err());
        let mut values = vec![-1.0; TEMPERATURES];
        values[3] = 0.5;
        assert!(auto.restore(&values, 1).is_err());
        values[3] = f64::NAN;
        assert!(auto.restore(&values, 1).is_err());
        values[3] = -2.0;
        assert!(auto.restore(&values, 0).is_err());
        auto.restore(&values, 4).unwrap();
        assert_eq!(auto.state(), (&values[..], 4));
    }
}
