"""RuleOptions, the one factory of a decision rule: each option moves the verdicts its name
says, is refused where it would move none, and every default is written once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from streamnb import EmailNB
from streamnb.errors import InvalidParameterError
from streamnb.filter.decision import HAM, SPAM, UNSURE, ArgmaxRule, ChiSquareRule, LogOddsRule, PosteriorRule
from streamnb.filter.rules import HAM_SCORE, LOG_ODDS_CUTOFFS, MIN_PER_CLASS, RuleOptions
from streamnb.models import Fusion
from streamnb.service import cli

ROOT = Path(__file__).resolve().parents[2]


def messages(n: int) -> list[tuple[bytes, str]]:
    words = {SPAM: "cheap pills offer winner", HAM: "meeting notes agenda draft"}
    return [(f"Subject: {i}\n\n{words[label]} {i}\n".encode(), label)
            for i, label in enumerate(SPAM if i % 2 else HAM for i in range(n))]


@pytest.fixture(scope="module")
def model() -> EmailNB:
    model = EmailNB()
    for raw, label in messages(40):
        model.learn_one(raw, label)
    return model


def test_the_factory_makes_each_rule_with_the_models_own_log_odds_cutoffs():
    options = RuleOptions()
    assert options.rule == "logodds" and options.required_per_class == MIN_PER_CLASS["logodds"]
    fusion, email = options.rule_for(Fusion), options.rule_for(EmailNB)
    assert isinstance(fusion, LogOddsRule) and isinstance(email, LogOddsRule)
    assert (fusion.ham_log_odds, fusion.spam_log_odds, fusion.caution) == Fusion.log_odds_cutoffs
    assert (email.ham_log_odds, email.spam_log_odds, email.caution) == LOG_ODDS_CUTOFFS
    assert RuleOptions(spam_log_odds=7.0).rule_for(Fusion).spam_log_odds == 7.0
    chi2 = RuleOptions("chi2", spam_cutoff=0.8).rule_for(EmailNB)
    assert isinstance(chi2, ChiSquareRule) and (chi2.ham_cutoff, chi2.spam_cutoff) == (HAM_SCORE, 0.8)
    assert isinstance(RuleOptions("posterior").rule_for(EmailNB), PosteriorRule)
    assert isinstance(RuleOptions("argmax").rule_for(EmailNB), ArgmaxRule)
    assert RuleOptions("chi2").required_per_class == MIN_PER_CLASS["chi2"] == 10
    assert RuleOptions(min_per_class=3).required_per_class == 3.0


@pytest.mark.parametrize("options, named", [
    ({"spam_cutoff": 0.5}, "spam_log_odds"), ({"ham_cutoff": 0.5}, "ham_log_odds"),
    ({"rule": "chi2", "spam_log_odds": 3.0}, "spam_log_odds"), ({"rule": "posterior", "caution": 1.0}, "caution"),
    ({"rule": "argmax", "spam_cutoff": 0.5}, "spam_cutoff"), ({"rule": "bayes"}, "logodds, chi2"),
])
def test_an_option_the_rule_would_not_move_is_refused(options, named):
    with pytest.raises(InvalidParameterError, match=named):
        RuleOptions(**options)


def message_between(model: EmailNB) -> tuple[bytes, float]:
    """A message and its log-odds, for cutoffs to be set on either side of it."""
    raw = b"Subject: mixed\n\ncheap pills meeting notes offer\n"
    log_proba = model.predict_log_proba_one(raw)
    return raw, log_proba[SPAM] - log_proba[HAM]


def test_the_log_odds_options_move_the_verdict(model):
    raw, z = message_between(model)
    parser = cli.build_parser()

    def verdict(*options: str) -> str:
        args = parser.parse_args(["classify", "m.snb", "--caution", "0", *options])
        return cli.spam_filter(model, args).classify(raw).label

    assert verdict("--spam-log-odds", f"{z - 1:g}", "--ham-log-odds", f"{z - 2:g}") == SPAM
    assert verdict("--spam-log-odds", f"{z + 1:g}", "--ham-log-odds", f"{z - 1:g}") == UNSURE
    assert verdict("--spam-log-odds", f"{z + 2:g}", "--ham-log-odds", f"{z + 1:g}") == HAM


def test_the_score_cutoffs_move_the_verdicts_of_the_rules_that_decide_on_a_score(model):
    raw, _ = message_between(model)
    parser = cli.build_parser()
    for rule in ("posterior", "chi2"):
        args = parser.parse_args(["classify", "m.snb", "--rule", rule, "--min-per-class", "1"])
        score = cli.spam_filter(model, args).classify(raw).score
        assert 0.0 < score < 1.0
        for cutoff, label in ((score, SPAM), (min(1.0, score + 1e-9), UNSURE)):
            args = parser.parse_args(["classify", "m.snb", "--rule", rule, "--min-per-class", "1", "--ham-cutoff",
                                      "0", "--spam-cutoff", repr(cutoff)])
            assert cli.spam_filter(model, args).classify(raw).label == label


def source_without_docstrings(path: Path) -> str:
    """A module's code: its comments and triple-quoted strings (docstrings) left out."""
    text = re.sub(r'"""(?:.|\n)*?"""', "", path.read_text(encoding="utf-8"))
    return re.sub(r"#[^\n]*", "", text)


# A default of the decision rules, and its pattern in code.
DEFAULTS = {
    "LogOddsRule's cutoffs (for EmailNB)": r"-5\.0,\s*16\.0,\s*8\.0",
    "the fusion's log-odds cutoffs": r"-2\.0,\s*3\.0,\s*0\.5",
    "the score's cutoffs": r"0\.20?,\s*0\.90?\b",
    "min_per_class by rule": r"\"logodds\":\s*1\.0",
}


def test_each_default_of_the_decision_rules_is_written_once():
    code = {path: source_without_docstrings(path) for path in sorted((ROOT / "streamnb").rglob("*.py"))}
    for name, pattern in DEFAULTS.items():
        places = [path.relative_to(ROOT).as_posix() for path, text in code.items()
                  for _ in re.finditer(pattern, text)]
        assert len(places) == 1, (name, places)
    # and no parameter or command option writes a cutoff or min_per_class again as a number
    # (ArgmaxRule's 1/2 is what that rule is, not a default)
    parameter = r"\b(ham_cutoff|spam_cutoff|min_per_class|ham_log_odds|spam_log_odds|caution)\b[^=\n(]*=\s*(?!0\.5\b)-?\d"
    option = r"--(ham-cutoff|spam-cutoff|min-per-class|ham-log-odds|spam-log-odds|caution)\"[^\n]*default=\s*-?\d"
    assert [(path.name, m.group()) for path, text in code.items() for pattern in (parameter, option)
            for m in re.finditer(pattern, text)] == []
