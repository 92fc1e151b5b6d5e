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


def test_the_report_says_when_labels_are_scarce_and_the_spam_cutoff_stands_higher(tmp_path):
    """A REPORT names the label coverage the rule read (a model that keeps one), and says
    when it is below the core's threshold, where the log-odds rule asks one more of spam."""
    from streamnb import _core
    from streamnb.service.replies import report_text
    from streamnb.service.settings import Settings

    settings = Settings(models=tmp_path, new_model=lambda: None)
    rule = LogOddsRule()
    counts = {"spam": 300.0, "ham": 300.0}
    texts = {}
    for coverage in (1.0, 0.3, 5e-4):
        site = Scored(Verdict("unsure", 0.5, 0.5, [], 3.5, False), True, counts, "Fusion", coverage)
        got = answer(site, None, 300.0, rule, 1.0, 0)
        assert got.coverage == coverage
        texts[coverage] = report_text(got, "alice", settings, rule)
    assert "labels:" not in texts[1.0]  # every message labelled, or a model that keeps no coverage
    assert "  labels: 30% of the recent messages came with one\r\n" in texts[0.3]
    assert (f"  labels: 0.05% of the recent messages came with one (under {100 * _core.STALE_COVERAGE:g}%: a log-odds "
            f"rule's spam cutoff stands {_core.STALE_SPAM_RAISE:g} higher)\r\n") in texts[5e-4]
    assert _core.STALE_COVERAGE == 1e-3 and _core.STALE_SPAM_RAISE == 1.0  # as the docs say
