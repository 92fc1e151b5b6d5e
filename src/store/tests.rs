use super::*;

fn store_with(k: usize, dense_max: usize) -> Store {
    let mut s = Store::new(dense_max, true);
    for _ in 0..k {
        s.add_class();
    }
    s
}

fn snapshot(s: &Store) -> Vec<(u32, usize, f64, f64)> {
    let mut out = Vec::new();
    for id in 0..s.rows() as u32 {
        s.for_each_cell(id, |c, t, d| out.push((id, c, t * s.scale, d * s.scale)));
    }
    out
}

#[test]
fn add_then_remove_restores_the_store_exactly() {
    for dense_max in [1, 8] {
        let mut s = store_with(2, dense_max);
        s.n_learned = 1;
        s.add(0, &[3, 7], &[2.0, 1.0], &[1.0, 1.0], 1.0);
        let before = snapshot(&s);
        s.n_learned = 2;
        s.add(1, &[7, 9], &[0.1, 0.2], &[0.1, 0.1], 0.1);
        assert_eq!(s.n_features, 3);
        let removal = s
            .prepare_removal(1, &[7, 9], &[-0.1, -0.2], &[-0.1, -0.1], -0.1)
            .unwrap();
        let gone = s.commit(removal);
        assert_eq!(gone, vec![9]);
        assert_eq!(snapshot(&s), before);
        assert_eq!(s.n_features, 2);
        assert_eq!(s.class_docs()[1], 0.0);
        assert_eq!(s.class_tokens()[1], 0.0);
        assert_eq!(s.histogram(0).unwrap().get(&1.0f64.to_bits()), Some(&2));
        assert!(s.histogram(1).unwrap().is_empty());
    }
}

#[test]
fn refused_removals_change_nothing() {
    let mut s = store_with(2, 8);
    s.add(0, &[1], &[2.0], &[1.0], 1.0);
    let before = snapshot(&s);
    assert_eq!(
        s.prepare_removal(0, &[1], &[-3.0], &[-1.0], -1.0).unwrap_err(),
        StoreError::NegativeCounts { class: 0, ids: vec![1] }
    );
    assert!(matches!(
        s.prepare_removal(0, &[], &[], &[], -2.0),
        Err(StoreError::TooFewDocuments { .. })
    ));
    assert!(matches!(
        s.prepare_removal(0, &[], &[], &[], -1.0),
        Err(StoreError::CellsWithoutDocuments { class: 0, left: 1 })
    ));
    assert_eq!(snapshot(&s), before);
}

#[test]
fn dense_and_sparse_layouts_agree_as_classes_grow() {
    let mut dense = store_with(0, 100);
    let mut sparse = store_with(0, 1);
    for c in 0..7 {
        for s in [&mut dense, &mut sparse] {
            s.add_class();
            s.add(
                c,
                &[c as u32, 50 + c as u32, 4000],
                &[1.0, 2.0, 3.0],
                &[1.0, 1.0, 1.0],
                1.0,
            );
        }
    }
    assert!(dense.is_dense() && !sparse.is_dense());
    assert_eq!(snapshot(&dense), snapshot(&sparse));
    let (mut t, mut d) = (vec![0.0; 7], vec![0.0; 7]);
    sparse.gather(4000, &mut t, &mut d);
    assert_eq!(t, vec![3.0; 7]);
}

#[test]
fn decay_is_a_scale_and_rescale_folds_it() {
    let mut s = store_with(1, 8);
    s.add(0, &[0, 1], &[4.0, 1e-190], &[1.0, 1e-190], 1.0);
    s.decay(0.5);
    assert_eq!(s.scale, 0.5);
    assert_eq!(snapshot(&s)[0], (0, 0, 2.0, 0.5));
    s.decay(1e-15);
    assert_eq!(s.n_features, 2);
    let gone = s.decay(1e-190); // below MIN_SCALE: folded; 1e-190 * 5e-206 underflows
    assert_eq!(s.scale, 1.0);
    assert_eq!(gone, vec![1]);
    assert_eq!(s.n_features, 1);
}

#[test]
fn dropping_features_takes_their_tokens_out() {
    let mut s = store_with(2, 8);
    s.add(0, &[0, 1], &[2.0, 3.0], &[1.0, 1.0], 1.0);
    s.add(1, &[1], &[5.0], &[1.0], 1.0);
    assert_eq!(s.drop_features(&[1, 1, 99]), vec![1]);
    assert_eq!(s.class_tokens(), &[2.0, 0.0]);
    assert_eq!(s.n_features, 1);
    assert!(s.histogram(1).unwrap().is_empty());
}

fn histogram_of(values: &[f64]) -> Histogram {
    let mut h = Histogram::default();
    for &v in values {
        move_in_histogram(&mut h, 0.0, v);
    }
    h
}

/// Moving cells where float rounding merges values (tiny + 7.0) or leaves them
/// unchanged (huge + tiny) keeps the histogram equal to counting the values again.
#[test]
fn moving_cells_in_the_histogram_equals_counting_again() {
    let pool = [0.0, 0.25, 1.0, 2.0, 3.3e-30, 5e15, 1e16];
    let deltas = [0.25, 1.0, 7.0, 1e-20, 3e-31];
    let mut state: u64 = 12345;
    let mut next = |n: usize| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) as usize) % n
    };
    for _ in 0..3000 {
        let old: Vec<f64> = (0..next(7)).map(|_| pool[next(pool.len())]).collect();
        let delta = deltas[next(deltas.len())];
        let new: Vec<f64> = old.iter().map(|v| v + delta).collect();
        let mut moved = histogram_of(&old);
        old.iter()
            .zip(&new)
            .for_each(|(&a, &b)| move_in_histogram(&mut moved, a, b));
        assert_eq!(moved, histogram_of(&new));
        new.iter()
            .zip(&old)
            .for_each(|(&a, &b)| move_in_histogram(&mut moved, a, b)); // and back
        assert_eq!(moved, histogram_of(&old));
    }
}

#[test]
fn overflow_is_refused_before_anything_changes() {
    let mut s = store_with(1, 8);
    s.add(0, &[0], &[1e299], &[1.0], 1.0);
    assert!(s.check_room(Some(0), 1e300, 1.0, 1.0).is_err());
    assert!(s.check_room(None, 1.0, 1e301, 1.0).is_err());
    assert!(s.check_room(Some(0), 1.0, 1.0, 0.5).is_ok());
}
