//! The naive Bayes core (vocabulary, count store, kernels) under any sequence of operations:
//! no panic; every prediction of a model that knows some class is a distribution (no NaN,
//! log-probabilities <= 0 that sum to 1); a document learned and unlearned right away gives
//! the predictions back while every weight so far is moderate and nothing was forgotten or
//! pruned (a decayed count 1e9 times smaller than a document's is rounding noise to the
//! store, DESIGN's ROUNDING_TOLERANCE, and may leave V when that document is unlearned).
//!
//! `cargo +nightly fuzz run core -- -max_len=256 -runs=1000000` from the repository root.
//! Byte 0 picks the model (kind, hashed or exact features, dense or sparse rows, unseen
//! words scored or not); every further 4 bytes are one operation on up to 3 classes.
#![no_main]

use _core::doc::Doc;
use _core::nb::{logsumexp, Kind, NaiveBayes, Prior};
use libfuzzer_sys::fuzz_target;

const WORDS: [&[u8]; 8] = [
    b"a",
    b"b",
    b"cheap",
    b"",
    b"\xff\xfe",
    b"meeting",
    b"x y",
    b"\xc3\xa9t\xc3\xa9",
];
/// Weights: the first four moderate, then extremes (tiny, huge, 2^53 apart from 1).
const WEIGHTS: [f64; 8] = [1.0, 0.5, 2.0, 0.3, 1e-3, 1e3, 7.0, 1e17];
const ALPHA: f64 = 0.5;

fn doc(model: &NaiveBayes, words: &[u8]) -> Doc {
    let mut encoder = model.encoder(words.len(), 64);
    for &w in words {
        encoder.add(WORDS[(w & 7) as usize], 1.0 + f64::from(w >> 3 & 3));
    }
    encoder.finish()
}

fn predictions(model: &mut NaiveBayes, probe: &[u8]) -> Option<Vec<f64>> {
    if model.n_classes() == 0 {
        return None;
    }
    let mut d = doc(model, probe);
    let smoothing = model.smoothing(Some(ALPHA))?;
    let (active, log_proba) = model.log_posterior(&mut d, smoothing, true);
    if active.is_empty() {
        return None;
    }
    for &p in &log_proba {
        assert!(!p.is_nan() && p <= 1e-9, "log P = {p} in {log_proba:?}");
    }
    let total = logsumexp(&log_proba);
    assert!(total.abs() <= 1e-9, "log-probabilities sum to {total}: {log_proba:?}");
    Some(log_proba)
}

fuzz_target!(|data: &[u8]| {
    let Some((&setup, ops)) = data.split_first() else {
        return;
    };
    let kind = match setup % 4 {
        0 => Kind::Multinomial { mu: None },
        1 => Kind::Multinomial { mu: Some(2.0) },
        2 => Kind::Bernoulli { binarize: 0.0 },
        _ => Kind::Complement { norm: setup & 4 != 0 },
    };
    let n_buckets = (setup & 8 != 0).then_some(16);
    let dense_max_classes = if setup & 32 != 0 { 1 } else { 4 };
    let mut model = NaiveBayes::new(kind, Prior::Mle, setup & 16 != 0, false, n_buckets, dense_max_classes);
    let probe: &[u8] = &[0, 2, 5, 9];
    let mut moderate = true; // moderate weights, no decay or pruning so far (restoration is checked)
    for op in ops.chunks(4) {
        let (code, words) = (op[0], &op[1..]);
        let weight = WEIGHTS[(code >> 3 & 7) as usize];
        let class = (code >> 6) as usize % 3;
        let known = (class < model.n_classes()).then_some(class);
        match code & 7 {
            0..=2 => {
                let before = predictions(&mut model, probe);
                let mut d = doc(&model, words);
                let Ok(c) = model.learn(&mut d, known, 1.0, weight, 1.0) else {
                    continue;
                };
                let restorable = moderate && weight <= 2.0 && known.is_some();
                if restorable && code & 1 == 0 {
                    let mut d = doc(&model, words);
                    model
                        .unlearn(&mut d, c, weight, None)
                        .expect("a document just learned unlearns");
                    if let (Some(a), Some(b)) = (&before, predictions(&mut model, probe)) {
                        for (x, y) in a.iter().zip(&b) {
                            assert!((x - y).abs() <= 1e-9 * (1.0 + x.abs()), "{x} vs {y}");
                        }
                    }
                    let mut d = doc(&model, words);
                    model.learn(&mut d, Some(c), 1.0, weight, 1.0).expect("it learns again");
                }
                moderate &= weight <= 2.0;
            }
            3 | 4 => {
                if let Some(c) = known {
                    let mut d = doc(&model, words);
                    let _ = model.unlearn(&mut d, c, weight, None); // refused or done, never a panic
                }
            }
            5 => {
                model.advance_clock(1, 0.5 + f64::from(words.first().copied().unwrap_or(0)) / 512.0);
                moderate = false;
            }
            6 => {
                let d = doc(&model, words);
                let ids: Vec<u32> = d.ids.iter().copied().filter(|&id| id != _core::doc::UNKNOWN).collect();
                model.drop_features(&ids);
                moderate = false;
            }
            _ => {
                model.rescale();
                moderate = false;
            }
        }
        predictions(&mut model, probe);
        predictions(&mut model, words);
    }
});
