//! The spam filter's weights (`streamnb.features.weighting.EmailWeights`, `streamnb.models.email.EmailNB`):
//! every formula of the field-mass weighting and of EmailNB's scoring IDF, once.
//!
//! - Learning weights, from the message alone: `w_f = q(m_F * log(1 + x_f) / sum_{g in F} log(1 + x_g))`,
//!   x_f the email tokenizer's count of feature f, F its field (`EmailFeatures::field`), m_F
//!   the field's mass and q the rounding to a multiple of 2^-16 (`quantise`) — `FieldMasses::weigh`.
//! - Scoring weights: `s_f = m_F * w_f * idf_f / sum_{g in F} w_g * idf_g`, with
//!   `idf_f = ln((1 + N) / (1 + D_f)) + k` (`idf`, k EmailNB's `idf_offset`), N the messages
//!   learned and D_f those containing f, from the model's counts as they stand —
//!   `FieldMasses::scale` on `w * idf`.
//!
//! Sums run over the features in the order given (first appearance in the message), as the
//! Python implementation summed its dicts, so the learned weights are the same to the bit.

use crate::mail::features::Field;

/// Weights are multiples of 2^-QUANTUM_BITS: sums and differences of such numbers are exact
/// in float64 (below 2^(53 - QUANTUM_BITS) in total), so learning a message and unlearning it
/// restores the counts bit for bit, and a merge equals one model trained on both streams.
pub const QUANTUM_BITS: i32 = 16;
const QUANTUM: f64 = (1u64 << QUANTUM_BITS) as f64;

/// A weight rounded to the nearest multiple of 2^-16 (ties to even, as Python's `round`),
/// at least one step.
#[inline]
pub fn quantise(weight: f64) -> f64 {
    (weight * QUANTUM).round_ties_even().max(1.0) / QUANTUM
}

/// The largest IDF offset: beyond it every feature weighs about the same (what scoring
/// without the IDF does), and near float64's limit `w * idf` would overflow.
pub const MAX_IDF_OFFSET: f64 = 1e6;

/// EmailNB's scoring factor: idf_f = ln((1 + N) / (1 + D_f)) + offset, computed as
/// (ln(1 + N) + offset) - ln(1 + D_f). `offset` is what a feature in every message weighs
/// (EmailNB's `idf_offset`: 1 in scikit-learn's smoothed idf, 0.03 by default).
#[inline]
pub fn idf(n_docs: f64, doc_freq: f64, offset: f64) -> f64 {
    (n_docs.ln_1p() + offset) - doc_freq.ln_1p()
}

/// The mass each field of a message carries, indexed by `Field as usize`.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldMasses(pub [f64; Field::COUNT]);

impl FieldMasses {
    /// `values` scaled so that each field's positive values sum to its mass:
    /// v_f * (m_F / sum_{g in F, v_g > 0} v_g). Values that are not > 0 become 0 (left out).
    pub fn scale(&self, fields: &[Field], values: &mut [f64]) {
        let mut totals = [0.0f64; Field::COUNT];
        for (&field, &v) in fields.iter().zip(values.iter()) {
            if v > 0.0 {
                totals[field as usize] += v;
            }
        }
        let mut factor = [0.0f64; Field::COUNT];
        for (i, f) in factor.iter_mut().enumerate() {
            *f = self.0[i] / totals[i];
        }
        for (&field, v) in fields.iter().zip(values.iter_mut()) {
            *v = if *v > 0.0 { *v * factor[field as usize] } else { 0.0 };
        }
    }

    /// The learning weights of counts (in place): log(1 + x) scaled to the field masses, then
    /// quantised; counts that are not > 0 become 0 (left out).
    pub fn weigh(&self, fields: &[Field], counts: &mut [f64]) {
        for x in counts.iter_mut() {
            *x = if *x > 0.0 { x.ln_1p() } else { 0.0 };
        }
        self.scale(fields, counts);
        for x in counts.iter_mut() {
            if *x > 0.0 {
                *x = quantise(*x);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masses() -> FieldMasses {
        let mut m = [3.0; Field::COUNT];
        m[Field::Body as usize] = 2.0;
        m[Field::Subject as usize] = 1.0;
        FieldMasses(m)
    }

    #[test]
    fn each_field_carries_its_mass() {
        // the docstring example of EmailWeights: "Subject: hi\n\nhi hi there"
        let fields = [Field::Body, Field::Body, Field::Subject];
        let mut w = [2.0, 1.0, 1.0];
        masses().weigh(&fields, &mut w);
        assert_eq!(w[2], 1.0);
        assert!((w[0] - 2.0 * 3f64.ln() / (3f64.ln() + 2f64.ln())).abs() < 1.0 / QUANTUM);
        assert!((w[0] + w[1] - 2.0).abs() <= 1.0 / QUANTUM); // to within the rounding
        assert_eq!((w[0] * QUANTUM).fract(), 0.0);
    }

    #[test]
    fn non_positive_values_are_left_out() {
        let fields = [Field::Body, Field::Body, Field::Url];
        let mut v = [0.0, 4.0, -1.0];
        masses().scale(&fields, &mut v);
        assert_eq!(v, [0.0, 2.0, 0.0]);
    }

    #[test]
    fn quantise_rounds_ties_to_even_and_keeps_one_step() {
        assert_eq!(quantise(0.0), 1.0 / QUANTUM);
        assert_eq!(quantise(2.5 / QUANTUM), 2.0 / QUANTUM);
        assert_eq!(quantise(3.5 / QUANTUM), 4.0 / QUANTUM);
    }

    #[test]
    fn idf_of_a_feature_in_every_message_is_the_offset() {
        assert_eq!(idf(10.0, 10.0, 1.0), 1.0);
        assert!((idf(10.0, 10.0, 0.03) - 0.03).abs() < 1e-15);
        assert!((idf(10.0, 0.0, 0.03) - (11f64.ln() + 0.03)).abs() < 1e-15);
    }
}
