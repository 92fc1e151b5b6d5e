//! The clues of a verdict: of a document's score split by feature (a model's
//! `contributions`: terms per feature and class), the features that pushed the log-odds of
//! one class against another most.

/// (index among the split features, weight) of the `top` features whose weight
/// terms[i][positive] - terms[i][negative] is largest in absolute value, largest first;
/// ties keep the document's order; weights of exactly 0 are left out. `terms` holds one row
/// of `classes` values per feature.
pub fn strongest(terms: &[f64], classes: usize, positive: usize, negative: usize, top: usize) -> Vec<(usize, f64)> {
    let mut weights: Vec<(usize, f64)> = terms
        .chunks_exact(classes.max(1))
        .map(|row| row[positive] - row[negative])
        .enumerate()
        .filter(|&(_, w)| w != 0.0)
        .collect();
    // one total order: the larger |weight| first, then the earlier feature
    let order = |a: &(usize, f64), b: &(usize, f64)| b.1.abs().total_cmp(&a.1.abs()).then(a.0.cmp(&b.0));
    if weights.len() > top {
        if top == 0 {
            return Vec::new();
        }
        weights.select_nth_unstable_by(top - 1, order);
        weights.truncate(top);
    }
    weights.sort_unstable_by(order);
    weights
}

#[cfg(test)]
mod tests {
    use super::strongest;

    #[test]
    fn the_largest_in_absolute_value_first_ties_in_order_zeros_left_out() {
        // rows (positive, negative): weights 1, -3, 0, 3, 0.5, -1
        let terms = [2.0, 1.0, 0.0, 3.0, 1.0, 1.0, 4.0, 1.0, 0.5, 0.0, 0.0, 1.0];
        assert_eq!(
            strongest(&terms, 2, 0, 1, 10),
            vec![(1, -3.0), (3, 3.0), (0, 1.0), (5, -1.0), (4, 0.5)]
        );
        assert_eq!(strongest(&terms, 2, 0, 1, 3), vec![(1, -3.0), (3, 3.0), (0, 1.0)]);
        assert_eq!(strongest(&terms, 2, 1, 0, 1), vec![(1, 3.0)]);
        assert!(strongest(&terms, 2, 0, 1, 0).is_empty());
        assert!(strongest(&[], 2, 0, 1, 5).is_empty());
    }
}
