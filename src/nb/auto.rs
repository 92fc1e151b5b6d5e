//! Smoothing chosen online (`alpha="auto"`, `mu="auto"`): the smoothing of a call, the
//! candidates' log table, their scores of a document and the evidence a learn records
//! (src/smoothing.rs holds the candidates and their evidence).

use super::scorer::LnGrid;
use super::{Kind, NaiveBayes, Smoothing};
use crate::doc::Doc;
use crate::smoothing::{AutoSmoothing, CandidateScores};

impl NaiveBayes {
    /// The smoothing of a call: `alpha` with the model's mu (fixed, or chosen online), or
    /// with None the smoothing chosen online (None when the model chooses none).
    pub fn smoothing(&self, alpha: Option<f64>) -> Option<Smoothing> {
        let fixed_mu = match self.kind {
            Kind::Multinomial { mu } => mu,
            _ => None,
        };
        match (&self.auto, alpha) {
            (Some(auto), None) => Some(auto.chosen()),
            (Some(auto), Some(alpha)) => Some(Smoothing {
                alpha,
                mu: auto.chosen().mu,
            }),
            (None, Some(alpha)) => Some(Smoothing { alpha, mu: fixed_mu }),
            (None, None) => None,
        }
    }

    /// Choose the smoothing online among `auto`'s candidates from now on.
    pub fn choose_online(&mut self, auto: AutoSmoothing) {
        self.candidate_logs = LnGrid::tabled(auto.candidates.iter().map(|s| s.alpha).collect());
        self.auto = Some(auto);
    }

    /// The logs of these alphas: the candidates' table when they are the candidates' alphas.
    pub(super) fn ln_grid(&self, alphas: Vec<f64>) -> LnGrid {
        if alphas == self.candidate_logs.alphas {
            self.candidate_logs.clone()
        } else {
            LnGrid::computed(alphas)
        }
    }

    /// Derived sums (Bernoulli's absent-word sums, complement normalisers) are cached per
    /// alpha for this many alphas: every candidate's, and one more (a view's).
    pub(super) fn cache_size(&self) -> usize {
        self.auto.as_ref().map_or(0, |a| a.candidates.len()).max(3) + 1
    }

    /// Make sure the document holds every candidate's scores for the counts as they are
    /// (computed now unless a prediction, or the schedule, left them). False on a model
    /// choosing no smoothing.
    pub fn score_candidates(&mut self, doc: &mut Doc) -> bool {
        let Some(auto) = &self.auto else {
            return false;
        };
        let version = self.store.version;
        if doc.scores.as_ref().is_some_and(|s| s.version == version) {
            return true;
        }
        let candidates = auto.candidates.clone();
        let jll = self.joint_log_likelihoods(doc, &candidates);
        doc.scores = Some(CandidateScores::new(version, jll, self.active(), self.n_classes()));
        true
    }

    /// The joint log-likelihood of every class under the smoothing chosen online, for a
    /// prediction whose document may be learned next: every candidate scores it and the
    /// document keeps their scores, so learning it records them at no further cost. The
    /// chosen candidate's row is bit for bit what scoring with that smoothing alone gives.
    /// None on a model choosing no smoothing.
    pub fn remembered_scores(&mut self, doc: &mut Doc) -> Option<Vec<f64>> {
        if !self.score_candidates(doc) {
            return None;
        }
        let k = self.n_classes();
        let chosen = self.auto.as_ref()?.chosen_index();
        let scores = doc.scores.as_mut()?;
        scores.predicted = true; // so learning the document next records it, whatever the schedule
        Some(scores.jll[chosen * k..(chosen + 1) * k].to_vec())
    }

    /// Does the document hold every candidate's scores for the counts as they are, left by
    /// a prediction of it?
    fn has_predicted_scores(&self, doc: &Doc) -> bool {
        doc.scores
            .as_ref()
            .is_some_and(|s| s.predicted && s.version == self.store.version)
    }

    /// Does a document learned into class `c` with `weight` now count in the evidence
    /// (`AutoSmoothing::counts`, from the classes that have documents)?
    fn counts_in_evidence(&self, c: usize, weight: f64) -> bool {
        let docs = self.store.class_docs();
        let with_documents = docs.iter().filter(|&&d| d > 0.0).count();
        AutoSmoothing::counts(with_documents, docs.get(c).is_some_and(|&d| d > 0.0), weight)
    }

    /// Must the document about to be learned into class `c` with `weight` be scored first
    /// (it counts, holds no prediction's scores, and the schedule scores it: see
    /// src/smoothing.rs)? False on a model choosing no smoothing.
    pub fn wants_scores(&self, doc: &Doc, c: usize, weight: f64) -> bool {
        self.auto.as_ref().is_some_and(|auto| {
            !self.has_predicted_scores(doc) && self.counts_in_evidence(c, weight) && auto.schedule().is_some()
        })
    }

    /// Add the document about to be learned into class `c` to the evidence (models choosing
    /// their smoothing online): its candidates' scores for the counts before the learning,
    /// those a prediction left or, when the schedule scores it, computed now (the caller may
    /// have computed them: `wants_scores`), or else it is passed over (src/smoothing.rs).
    pub(super) fn record_evidence(&mut self, doc: &mut Doc, c: usize, weight: f64) {
        let Some(auto) = &self.auto else {
            return;
        };
        if !self.counts_in_evidence(c, weight) {
            return;
        }
        // a prediction's scores weigh the document's weight; the schedule's, more after the ramp
        let factor = if self.has_predicted_scores(doc) {
            Some(1.0)
        } else {
            auto.schedule()
        };
        match factor {
            Some(factor) => {
                self.score_candidates(doc);
                if let (Some(auto), Some(scores)) = (self.auto.as_mut(), doc.scores.as_ref()) {
                    auto.record(scores, c, factor * weight);
                }
            }
            None => {
                if let Some(auto) = self.auto.as_mut() {
                    auto.pass_over();
                }
            }
        }
    }
}
