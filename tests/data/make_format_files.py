"""Write the model files of tests/data/format-v<N> (N: the format the running code writes)
and the log-probabilities they give; tests/models/test_persist.py::test_older_format_files_still_load
loads them with today's code.

Run with the code of the last commit that wrote each format: format-v1 at commit 3be5f82,
format-v2 at commit da623a9, format-v3 at commit c092e96, format-v5 at commit 0fefee6,
format-v6 at commit cc85f29 (`python tests/data/make_format_files.py`, with that commit's
streamnb importable; format-v1 was written by this script when it was
tests/data/format-v1/make.py). Format 5 adds the spam filter's default model and a logistic
regression, which keep no steps (format 6 does); format 6 a logistic regression with a
ledger, whose steps it keeps without the documents (format 7 keeps them). format-v7 was
written at commit 100dc52, the last before the models took their settings as objects
(issue 36), with a model of every setting: the models are built with the settings' flat
keywords, which the code of both sides takes (today's with a DeprecationWarning).
"""

import json
import warnings
from pathlib import Path

import streamnb
from streamnb import BernoulliNB, ComplementNB, MultinomialNB
from streamnb.features.text import Tokenizer
from streamnb.models.email import EmailNB
from streamnb.persist import VERSION, encode_value

OUT = Path(__file__).parent / f"format-v{VERSION}"
# Feature names of every kind a vocabulary keys: str (with a lone surrogate), tuple, int,
# float, bytes, None, bool, an infinity.
DOCS = [({"cheap": 2, ("cheap", "pills"): 1, 7: 1, b"\xff\x00": 1, "caf\u00e9": 1, "\ud800x": 1, 2.5: 1}, "spam"),
        ({"meeting": 1, "agenda": 2, ("see", "you"): 1, None: 1, True: 1}, "ham"),
        ({"cheap": 1, "meeting": 1, "nan-name": 1, float("inf"): 1}, "spam")]
TEXTS = [("cheap pills now", "spam"), ("the meeting agenda", "ham"), ("cheap meeting", "ham")]
MAILS = [(b"Subject: cheap pills\r\nFrom: a@spam.example\r\n\r\nbuy cheap pills http://x.example/\r\n", "spam"),
         (b"Subject: agenda\r\nFrom: bob@work.example\r\n\r\nthe meeting is at noon\r\n", "ham")]


def trained(model, stream):
    for x, y in stream:
        model.learn_one(x, y)
    return model


def main():
    warnings.filterwarnings("ignore", "MultinomialNB.* is now", DeprecationWarning)
    OUT.mkdir(exist_ok=True)
    multinomial = trained(MultinomialNB(alpha=0.5, ledger=10), DOCS)
    multinomial.unlearn_one(DOCS[2][0], "spam").learn_one(DOCS[2][0], "spam")
    multinomial.learn_one({"gone": 1}, "ham").unlearn_one({"gone": 1}, "ham")  # leaves a free id
    as_text = [({str(k): v for k, v in x.items()}, y) for x, y in DOCS]
    models = {
        "multinomial": (multinomial, [x for x, _ in DOCS]),
        "bernoulli": (trained(BernoulliNB(alpha=1.0), DOCS), [x for x, _ in DOCS]),
        "complement": (trained(ComplementNB(norm=True), DOCS), [x for x, _ in DOCS]),
        "hashed": (trained(MultinomialNB(n_buckets=64), as_text), [x for x, _ in as_text]),
        "text": (trained(MultinomialNB(tokenizer=Tokenizer(ngram_range=(1, 2))), TEXTS),
                 [x for x, _ in TEXTS] + ["never seen words"]),
        "email": (trained(EmailNB(), MAILS), [x for x, _ in MAILS]),
    }
    if VERSION >= 5:  # the models whose steps format 6 keeps
        from streamnb import LogisticRegression
        from streamnb.models import Fusion

        models["logistic"] = (trained(LogisticRegression(tokenizer=Tokenizer()), TEXTS), [x for x, _ in TEXTS])
        models["fusion"] = (trained(Fusion(), MAILS + MAILS[:1]), [x for x, _ in MAILS])
    if VERSION >= 6:  # the steps kept, without the documents format 7 keeps
        models["logistic-ledger"] = (trained(LogisticRegression(tokenizer=Tokenizer(), ledger=10), TEXTS),
                                     [x for x, _ in TEXTS])
    if VERSION >= 7:  # every setting of a discrete model, named flat (what a file keeps)
        settings = dict(unseen="score", alpha_grid=[0.1, 1.0], evidence_half_life=50.0, sample_evidence=True,
                        half_life=20.0, max_features=40, min_count=0.1, expire_after=30, dense_max_classes=1)
        models["settings"] = (trained(MultinomialNB(alpha="auto", ledger=10, **settings), as_text),
                              [x for x, _ in as_text] + [{"never": 1, "cheap": 1}])
        timed = MultinomialNB(alpha=0.1, mu="auto", mu_grid=[10.0, 100.0], half_life_seconds=3600.0)
        for i, (x, y) in enumerate(as_text):
            timed.learn_one(x, y, t=1_000_000.0 + 600.0 * i)  # timestamps given: the file is the same every run
        models["settings-mu"] = (timed, [x for x, _ in as_text])
    expected = {}
    for name, (model, probes) in models.items():
        model.save(OUT / f"{name}.snb")
        assert streamnb.load(OUT / f"{name}.snb").predict_log_proba_one(probes[0]) == \
            model.predict_log_proba_one(probes[0])
        expected[name] = [{"probe": encode_value(x), "log_proba": encode_value(model.predict_log_proba_one(x))}
                          for x in probes]
    made_by = f"tests/data/make_format_files.py, format version {VERSION}"
    (OUT / "expected.json").write_text(json.dumps({"made_by": made_by, "log_proba": expected}, indent=1) + "\n")


if __name__ == "__main__":
    main()
