"""A spam filter with an unsure band and calibrated probabilities on the SpamAssassin stream.

Each message, in Date-header order, is classified by the filter as it stands, then
learned (prequential). The filter is multinomial naive Bayes over lowercase words, with
Robinson's chi-square combining and SpamBayes's cutoffs (ham < 0.20 <= unsure < 0.90 <=
spam), and an online calibrator of P(spam). Prints the model's own accuracy, FPR, FNR,
(1-AUC)%, the calibration error before and after calibration (isotonic, and Platt for
comparison, both prequential), and the unsure rate with the accuracy of the decided
messages; with ``--out DIR``, writes a learning curve, ROC curves and a reliability diagram
there as PNG files (nothing is written without it).

    python examples/decision_spamassassin.py [--corpus PATH] [--limit N] [--out DIR]

The corpus path defaults to $STREAMNB_SPAMASSASSIN (a folder or an archive).
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

import numpy as np

from streamnb import MultinomialNB
from streamnb.filter.calibrate import IsotonicCalibrator, PlattCalibrator
from streamnb.filter.datasets import load_spamassassin
from streamnb.filter.decision import ChiSquareRule, SpamFilter, progressive_filter
from streamnb.filter.evaluate import expected_calibration_error

WORD = re.compile(r"\b\w\w+\b")


def words(raw: bytes) -> dict[str, int]:
    """Lowercased words of 2+ word characters of the whole raw message (decoded as Latin-1)."""
    return dict(Counter(WORD.findall(raw.decode("latin-1").lower())))


def prequential(calibrator, log_odds: np.ndarray, model_probability: np.ndarray, is_spam: np.ndarray) -> np.ndarray:
    """What a SpamFilter with this calibrator would have said: transform, then update, where log-odds are finite."""
    out = model_probability.copy()
    for i, (z, y) in enumerate(zip(log_odds, is_spam)):
        if np.isfinite(z):
            out[i] = calibrator.transform(z)
            calibrator.update(z, bool(y))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", help="corpus folder or archive (default: $STREAMNB_SPAMASSASSIN)")
    parser.add_argument("--limit", type=int, help="only the first N messages of the stream")
    parser.add_argument("--out", help="folder for the PNG files (made if its parent exists; default: no PNG files)")
    args = parser.parse_args(argv)
    if args.out and not Path(args.out).absolute().parent.is_dir():
        parser.error(f"--out {args.out!r}: the folder {str(Path(args.out).absolute().parent)!r} does not exist")
    messages = load_spamassassin(args.corpus)[: args.limit]
    spam_filter = SpamFilter(MultinomialNB(alpha=1.0), ChiSquareRule(), IsotonicCalibrator(),
                             tokenizer=words, min_per_class=10)
    report = progressive_filter(spam_filter, [(m.raw, m.label) for m in messages], progress=True)
    print(report.summary())

    is_spam = np.array([y == "spam" for y in report.y_true])
    platt = prequential(PlattCalibrator(), report.log_odds, report.model_probability, is_spam)
    print(f"Platt (window {PlattCalibrator().window}) instead of isotonic: "
          f"ECE {expected_calibration_error(list(report.y_true), platt):.4f}")

    if not args.out:
        print("plots: give --out DIR to write them")
        return
    from streamnb.filter import plots  # matplotlib is optional: only needed from here on

    out = Path(args.out)
    out.mkdir(exist_ok=True)
    written = [
        plots.plot_learning_curve(report, out / "learning_curve.png",
                                  title="Multinomial NB on SpamAssassin (Date order), predict then learn"),
        plots.plot_roc(list(report.y_true), {"naive Bayes log-odds": report.log_odds,
                                             "chi-square indicator I": report.scores}, out / "roc.png",
                       title="Multinomial NB on SpamAssassin (Date order), prequential scores"),
        plots.plot_reliability(list(report.y_true), {"naive Bayes P(spam|x)": report.model_probability,
                                                     "after isotonic calibration": report.probability,
                                                     "after Platt calibration": platt},
                               out / "reliability.png",
                               title="Reliability of P(spam), prequential, SpamAssassin"),
    ]
    for path in written:
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
