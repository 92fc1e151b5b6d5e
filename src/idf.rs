//! EmailNB's scoring of a document: its values reweighted by the IDF of the model's counts,
//! field by field (the formulas are in `weighting`; this reads N and D_f from the model).

use crate::doc::{Doc, UNKNOWN};
use crate::mail::features::EmailFeatures;
use crate::nb::NaiveBayes;
use crate::weighting::{idf, FieldMasses};

/// EmailNB's scoring weights of a document (see `crate::weighting`): per feature,
/// s_f = m_F * w_f * idf_f / sum_{g in F} w_g * idf_g with idf_f = ln((1 + N) / (1 + D_f)) + offset,
/// N = sum_c N_c the messages learned and D_f = sum_c D_cf those containing f (true
/// counts, 0 for a feature not in the vocabulary). The field of a feature comes from its
/// name (`features.field`), so the model needs feature names (no hashing).
pub fn idf_values(
    nb: &NaiveBayes,
    features: &EmailFeatures,
    masses: &FieldMasses,
    offset: f64,
    doc: &mut Doc,
) -> Vec<f64> {
    nb.features.resolve(doc);
    let k = nb.n_classes();
    let n: f64 = (0..k).map(|c| nb.store.true_class_docs(c)).sum();
    let known: Vec<usize> = (0..doc.len()).filter(|&i| doc.ids[i] != UNKNOWN).collect();
    let ids: Vec<u32> = known.iter().map(|&i| doc.ids[i]).collect();
    let gathered = nb.gather_docs(&ids);
    let mut doc_freq = vec![0.0; doc.len()];
    for (row, &i) in gathered.chunks_exact(k.max(1)).zip(&known) {
        doc_freq[i] = row.iter().sum();
    }
    let vocabulary = nb.features.vocabulary();
    let mut fields = Vec::with_capacity(doc.len());
    let mut values = Vec::with_capacity(doc.len());
    for (i, &d) in doc_freq.iter().enumerate() {
        let key = doc
            .key(i)
            .or_else(|| vocabulary.and_then(|v| v.token(doc.ids[i])))
            .unwrap_or_default();
        fields.push(features.field(key));
        values.push(doc.values[i] * idf(n, d, offset));
    }
    masses.scale(&fields, &mut values);
    values
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mail::features::Field;
    use crate::nb::tests::doc;
    use crate::nb::{Kind, Prior};

    /// Three messages learned (two spam, one ham); "cheap" in two of them, "subject:win" in
    /// one, "never" in none. Body mass 2, subject mass 1.
    #[test]
    fn idf_values_match_a_hand_computation() {
        let mut m = NaiveBayes::new(Kind::Multinomial { mu: None }, Prior::Mle, false, false, None, 4);
        let learned: [&[(&str, f64)]; 3] = [
            &[("cheap", 1.0), ("subject:win", 1.0)],
            &[("cheap", 1.0), ("pills", 1.0)],
            &[("hello", 1.0)],
        ];
        let mut class = None;
        for (row, features) in learned.iter().enumerate() {
            let mut d = doc(&m, features);
            let c = m
                .learn(&mut d, if row < 2 { class } else { None }, 1.0, 1.0, 1.0)
                .unwrap();
            class = class.or(Some(c));
        }
        let mut masses = [3.0; Field::COUNT];
        masses[Field::Body as usize] = 2.0;
        masses[Field::Subject as usize] = 1.0;
        let masses = FieldMasses(masses);
        let mut d = doc(&m, &[("cheap", 1.0), ("never", 0.5), ("subject:win", 2.0)]);
        let values = idf_values(&m, &EmailFeatures::default(), &masses, 0.5, &mut d);
        // N = 3: idf(cheap) = ln(4/3) + 0.5, idf(never) = ln 4 + 0.5, idf(subject:win) = ln(4/2) + 0.5
        let cheap = (4f64 / 3.0).ln() + 0.5;
        let never = 0.5 * (4f64.ln() + 0.5);
        let body = cheap + never;
        let expected = |key: &[u8]| match key {
            b"cheap" => 2.0 * cheap / body,
            b"never" => 2.0 * never / body,
            b"subject:win" => 1.0,
            _ => unreachable!(),
        };
        assert_eq!(values.len(), 3);
        for (i, v) in values.iter().enumerate() {
            let key = d.key(i).or_else(|| m.features.vocabulary()?.token(d.ids[i])).unwrap();
            assert!((v - expected(key)).abs() < 1e-12, "{values:?} at {i}");
            if key == b"cheap" {
                // by hand: ln(4/3) + 0.5 = 0.787682, 0.5 * (ln 4 + 0.5) = 0.943147,
                // 2 * 0.787682 / 1.730829 = 0.910179
                assert!((v - 0.910_179).abs() < 1e-6, "{values:?}");
            }
        }
    }
}
