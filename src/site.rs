//! The site model beside each user's (`streamnb serve --site`): a check of user u blends the
//! two models' log-odds, z = (1 - l) z_site + l z_u with l = n / (n + K), n the messages of
//! the class u's model has learned fewest of and K the lessons at which u's model weighs as
//! much as the site's (streamnb/service/site.py says which model answers when).

use crate::evidence::strongest;

/// What one model brings to a blend: its log-odds of the message and its class counts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Side {
    pub log_odds: f64,
    pub spam: f64,
    pub ham: f64,
}

/// A blended verdict's inputs: l, the blended log-odds, and the class counts of the model the
/// blend reads as ((1 - l) N_site + l N_u of each class).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Blend {
    pub share: f64,
    pub log_odds: f64,
    pub spam: f64,
    pub ham: f64,
}

/// The messages of the class a model has learned fewest of (0 unless it knows both).
fn rarer(spam: f64, ham: f64) -> f64 {
    spam.min(ham).max(0.0)
}

/// l, the weight of the user's model: 1 when the site model knows fewer than two classes,
/// else n / (n + k) (0 when the user's model knows fewer than two).
pub fn user_share(user_spam: f64, user_ham: f64, site_spam: f64, site_ham: f64, k: f64) -> f64 {
    if rarer(site_spam, site_ham) <= 0.0 {
        return 1.0;
    }
    let n = rarer(user_spam, user_ham);
    n / (n + k)
}

/// The blend of the site model's and the user's log-odds and counts, weighed by `user_share`.
pub fn blend(site: Side, user: Side, k: f64) -> Blend {
    let share = user_share(user.spam, user.ham, site.spam, site.ham, k);
    let mix = |a: f64, b: f64| (1.0 - share) * a + share * b;
    Blend {
        share,
        log_odds: mix(site.log_odds, user.log_odds),
        spam: mix(site.spam, user.spam),
        ham: mix(site.ham, user.ham),
    }
}

/// The `top` strongest clues of both models, each weight times its model's share ((1 - l)
/// for the site's, l for the user's; a feature both name adds up): (feature, weight) with
/// features numbered 0..n_features by the caller, largest |weight| first, ties in feature
/// order, weights of 0 left out.
pub fn blend_clues(
    n_features: usize,
    site: &[(usize, f64)],
    user: &[(usize, f64)],
    share: f64,
    top: usize,
) -> Vec<(usize, f64)> {
    let mut terms = vec![0.0; 2 * n_features]; // rows (weight, 0): strongest reads row[0] - row[1]
    for (clues, part) in [(site, 1.0 - share), (user, share)] {
        for &(feature, weight) in clues {
            if let Some(slot) = terms.get_mut(2 * feature) {
                *slot += part * weight;
            }
        }
    }
    strongest(&terms, 2, 0, 1, top)
}

#[cfg(test)]
mod tests {
    use super::{blend, blend_clues, user_share, Blend, Side};

    #[test]
    fn the_share_grows_with_the_rarer_class_and_is_one_without_a_site() {
        assert_eq!(user_share(300.0, 2000.0, 9e3, 8e3, 300.0), 0.5);
        assert_eq!(user_share(0.0, 0.0, 9e3, 8e3, 300.0), 0.0);
        assert_eq!(user_share(500.0, 0.0, 9e3, 8e3, 300.0), 0.0); // spam alone: the site's verdicts
        assert_eq!(user_share(5.0, 5.0, 0.0, 0.0, 300.0), 1.0);
        assert_eq!(user_share(5.0, 5.0, 10.0, 0.0, 300.0), 1.0);
    }

    #[test]
    fn the_blend_weighs_log_odds_and_counts_alike() {
        let site = Side {
            log_odds: 4.0,
            spam: 900.0,
            ham: 1000.0,
        };
        let user = Side {
            log_odds: -2.0,
            spam: 100.0,
            ham: 300.0,
        };
        // l = 100 / (100 + 300) = 0.25
        assert_eq!(
            blend(site, user, 300.0),
            Blend {
                share: 0.25,
                log_odds: 2.5,
                spam: 700.0,
                ham: 825.0
            }
        );
    }

    #[test]
    fn clues_add_up_by_share_and_the_strongest_come_first() {
        let site = [(0, 2.0), (1, -1.0)];
        let user = [(1, -3.0), (2, 0.5), (3, 0.0)];
        // weights: 0 -> 1.5, 1 -> -0.75 - 0.75 = -1.5, 2 -> 0.125, 3 -> 0 (left out)
        assert_eq!(
            blend_clues(4, &site, &user, 0.25, 10),
            vec![(0, 1.5), (1, -1.5), (2, 0.125)]
        );
        assert_eq!(blend_clues(4, &site, &user, 0.25, 1), vec![(0, 1.5)]);
        assert!(blend_clues(4, &site, &user, 0.25, 0).is_empty());
        assert_eq!(blend_clues(1, &[(5, 1.0)], &[], 0.5, 3), vec![]); // a feature out of range is ignored
    }
}
