"""RuleOptions, the one factory of a decision rule: each option moves the verdicts its name
says, is refused where it would move none, and every default is written once."""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from pathlib import Path

import pytest

from streamnb import EmailNB
from streamnb.errors import InvalidParameterError
from streamnb.filter.decision import HAM, SPAM, UNSURE, ArgmaxRule, ChiSquareRule, LogOddsRule, PosteriorRule
from streamnb.filter.rules import HAM_SCORE, LOG_ODDS_CUTOFFS, MIN_PER_CLASS, SPAM_SCORE, RuleOptions
from streamnb.models import Fusion
from streamnb.service import cli

ROOT = Path(__file__).resolve().parents[2]


def messages(n: int) -> list[tuple[bytes, str]]:
    words = {SPAM: "cheap pills offer winner", HAM: "meeting notes agenda draft"}
    return [
        (f"Subject: {i}\n\n{words[label]} {i}\n".encode(), label)
        for i, label in enumerate(SPAM if i % 2 else HAM for i in range(n))
    ]


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


@pytest.mark.parametrize(
    "options, named",
    [
        ({"spam_cutoff": 0.5}, "spam_log_odds"),
        ({"ham_cutoff": 0.5}, "ham_log_odds"),
        ({"rule": "chi2", "spam_log_odds": 3.0}, "spam_log_odds"),
        ({"rule": "posterior", "caution": 1.0}, "caution"),
        ({"rule": "argmax", "spam_cutoff": 0.5}, "spam_cutoff"),
        ({"rule": "bayes"}, "logodds, chi2"),
    ],
)
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
            args = parser.parse_args(
                [
                    "classify",
                    "m.snb",
                    "--rule",
                    rule,
                    "--min-per-class",
                    "1",
                    "--ham-cutoff",
                    "0",
                    "--spam-cutoff",
                    repr(cutoff),
                ]
            )
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
        places = [path.relative_to(ROOT).as_posix() for path, text in code.items() for _ in re.finditer(pattern, text)]
        assert len(places) == 1, (name, places)
    # and no parameter or command option writes a cutoff or min_per_class again as a number
    # (ArgmaxRule's 1/2 is what that rule is, not a default)
    parameter = (
        r"\b(ham_cutoff|spam_cutoff|min_per_class|ham_log_odds|spam_log_odds|caution)\b[^=\n(]*=\s*(?!0\.5\b)-?\d"
    )
    option = r"--(ham-cutoff|spam-cutoff|min-per-class|ham-log-odds|spam-log-odds|caution)\"[^\n]*default=\s*-?\d"
    assert [
        (path.name, m.group())
        for path, text in code.items()
        for pattern in (parameter, option)
        for m in re.finditer(pattern, text)
    ] == []


def reference_cutoffs(rule: LogOddsRule, n_spam: float, n_ham: float) -> tuple[float, float]:
    """The Python formulas the core's (src/rule.rs) replaced."""
    t = rule.spam_log_odds + (rule.caution * 100.0 / n_ham if n_ham > 0 else math.inf)
    h = rule.ham_log_odds - (rule.caution * 100.0 / n_spam if n_spam > 0 else math.inf)
    return h, t


def reference_score(z: float, h: float, t: float, low: float = HAM_SCORE, high: float = SPAM_SCORE) -> float:
    if math.isnan(z) or not math.isfinite(t - h):
        return 0.5 * (low + high)
    if z >= t:
        return 1.0 if math.isinf(z) else high + (1.0 - high) * -math.expm1(-(z - t) / 10.0)
    if z < h:
        return 0.0 if math.isinf(z) else low * math.exp((z - h) / 10.0)
    return min(low + (high - low) * (z - h) / (t - h), math.nextafter(high, 0.0))


class Counts:
    def __init__(self, n_spam: float, n_ham: float) -> None:
        self.class_counts = {SPAM: n_spam, HAM: n_ham}


def test_the_cores_log_odds_verdicts_are_what_the_python_formulas_gave():
    rng = random.Random(3)
    verdicts = Counter()
    for _ in range(5000):
        rule = LogOddsRule(*rng.choice([LOG_ODDS_CUTOFFS, Fusion.log_odds_cutoffs, (-1.0, -1.0, 0.0)]))
        n_spam, n_ham = (rng.choice([0.0, 1.0, 7.5, 300.0, 1e5]) for _ in range(2))
        z = rng.choice([rng.uniform(-200, 200), rng.uniform(-5, 20), 3.0, -2.0, math.inf, -math.inf, math.nan])
        h, t = rule.cutoffs(Counts(n_spam, n_ham))
        assert (h, t) == reference_cutoffs(rule, n_spam, n_ham)
        label, score = rule.judge(Counts(n_spam, n_ham), {}, z, 0.5, SPAM, HAM)
        expected = reference_score(z, h, t)
        assert score == expected, (z, h, t)
        # the verdict decided on z is the one the score-based rule gave
        assert label == (SPAM if expected >= SPAM_SCORE else HAM if expected < HAM_SCORE else UNSURE), (z, h, t)
        verdicts[label] += 1
    assert min(verdicts.values()) > 500, verdicts
