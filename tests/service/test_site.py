"""The site blend (streamnb/service/site.py over the core's src/site.rs) against the Python
formulas it replaced, written out again here as the reference."""

from __future__ import annotations

import math
import random

import pytest

from streamnb.filter.decision import HAM, SPAM, UNSURE, Evidence, LogOddsRule, Verdict, model_posterior
from streamnb.service.site import Answer, Scored, answer, user_share


def reference_share(user: dict | None, site: dict | None, k: float) -> float:
    def known(counts: dict | None) -> float:
        return min(counts.get(SPAM, 0.0), counts.get(HAM, 0.0)) if counts else 0.0

    if known(site) <= 0:
        return 1.0
    n = known(user)
    return n / (n + k)


def reference_clues(site: list[Evidence], user: list[Evidence], share: float, k: int) -> list[Evidence]:
    weights: dict = {}
    for clues, part in ((site, 1.0 - share), (user, share)):
        for clue in clues:
            weights[clue.feature] = weights.get(clue.feature, 0.0) + part * clue.weight
    strongest = sorted(weights.items(), key=lambda item: -abs(item[1]))[:k]
    return [Evidence(feature, weight) for feature, weight in strongest if weight]


class _Counts:
    def __init__(self, class_counts: dict, label_coverage: float) -> None:
        self.class_counts = class_counts
        self.label_coverage = label_coverage


def reference_answer(
    site: Scored, user: Scored, k: float, rule: LogOddsRule, min_per_class: float, evidence_k: int
) -> tuple:
    """The blended verdict as the Python formulas gave it (the rule decided on its score then)."""
    share = reference_share(user.counts, site.counts, k)
    z = (1.0 - share) * site.verdict.log_odds + share * user.verdict.log_odds
    view = _Counts(
        {
            label: (1.0 - share) * site.counts.get(label, 0.0) + share * user.counts.get(label, 0.0)
            for label in (SPAM, HAM)
        },
        max(site.coverage, user.coverage),
    )
    probability = model_posterior(view, z, SPAM, HAM)
    h, t = rule.cutoffs(view, SPAM, HAM)
    score = rule.scaled(z, h, t)
    ready = all(n > 0 and n >= min_per_class for n in view.class_counts.values())
    label = (SPAM if score >= rule.spam_cutoff else HAM if score < rule.ham_cutoff else UNSURE) if ready else UNSURE
    return (
        share,
        z,
        label,
        score,
        probability,
        reference_clues(site.verdict.evidence, user.verdict.evidence, share, evidence_k),
    )


def scored(rng: random.Random, features: list[str]) -> Scored:
    counts = {label: float(rng.choice([0, 1, 3, 40, 250, 900, 5000])) for label in (SPAM, HAM)}
    clues = [Evidence(f, rng.choice([0.0, 0.5, -0.5, rng.uniform(-9, 9)])) for f in rng.sample(features, 5)]
    z = rng.choice([rng.uniform(-40, 40), 0.0, 3.0])
    return Scored(Verdict(UNSURE, 0.5, 0.5, clues, z), True, counts, "Fusion", rng.choice([1.0, 0.3, 5e-4]))


@pytest.mark.parametrize("seed", range(5))
def test_the_cores_blend_gives_what_the_python_formulas_gave(seed):
    rng = random.Random(seed)
    features = [f"w{i}" for i in range(12)]
    rule = LogOddsRule(-2.0, 3.0, 0.5)
    blended = 0
    for _ in range(300):
        site, user = scored(rng, features), scored(rng, features)
        k, min_per_class = rng.choice([1.0, 30.0, 300.0]), rng.choice([1.0, 10.0])
        assert user_share(user.counts, site.counts, k) == reference_share(user.counts, site.counts, k)
        got = answer(site, user, k, rule, min_per_class, 4)
        assert isinstance(got, Answer)
        share, z, label, score, probability, clues = reference_answer(site, user, k, rule, min_per_class, 4)
        if share >= 1.0 or share <= 0.0:  # one model answers alone, its verdict as it was
            assert got.verdict is (user if share >= 1.0 else site).verdict and got.share == share
            continue
        blended += 1
        assert (got.share, got.verdict.log_odds, got.verdict.label, got.verdict.score) == (share, z, label, score)
        assert got.verdict.probability == probability or math.isnan(probability)
        assert got.verdict.evidence == clues  # to the bit: the same sums in the same order
    assert blended > 50


def test_a_blend_asks_more_of_spam_only_while_both_models_labels_have_stopped():
    """The blend's label coverage is the higher of the two: labels still coming to either
    model keep the spam cutoff where it was; only when both are stale does it rise."""
    rule = LogOddsRule(-2.0, 3.0, 0.0)
    counts = {SPAM: 4000.0, HAM: 4000.0}
    labels = {}
    for site_coverage, user_coverage in ((1.0, 1.0), (1.0, 1e-5), (1e-5, 1.0), (1e-5, 1e-5)):
        site = Scored(Verdict(UNSURE, 0.5, 0.5, [], 3.5), True, counts, "Fusion", site_coverage)
        user = Scored(Verdict(UNSURE, 0.5, 0.5, [], 3.5), True, counts, "Fusion", user_coverage)
        got = answer(site, user, 4000.0, rule, 1.0, 0)
        assert 0.0 < got.share < 1.0 and got.verdict.log_odds == 3.5
        labels[site_coverage, user_coverage] = got.verdict.label
    assert labels == {(1.0, 1.0): SPAM, (1.0, 1e-5): SPAM, (1e-5, 1.0): SPAM, (1e-5, 1e-5): UNSURE}


def test_a_missing_model_leaves_the_other_to_answer():
    rng = random.Random(7)
    site, user = scored(rng, ["a", "b", "c", "d", "e"]), scored(rng, ["a", "b", "c", "d", "e"])
    rule = LogOddsRule()
    assert answer(None, None, 300.0, rule, 1.0, 3) is None
    assert answer(site, None, 300.0, rule, 1.0, 3).share == 0.0
    assert answer(None, user, 300.0, rule, 1.0, 3).share == 1.0
    assert (
        user_share(None, {SPAM: 9e3, HAM: 8e3}, 300.0) == 0.0 and user_share({SPAM: 5.0, HAM: 5.0}, None, 300.0) == 1.0
    )
