//! Unlearning a message exactly when other lessons came after it: by replay.
//!
//! A logistic step depends on the weights it was taken on, and AdaGrad's rates on the sums
//! of every earlier step: the lessons after a message were learned on weights that held it.
//! Undoing its own step alone (`Logistic::undo`) leaves what they did differently because of
//! it, which no undo built from the message and the model alone can take out. So for the
//! newest steps the records keep the documents (`crate::records`), and unlearning a message
//! among them
//!
//! 1. undoes the steps after it, newest first, each exactly (`Logistic::undo`, a
//!    provisional one by `undo_provisional`; a fusion's stacker step by `Fusion::undo`),
//! 2. undoes its own: the model is now the model just before it was learned, to rounding,
//! 3. takes the later steps again, in order, on the model as it now stands: fresh gradients,
//!    AdaGrad's sums and the IDF counts rebuilt by the steps themselves, each lesson's class
//!    counted again before its step (so balanced class weights weigh as they would have);
//!    a provisional lesson keeps its class and weight (what the guards decided when the
//!    message was seen) and steps again at the provisional rate. Their kept steps are
//!    replaced by the new ones, so a later unlearn undoes what was taken.
//!
//! Logistic regression is then the model that never saw the message, to rounding. A
//! fusion's stacker is replayed with it: each later lesson's stacker step is taken again on
//! logistic regression's log-odds of the message as the replay gives them (read before its
//! step, as a lesson reads them) and naive Bayes' input as it was kept. Naive Bayes unlearns
//! exactly by its counts, but its share of a later stacker input is not recomputed (its
//! counts then held the message): that, and the fusion's account of unlabelled mail
//! (`crate::feedback`, whose tallies judged the later lessons on the log-odds of their time),
//! is what a replayed fusion keeps of the message (measured on the spam filter:
//! benchmarks/bench_corrections.py). The step counters stay as an undo leaves them.
//!
//! Everything is checked before anything changes (every document decodes, every step is one
//! this model could have taken, every class is known and holds the weight taken out), so an
//! error leaves the model as it was.

use crate::feedback::PROVISIONAL_RATE;
use crate::fusion::Fusion;
use crate::logistic::{balanced_omega, Logistic, Step};
use crate::records::{Entry, Fingerprint, Records, Stacked};

/// How a class weighs in the gradient, times the sample weight.
pub enum ClassWeighing {
    /// A weight per class (1 for every class: equal weights).
    Fixed(Vec<f64>),
    /// N / (K N_c) over the documents learned so far, this one included.
    Balanced,
}

impl ClassWeighing {
    /// omega: the sample weight times the class weight, for a document of class c whose
    /// class is counted in `class_docs` already.
    pub fn omega(&self, class_docs: &[f64], c: usize, weight: f64) -> f64 {
        match self {
            ClassWeighing::Fixed(weights) => weight * weights.get(c).copied().unwrap_or(1.0),
            ClassWeighing::Balanced => balanced_omega(class_docs, c, weight),
        }
    }
}

/// Logistic regression as the replay changes it: its weights and its documents per class.
pub struct Learner<'a> {
    pub model: &'a mut Logistic,
    pub class_docs: &'a mut [f64],
    pub weighing: ClassWeighing,
}

/// A fusion's stacker, replayed with its logistic regression.
pub struct Stacking<'a> {
    pub fusion: &'a mut Fusion,
    /// Logistic regression's classes of the fusion's class 0 and class 1 (its log-odds are
    /// those of class 1 against class 0).
    pub classes: [usize; 2],
}

/// One step taken back and taken again: its entry, and its document as kept.
struct Replayed {
    fingerprint: Fingerprint,
    entry: Entry,
    ids: Vec<u32>,
    values: Vec<f64>,
}

/// Unlearn the message `fingerprint` by replay (see the module docstring) and forget its
/// entry. The entry holds its document. Err (nothing changed) says what stands in the way.
pub fn unlearn(
    records: &mut Records,
    fingerprint: &Fingerprint,
    learner: &mut Learner<'_>,
    mut stacking: Option<Stacking<'_>>,
) -> Result<(), String> {
    let plan = plan(records, fingerprint, learner, stacking.as_ref())?;
    let (steps, stacker_steps) = (learner.model.steps, stacking.as_ref().map(|s| s.fusion.stacker.steps));
    for item in plan.iter().rev() {
        undo(item, learner, stacking.as_mut());
    }
    let mut redone = Vec::with_capacity(plan.len().saturating_sub(1));
    for item in &plan[1..] {
        redone.push((item.fingerprint, redo(item, learner, stacking.as_mut())));
    }
    learner.model.steps = steps;
    if let (Some(s), Some(n)) = (stacking.as_mut(), stacker_steps) {
        s.fusion.stacker.steps = n;
    }
    for (fingerprint, (step, stacked)) in redone {
        if let Some(entry) = records.get_mut(&fingerprint) {
            entry.step = step;
            entry.stacker = stacked;
        }
    }
    records.forget(fingerprint);
    Ok(())
}

/// The message's entry and every later one that changed the model, with their documents,
/// checked.
fn plan(
    records: &Records,
    fingerprint: &Fingerprint,
    learner: &Learner<'_>,
    stacking: Option<&Stacking<'_>>,
) -> Result<Vec<Replayed>, String> {
    let seq = records
        .position(fingerprint)
        .ok_or("this message's steps are not kept")?;
    let mut plan = Vec::new();
    let mut taken = vec![0.0; learner.class_docs.len()];
    for (k, (fp, entry)) in records.from(seq).enumerate() {
        if k > 0 && !entry.changed_the_model() {
            continue; // an observation that took no lesson: nothing to take back
        }
        let (ids, values) = records
            .document(entry)
            .ok_or(if k == 0 {
                "this message's document is not kept"
            } else {
                "a later step's document is not kept"
            })?
            .map_err(|m| format!("a kept document is damaged: {m}"))?;
        let class = entry
            .class
            .filter(|&c| c < entry.classes && entry.classes <= learner.model.n_classes() && c < taken.len())
            .ok_or("a kept step's class is unknown to the model")?;
        let step = if entry.is_lesson() {
            entry.step.clone()
        } else {
            Step {
                decay: learner.model.decay(),
                ..entry.step.clone()
            }
        };
        learner.model.check_step(&step)?;
        if entry.is_lesson() {
            taken[class] += entry.weight;
            if learner.class_docs[class] < taken[class] * (1.0 - 1e-9) {
                return Err(format!(
                    "class {class} holds {} documents' weight; the replay would take out {}",
                    learner.class_docs[class], taken[class]
                ));
            }
        }
        if let Some(stacked) = &entry.stacker {
            if stacking.is_none() || !(stacked.inputs.iter().all(|v| v.is_finite()) && stacked.g.is_finite()) {
                return Err("a kept stacker step must be finite and belong to a fusion".into());
            }
        }
        plan.push(Replayed {
            fingerprint: *fp,
            entry: entry.clone(),
            ids,
            values,
        });
    }
    Ok(plan)
}

/// Take one kept step back exactly.
fn undo(item: &Replayed, learner: &mut Learner<'_>, stacking: Option<&mut Stacking<'_>>) {
    let Replayed { entry, ids, values, .. } = item;
    let class = entry.class.unwrap_or(0);
    if let (Some(stacked), Some(s)) = (&entry.stacker, stacking) {
        // checked: finite, and the stacker's steps have one gradient and no decay
        let _ = s
            .fusion
            .undo(stacked.inputs, &stacked_step(stacked), class == s.classes[1]);
    }
    if entry.is_lesson() {
        learner.model.undo(ids, values, &entry.step, entry.weight);
        learner.class_docs[class] = (learner.class_docs[class] - entry.weight).max(0.0);
    } else {
        learner
            .model
            .undo_provisional(ids, values, &entry.step, PROVISIONAL_RATE);
    }
}

/// Take a kept step again on the model as it stands; returns the new step (and stacker step).
fn redo(item: &Replayed, learner: &mut Learner<'_>, stacking: Option<&mut Stacking<'_>>) -> (Step, Option<Stacked>) {
    let Replayed { entry, ids, values, .. } = item;
    let class = entry.class.unwrap_or(0);
    if !entry.is_lesson() {
        let omega = learner.weighing.omega(learner.class_docs, class, entry.weight);
        let step = learner
            .model
            .provisional_within(ids, values, class, omega, PROVISIONAL_RATE, entry.classes);
        return (step, None);
    }
    // the stacker reads logistic regression's log-odds before its step, as a lesson does
    let z_lr = match (&entry.stacker, &stacking) {
        (Some(_), Some(s)) => Some(log_odds(learner.model, ids, values, s.classes)),
        _ => None,
    };
    learner.class_docs[class] += entry.weight;
    let omega = learner.weighing.omega(learner.class_docs, class, entry.weight);
    let classes = entry.classes.min(learner.model.n_classes());
    let step = learner
        .model
        .counted_step(ids, values, class, omega, None, entry.weight, classes);
    let stacked = match (&entry.stacker, stacking, z_lr) {
        (Some(kept), Some(s), Some(z_lr)) => {
            let inputs = [kept.inputs[0], if z_lr.is_nan() { 0.0 } else { z_lr }];
            let positive = class == s.classes[1];
            let step = s.fusion.step_on(inputs, positive, entry.weight);
            Some(Stacked {
                inputs,
                g: step.g.first().copied().unwrap_or(0.0),
            })
        }
        _ => None,
    };
    (step, stacked)
}

/// The stacker's `Step` of a kept stacker step (one gradient, no decay).
pub fn stacked_step(stacked: &Stacked) -> Step {
    Step {
        g: vec![stacked.g],
        decay: 1.0,
    }
}

/// Logistic regression's log P(class 1 | x) - log P(class 0 | x) (`classes`: its classes of
/// the two), 0 while it does not know both.
pub fn log_odds(model: &Logistic, ids: &[u32], values: &[f64], classes: [usize; 2]) -> f64 {
    if model.n_classes() <= classes[0].max(classes[1]) {
        return 0.0;
    }
    let lp = model.log_posterior(ids, values);
    lp[classes[1]] - lp[classes[0]]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logistic::{Schedule, Settings};

    fn model(schedule: Schedule, l2: f64, idf_power: f64, margin: Option<f64>) -> Logistic {
        let settings = Settings {
            rate: 0.4,
            schedule,
            l2,
            margin,
            sublinear: true,
            idf_power,
            normalize: true,
        };
        crate::logistic::tests::with_classes(settings, 2, 12)
    }

    /// A stream of documents over 12 features: (ids, values, class, weight).
    fn stream(n: u32) -> Vec<(Vec<u32>, Vec<f64>, usize, f64)> {
        (0..n)
            .map(|i| {
                let ids = vec![i % 12, (i * 5 + 1) % 12, (i * 7 + 3) % 12];
                let mut unique = ids.clone();
                unique.sort_unstable();
                unique.dedup();
                let values = unique.iter().map(|&id| 1.0 + f64::from(id % 3)).collect();
                (unique, values, (i % 3 % 2) as usize, 1.0 + f64::from(i % 2) * 0.5)
            })
            .collect()
    }

    fn fingerprint(i: u32) -> Fingerprint {
        let mut f = [0; 16];
        f[..4].copy_from_slice(&i.to_le_bytes());
        f
    }

    fn learn(
        m: &mut Logistic,
        docs: &mut [f64],
        records: &mut Records,
        i: u32,
        (ids, values, c, w): &(Vec<u32>, Vec<f64>, usize, f64),
    ) {
        docs[*c] += w;
        let omega = balanced_omega(docs, *c, *w);
        let step = m.learn(ids, values, *c, omega, None, *w);
        records.keep(
            fingerprint(i),
            Entry::new(Some(*c), *w, step, 0, m.n_classes()),
            Some((ids, values)),
        );
    }

    fn scores(m: &Logistic, probes: &[(Vec<u32>, Vec<f64>, usize, f64)]) -> Vec<f64> {
        probes
            .iter()
            .map(|(ids, values, _, _)| m.scores(ids, values)[1])
            .collect()
    }

    #[test]
    fn unlearning_by_replay_gives_the_model_that_never_saw_the_message() {
        let docs = stream(60);
        for schedule in [Schedule::AdaGrad, Schedule::Constant] {
            for (l2, idf, margin) in [(0.0, 0.0, None), (0.1, 2.0, None), (0.05, 1.0, Some(0.5))] {
                for between in [1u32, 10, 40] {
                    let target = 59 - between;
                    let mut m = model(schedule, l2, idf, margin);
                    let mut counts = vec![0.0; 2];
                    let mut records = Records::new(100, 100);
                    let mut never = model(schedule, l2, idf, margin);
                    let mut never_counts = vec![0.0; 2];
                    let mut never_records = Records::new(100, 100);
                    for (i, d) in docs.iter().enumerate() {
                        learn(&mut m, &mut counts, &mut records, i as u32, d);
                        if i as u32 != target {
                            learn(&mut never, &mut never_counts, &mut never_records, i as u32, d);
                        }
                    }
                    let mut learner = Learner {
                        model: &mut m,
                        class_docs: &mut counts,
                        weighing: ClassWeighing::Balanced,
                    };
                    unlearn(&mut records, &fingerprint(target), &mut learner, None).unwrap();
                    for (a, b) in scores(&m, &docs).iter().zip(scores(&never, &docs)) {
                        assert!((a - b).abs() < 1e-12, "{schedule:?} {l2} {idf} {between}: {a} vs {b}");
                    }
                    assert_eq!(counts, never_counts);
                    // the replayed steps are kept: unlearning a later one replays again, exactly
                    let later = fingerprint(59);
                    let (a, b) = (
                        &records.get(&later).unwrap().step,
                        &never_records.get(&later).unwrap().step,
                    );
                    assert!(a.g.iter().zip(&b.g).all(|(x, y)| (x - y).abs() < 1e-12) && a.decay == b.decay);
                }
            }
        }
    }

    #[test]
    fn a_refused_replay_changes_nothing() {
        let docs = stream(20);
        let mut m = model(Schedule::AdaGrad, 0.0, 2.0, None);
        let mut counts = vec![0.0; 2];
        let mut records = Records::new(100, 5);
        for (i, d) in docs.iter().enumerate() {
            learn(&mut m, &mut counts, &mut records, i as u32, d);
        }
        let before = (scores(&m, &docs), counts.clone(), records.len());
        let mut learner = Learner {
            model: &mut m,
            class_docs: &mut counts,
            weighing: ClassWeighing::Fixed(vec![1.0, 1.0]),
        };
        // older than the window: its document is not kept
        assert!(unlearn(&mut records, &fingerprint(3), &mut learner, None)
            .unwrap_err()
            .contains("not kept"));
        // a later step the model could not have taken
        records.get_mut(&fingerprint(19)).unwrap().step.g = vec![f64::NAN];
        assert!(unlearn(&mut records, &fingerprint(17), &mut learner, None).is_err());
        assert_eq!((scores(&m, &docs), counts, records.len()), before);
    }
}
