"""``streamnb serve``'s decision rule: one options object in the settings, one factory
(``Settings.rule_of``) for every model's rule, the threshold spamd shows read off that rule."""

from __future__ import annotations

import dataclasses
import math

import pytest

from streamnb import EmailNB
from streamnb.filter.decision import LogOddsRule, PosteriorRule, RuleOptions, Verdict
from streamnb.filter.rules import SPAM_SCORE
from streamnb.models import Fusion
from streamnb.service import cli
from streamnb.service.cli_common import CommandError
from streamnb.service.cli_serve import serve_settings
from streamnb.service.replies import score_fields, unscored_verdict
from streamnb.service.settings import Settings


def settings_of(tmp_path, *options: str) -> Settings:
    return serve_settings(cli.build_parser().parse_args(["serve", "--models", str(tmp_path), *options]))


def test_the_settings_hold_the_rule_once_as_options(tmp_path):
    assert [f.name for f in dataclasses.fields(Settings) if "rule" in f.name or "cutoff" in f.name] == ["rule"]
    settings = settings_of(tmp_path, "--spam-log-odds", "7", "--min-per-class", "2")
    assert settings.rule == RuleOptions(spam_log_odds=7.0, min_per_class=2.0) and settings.min_per_class == 2.0
    fusion, email = settings.rule_of(Fusion()), settings.rule_of(EmailNB())
    assert isinstance(fusion, LogOddsRule) and isinstance(email, LogOddsRule)
    assert (fusion.spam_log_odds, email.spam_log_odds) == (7.0, 7.0)  # the option, for every model
    assert fusion.ham_log_odds == Fusion.log_odds_cutoffs[0]  # the rest: each model's own
    assert email.ham_log_odds == LogOddsRule().ham_log_odds
    assert settings_of(tmp_path).rule_of(EmailNB()).spam_log_odds == LogOddsRule().spam_log_odds


def test_spamds_threshold_is_the_rules_spam_cutoff_on_the_score(tmp_path):
    verdict = Verdict("spam", 0.95, 0.99, [], 12.0)
    assert score_fields(verdict, settings_of(tmp_path).rule_of(Fusion())) == ("True", "9.5", f"{10 * SPAM_SCORE:.1f}")
    posterior = settings_of(tmp_path, "--rule", "posterior", "--spam-cutoff", "0.7", "--no-site").rule_of(Fusion())
    assert isinstance(posterior, PosteriorRule) and score_fields(verdict, posterior)[2] == "7.0"
    unscored = unscored_verdict(posterior)
    assert unscored.label == "unsure" and unscored.score == pytest.approx((posterior.ham_cutoff + 0.7) / 2)
    assert math.isnan(unscored.log_odds)


def test_a_score_cutoff_is_refused_with_the_log_odds_rule(tmp_path):
    with pytest.raises(CommandError, match="--spam-cutoff.*--spam-log-odds"):
        settings_of(tmp_path, "--spam-cutoff", "0.8")
