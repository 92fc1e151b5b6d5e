use super::*;
use crate::smoothing::CandidateScores;

/// A document of these (feature, value) pairs, encoded in the model's feature space.
pub(crate) fn doc(model: &NaiveBayes, features: &[(&str, f64)]) -> Doc {
    let mut encoder = model.features.encoder(features.len(), 64);
    for &(key, value) in features {
        encoder.add(key.as_bytes(), value);
    }
    encoder.finish()
}

fn china_japan(kind: Kind) -> NaiveBayes {
    let mut m = NaiveBayes::new(kind, Prior::Mle, false, false, None, 4);
    let china = [
        vec![("chinese", 2.0), ("beijing", 1.0)],
        vec![("chinese", 2.0), ("shanghai", 1.0)],
        vec![("chinese", 1.0), ("macao", 1.0)],
    ];
    let mut c = None;
    for features in &china {
        let mut d = doc(&m, features);
        c = Some(m.learn(&mut d, c, 1.0, 1.0, 1.0).unwrap());
    }
    let mut d = doc(&m, &[("tokyo", 1.0), ("japan", 1.0), ("chinese", 1.0)]);
    m.learn(&mut d, None, 1.0, 1.0, 1.0).unwrap();
    m
}

/// Manning, Raghavan & Schütze, Introduction to Information Retrieval, ch. 13:
/// P(china | d5) = 0.6898 for the multinomial model with alpha = 1.
#[test]
fn multinomial_reproduces_the_textbook_example() {
    let mut m = china_japan(Kind::Multinomial { mu: None });
    let mut d = doc(&m, &[("chinese", 3.0), ("tokyo", 1.0), ("japan", 1.0)]);
    let (active, log_proba) = m.log_posterior(&mut d, m.smoothing(Some(1.0)).unwrap(), true);
    assert_eq!(active, vec![0, 1]);
    assert!((log_proba[0].exp() - 0.6898).abs() < 1e-4);
}

/// The same chapter's Bernoulli example: P(china | d5) = 0.19 (0.005 vs 0.022).
#[test]
fn bernoulli_reproduces_the_textbook_example() {
    let mut m = china_japan(Kind::Bernoulli { binarize: 0.0 });
    let mut d = doc(&m, &[("chinese", 3.0), ("tokyo", 1.0), ("japan", 1.0)]);
    let (_, log_proba) = m.log_posterior(&mut d, m.smoothing(Some(1.0)).unwrap(), true);
    let expected = 0.005 / (0.005 + 0.022);
    assert!((log_proba[0].exp() - expected).abs() < 0.01, "{}", log_proba[0].exp());
}

#[test]
fn learn_then_unlearn_restores_predictions_and_vocabulary() {
    for kind in [
        Kind::Multinomial { mu: Some(3.0) },
        Kind::Bernoulli { binarize: 0.0 },
        Kind::Complement { norm: true },
    ] {
        let mut m = china_japan(kind);
        let mut probe = doc(&m, &[("chinese", 1.0), ("tokyo", 2.0)]);
        let before = m.log_posterior(&mut probe, m.smoothing(Some(0.5)).unwrap(), true);
        let mut extra = doc(&m, &[("new", 1.0), ("tokyo", 0.3)]);
        m.learn(&mut extra, Some(1), 1.0, 0.7, 1.0).unwrap();
        let mut extra = doc(&m, &[("new", 1.0), ("tokyo", 0.3)]);
        m.unlearn(&mut extra, 1, 0.7, None).unwrap();
        assert_eq!(m.features.vocabulary().unwrap().find(b"new"), None);
        let mut probe = doc(&m, &[("chinese", 1.0), ("tokyo", 2.0)]); // tokens left V: encode again
        let after = m.log_posterior(&mut probe, m.smoothing(Some(0.5)).unwrap(), true);
        for (a, b) in before.1.iter().zip(&after.1) {
            assert!((a - b).abs() < 1e-12, "{kind:?}: {a} vs {b}");
        }
    }
}

/// One read of a document's counts for several smoothings (with the candidates' log table)
/// gives each the very bits scoring with it alone (no table) gives.
#[test]
fn scoring_several_smoothings_at_once_gives_each_ones_scores_bit_for_bit() {
    for kind in [
        Kind::Multinomial { mu: None },
        Kind::Multinomial { mu: Some(3.0) },
        Kind::Bernoulli { binarize: 0.0 },
        Kind::Complement { norm: false },
        Kind::Complement { norm: true },
    ] {
        for unseen in [false, true] {
            let mu = match kind {
                Kind::Multinomial { mu } => mu,
                _ => None,
            };
            let smoothings: Vec<Smoothing> = [0.01, 0.5, 1.0, 7.0].map(|alpha| Smoothing { alpha, mu }).to_vec();
            let mut alone = china_japan(kind);
            let mut together = china_japan(kind);
            alone.unseen_score = unseen;
            together.unseen_score = unseen;
            together.choose_online(AutoSmoothing::new(smoothings.clone(), 1.0));
            let words = [("chinese", 3.0), ("tokyo", 1.0), ("japan", 0.5), ("nowhere", 2.0)];
            let mut d = doc(&together, &words);
            let all = together.joint_log_likelihoods(&mut d, &smoothings);
            let k = together.n_classes();
            for (j, &s) in smoothings.iter().enumerate() {
                let mut d = doc(&alone, &words);
                let one = alone.joint_log_likelihood(&mut d, s);
                assert_eq!(&all[j * k..(j + 1) * k], &one[..], "{kind:?}, unseen {unseen}, {s:?}");
            }
        }
    }
}

#[test]
fn empty_documents_and_unknown_features_are_refused() {
    let mut m = china_japan(Kind::Multinomial { mu: None });
    let mut empty = doc(&m, &[("chinese", 0.0)]);
    assert_eq!(m.learn(&mut empty, Some(0), 1.0, 1.0, 1.0), Err(NbError::EmptyDocument));
    let mut unknown = doc(&m, &[("chinese", 1.0), ("nowhere", 1.0)]);
    assert_eq!(
        m.unlearn(&mut unknown, 0, 1.0, None),
        Err(NbError::NeverLearned { features: vec![1] })
    );
}

/// fuzz/core.rs: a hashed model whose only buckets were dropped, scoring unseen words.
#[test]
fn unseen_words_tell_nothing_once_the_vocabulary_is_empty() {
    for kind in [
        Kind::Multinomial { mu: None },
        Kind::Complement { norm: false },
        Kind::Complement { norm: true },
    ] {
        let mut m = NaiveBayes::new(kind, Prior::Mle, true, false, Some(16), 1);
        let mut d = doc(&m, &[("x y", 1.0), ("b", 2.0)]);
        m.learn(&mut d, None, 1.0, 0.5, 1.0).unwrap();
        let d = doc(&m, &[("x y", 1.0), ("b", 2.0)]);
        m.drop_features(&d.ids);
        let mut probe = doc(&m, &[("a", 1.0), ("cheap", 3.0)]);
        let (_, log_proba) = m.log_posterior(&mut probe, m.smoothing(Some(0.5)).unwrap(), true);
        assert_eq!(log_proba, vec![0.0], "{kind:?}");
    }
}

/// fuzz/core.rs: Bernoulli counts 2^53 apart; whatever an unlearning is allowed to leave,
/// every probability stays a number.
#[test]
fn bernoulli_scores_stay_numbers_when_counts_are_2_53_apart() {
    let mut m = NaiveBayes::new(Kind::Bernoulli { binarize: 0.0 }, Prior::Mle, true, false, Some(16), 4);
    let mut d = doc(&m, &[("a", 1.0), ("meeting", 1.0)]);
    let spam = m.learn(&mut d, None, 1.0, 0.3, 1.0).unwrap();
    let mut d = doc(&m, &[("b", 1.0)]);
    m.learn(&mut d, None, 1.0, 1.0, 1.0).unwrap();
    let mut d = doc(&m, &[("b", 2.0), ("x y", 1.0)]);
    m.learn(&mut d, Some(spam), 1.0, 1e17, 1.0).unwrap();
    let mut d = doc(&m, &[("meeting", 1.0)]);
    let _ = m.unlearn(&mut d, spam, 1e3, None);
    let mut probe = doc(&m, &[("a", 1.0), ("cheap", 1.0)]);
    let (_, log_proba) = m.log_posterior(&mut probe, m.smoothing(Some(0.5)).unwrap(), true);
    assert!(log_proba.iter().all(|p| !p.is_nan() && *p <= 0.0), "{log_proba:?}");
}

#[test]
fn logsumexp_and_argmax_handle_infinities_and_nan() {
    assert_eq!(logsumexp(&[f64::NEG_INFINITY, f64::NEG_INFINITY]), f64::NEG_INFINITY);
    assert!((logsumexp(&[0.0, 0.0]) - 2f64.ln()).abs() < 1e-15);
    assert!(logsumexp(&[1.0, f64::NAN]).is_nan());
    assert_eq!(argmax(&[1.0, 3.0, 3.0]), 1);
    assert_eq!(argmax(&[1.0, f64::NAN, 5.0]), 1);
}

/// A model choosing between two alphas, documents learned without a prediction scored on
/// the schedule, with two classes that have documents (so every document learned next
/// counts in the evidence).
fn choosing_model() -> NaiveBayes {
    let mut m = NaiveBayes::new(Kind::Multinomial { mu: None }, Prior::Mle, false, false, None, 4);
    let candidates = vec![(0.1, None), (1.0, None)];
    m.choose_online(AutoSmoothing::checked(candidates, 1.0, true).unwrap());
    let mut a = doc(&m, &[("a", 1.0)]);
    let c = m.learn(&mut a, None, 1.0, 1.0, 1.0).unwrap();
    assert_eq!(c, 0);
    let mut b = doc(&m, &[("b", 1.0)]);
    m.learn(&mut b, None, 1.0, 1.0, 1.0).unwrap();
    assert_eq!(
        m.auto.as_ref().unwrap().scored,
        0,
        "the first document of each class does not count"
    );
    m
}

/// Document i of the schedule tests: a few words, more of its class's.
fn scheduled_doc(m: &NaiveBayes, i: usize) -> (Doc, usize) {
    let c = i % 2;
    let own = if c == 0 { "a" } else { "b" };
    let other = format!("w{}", i % 7);
    (doc(m, &[(own, 1.0 + (i % 3) as f64), (&other, 1.0), ("the", 1.0)]), c)
}

/// The evidence `auto` holds after recording the document with its scores under the counts
/// as they are, with `weight`.
fn recorded(m: &mut NaiveBayes, d: &Doc, c: usize, weight: f64) -> AutoSmoothing {
    let mut reference = m.auto.clone().unwrap();
    let mut copy = d.clone();
    copy.scores = None;
    let jll = m.joint_log_likelihoods(&mut copy, &reference.candidates.clone());
    let scores = CandidateScores::new(m.store.version, jll, m.active(), m.n_classes());
    reference.record(&scores, c, weight);
    reference
}

/// Documents learned without a prediction: every one while the record counts fewer than
/// RAMP documents, then runs of BLOCK every PERIOD, each weighing PERIOD / BLOCK; the others
/// only counted (src/smoothing.rs).
#[test]
fn without_sampling_every_document_learned_is_scored() {
    let mut m = choosing_model();
    m.auto.as_mut().unwrap().sample = false;
    for i in 0..(crate::smoothing::RAMP as usize + 40) {
        let (d, c) = scheduled_doc(&m, i);
        assert_eq!(m.auto.as_ref().unwrap().schedule(), Some(1.0), "document {i}");
        assert!(m.wants_scores(&d, c, 1.0), "document {i}");
        let mut d = d;
        m.learn(&mut d, Some(c), 1.0, 1.0, 1.0).unwrap();
    }
}

#[test]
fn the_schedule_scores_exactly_the_documents_it_says() {
    use crate::smoothing::{BLOCK, PERIOD, RAMP};
    let mut m = choosing_model();
    let n = (RAMP + PERIOD + 2 * BLOCK) as usize;
    let mut scored = 0;
    for i in 0..n {
        let (mut d, c) = scheduled_doc(&m, i);
        let counted = m.auto.as_ref().unwrap().scored;
        assert_eq!(counted, i as u64);
        let expected = if counted < RAMP {
            Some(1.0)
        } else if (counted - RAMP) % PERIOD < BLOCK {
            Some((PERIOD / BLOCK) as f64)
        } else {
            None
        };
        assert_eq!(m.auto.as_ref().unwrap().schedule(), expected, "document {i}");
        assert_eq!(m.wants_scores(&d, c, 1.0), expected.is_some(), "document {i}");
        let reference = match expected {
            Some(factor) => recorded(&mut m, &d, c, factor),
            None => {
                let mut passed = m.auto.clone().unwrap();
                passed.pass_over();
                passed
            }
        };
        m.learn(&mut d, Some(c), 1.0, 1.0, 1.0).unwrap();
        assert_eq!(m.auto.as_ref(), Some(&reference), "document {i}");
        scored += expected.is_some() as u64;
    }
    assert_eq!(scored, RAMP + 2 * BLOCK);
}

/// A document learned right after a prediction of it is recorded, with its own weight, at
/// every point of the schedule.
#[test]
fn predicted_documents_are_always_recorded() {
    use crate::smoothing::{BLOCK, PERIOD, RAMP};
    let mut m = choosing_model();
    for i in 0..(RAMP + PERIOD + 2 * BLOCK) as usize {
        let (mut d, c) = scheduled_doc(&m, i);
        let reference = recorded(&mut m, &d, c, 1.0);
        m.remembered_scores(&mut d).unwrap();
        assert!(!m.wants_scores(&d, c, 1.0), "its scores are there already");
        m.learn(&mut d, Some(c), 1.0, 1.0, 1.0).unwrap();
        assert_eq!(m.auto.as_ref(), Some(&reference), "document {i}");
    }
}

/// A batch records what its rows learned in turn record, past the ramp too.
#[test]
fn a_batch_follows_the_schedule_of_its_rows_in_turn() {
    use crate::smoothing::{BLOCK, PERIOD, RAMP};
    let n = (RAMP + PERIOD + 2 * BLOCK) as usize;
    let mut streamed = choosing_model();
    let mut batched = choosing_model();
    let mut docs = Vec::new();
    let mut classes = Vec::new();
    for i in 0..n {
        let (mut d, c) = scheduled_doc(&streamed, i);
        let (b, _) = scheduled_doc(&batched, i);
        streamed.learn(&mut d, Some(c), 1.0, 1.0, 1.0).unwrap();
        docs.push(b);
        classes.push(c);
    }
    batched
        .learn_many_choosing(&mut docs, &classes, &[], &vec![1.0; n], 1.0, |nb, d| {
            nb.score_candidates(d);
        })
        .unwrap();
    assert_eq!(batched.auto, streamed.auto);
    assert_eq!(batched.store.class_docs(), streamed.store.class_docs());
    assert_eq!(batched.store.class_tokens(), streamed.store.class_tokens());
}
