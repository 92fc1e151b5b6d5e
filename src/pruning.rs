//! Which features a pruning pass drops (the bounded-memory policies of the count models):
//!
//! - expiry: features not seen in the last `expire_after` learned documents;
//! - `min_count`: features whose total count over the classes is below it;
//! - the cap: if more than `max_features` features are left, the lowest totals (ties: the
//!   least recently seen, then the lowest id) down to 90% of the cap, so that the passes come
//!   rarely enough for their O(|V|) cost to stay amortised O(1) per document.
//!
//! O(|V|): the cap takes the lowest ones by selection, not by sorting.

use std::cmp::Ordering;

/// The policies of one pass (None: not applied).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Policy {
    pub expire_after: Option<u64>,
    pub min_count: Option<f64>,
    pub max_features: Option<usize>,
}

/// A feature in V: its id, total true count and last document stamp.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    pub id: u32,
    pub total: f64,
    pub last_seen: u64,
}

/// The order of the cap: lowest total first, then least recently seen, then lowest id.
fn lowest_first(a: &Candidate, b: &Candidate) -> Ordering {
    a.total
        .total_cmp(&b.total)
        .then(a.last_seen.cmp(&b.last_seen))
        .then(a.id.cmp(&b.id))
}

/// The ids a pass drops, ascending; `n_learned` is the document clock now.
pub fn select(mut left: Vec<Candidate>, policy: &Policy, n_learned: u64) -> Vec<u32> {
    let mut ids = Vec::new();
    if policy.expire_after.is_some() || policy.min_count.is_some() {
        left.retain(|c| {
            let goes = policy
                .expire_after
                .is_some_and(|after| n_learned.saturating_sub(c.last_seen) >= after)
                || policy.min_count.is_some_and(|min| c.total < min);
            if goes {
                ids.push(c.id);
            }
            !goes
        });
    }
    if let Some(cap) = policy.max_features {
        if left.len() > cap {
            let excess = left.len() - (9 * cap) / 10;
            if excess < left.len() {
                left.select_nth_unstable_by(excess, lowest_first);
            }
            ids.extend(left[..excess.min(left.len())].iter().map(|c| c.id));
        }
    }
    ids.sort_unstable();
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(id: u32, total: f64, last_seen: u64) -> Candidate {
        Candidate { id, total, last_seen }
    }

    #[test]
    fn the_cap_drops_the_lowest_totals_then_the_oldest_then_the_lowest_ids() {
        let candidates = vec![
            candidate(0, 5.0, 9),
            candidate(1, 1.0, 3),
            candidate(2, 1.0, 2), // same total, seen earlier: goes first
            candidate(3, 7.0, 1),
            candidate(4, 1.0, 2), // same total and stamp as id 2: the lower id goes first
            candidate(5, 2.0, 8),
        ];
        let policy = Policy {
            max_features: Some(5),
            ..Policy::default()
        };
        // 6 > 5: down to 9 * 5 / 10 = 4, so 2 go
        assert_eq!(select(candidates.clone(), &policy, 10), vec![2, 4]);
        let policy = Policy {
            max_features: Some(3),
            ..Policy::default()
        };
        assert_eq!(select(candidates, &policy, 10), vec![1, 2, 4, 5]); // down to 2
    }

    #[test]
    fn expiry_and_min_count_drop_before_the_cap_counts() {
        let candidates = vec![
            candidate(0, 5.0, 1),
            candidate(1, 0.5, 9),
            candidate(2, 3.0, 9),
            candidate(3, 4.0, 8),
        ];
        let policy = Policy {
            expire_after: Some(5),
            min_count: Some(1.0),
            max_features: Some(2),
        };
        // 0 expired (10 - 1 >= 5), 1 below the count; 2 and 3 left: not above the cap
        assert_eq!(select(candidates.clone(), &policy, 10), vec![0, 1]);
        assert!(select(candidates, &Policy::default(), 10).is_empty());
    }
}
