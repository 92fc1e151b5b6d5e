"""The REPORT reply names the model that gave the log-odds (issue 35: it said "naive Bayes" for the fusion)."""

from __future__ import annotations

from streamnb.filter.decision import LogOddsRule, Verdict
from streamnb.service.site import Scored, answer


def said(model: str, log_odds: float, counts: dict[str, float]) -> Scored:
    return Scored(Verdict("unsure", 0.5, 0.5, [], log_odds, False), True, counts, model)


def test_the_answer_names_the_models_it_came_from():
    rule = LogOddsRule()
    site = said("Fusion", 4.0, {"spam": 300.0, "ham": 300.0})
    assert answer(site, None, 300.0, rule, 1.0, 0).model == "Fusion"  # the site model alone
    user = said("EmailNB", -6.0, {"spam": 300.0, "ham": 300.0})
    blend = answer(site, user, 300.0, rule, 1.0, 0)
    assert 0.0 < blend.share < 1.0 and blend.model == "Fusion and EmailNB"
    same = answer(site, said("Fusion", -6.0, {"spam": 300.0, "ham": 300.0}), 300.0, rule, 1.0, 0)
    assert same.model == "Fusion"
    young_site = said("Fusion", 4.0, {"spam": 3.0})  # knows one class: the user's model answers alone
    alone = answer(young_site, user, 300.0, rule, 1.0, 0)
    assert alone.share == 1.0 and alone.model == "EmailNB"
