"""Which messages a spam filter asks the user to label (TREC 2007's active learning task).

A label is worth most where the filter is least sure, or where its two parts disagree. With
a quota of labels to spend over a stream (``budget=(labels_left, messages_left)``, the two
numbers TREC's active task gives a filter with each message), :class:`LabelRequests` asks
for a message's label, while labels are left, when

- its |log-odds| is below ``NEAR`` (1 nat): the filter cannot tell (uncertainty sampling,
  Lewis & Gale 1994); early in a stream most messages are, so a small quota is spent where
  it teaches most, on the first messages;
- the model's two parts (a :class:`~streamnb.models.Fusion`'s naive Bayes and logistic
  regression) disagree in sign while logistic regression is sure (|log-odds| >=
  ``SURE``): a query by committee (Seung et al. 1992) that catches what uncertainty
  sampling cannot, a confident mistake of one part (trec07p-dev, 250 labels: without it a
  campaign the logistic regression had learned wrong went unasked for 2,000 messages);
- or its |log-odds| is among the smallest fraction labels_left / messages_left of the
  |log-odds| of the last ``window`` messages classified: the rest of the quota spent at the
  pace of the stream on the least sure (Sculley 2007 compared such rules on spam). While
  fewer than ``warmup`` messages have been seen, every message is asked for.

Without a budget the filter only says whether a message is worth a label at all: its
verdict is "unsure", or its parts disagree as above.

Chosen on trec07p-dev's active task at quotas 250, 500, 1,000 and 2,000
(benchmarks/bench_feedback.py reports quota 1,000, TREC's).
"""

from __future__ import annotations

import bisect
import math
from collections import deque

from ..errors import InvalidInputError, describe

__all__ = ["LabelRequests", "check_budget", "disagree"]

#: Messages whose |log-odds| the quantile is taken over.
WINDOW = 2000
#: Below this |log-odds| a message's label is asked for while labels are left.
NEAR = 1.0
#: The parts disagreeing while logistic regression's |log-odds| is at least this: asked for.
SURE = 1.0
#: Messages asked for while the window is this short.
WARMUP = 50


def check_budget(budget: object) -> tuple[int, int]:
    """A budget (labels_left, messages_left): two ints, labels_left >= 0, messages_left >= 1
    (the message being classified counts); InvalidInputError naming what is wrong."""
    if not (isinstance(budget, tuple) and len(budget) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in budget)):
        raise InvalidInputError(f"budget must be a pair of ints (labels_left, messages_left), got {describe(budget)}")
    labels_left, messages_left = budget
    if labels_left < 0 or messages_left < 1:
        raise InvalidInputError(f"budget must have labels_left >= 0 and messages_left >= 1 (this message counts), "
                                f"got {budget!r}")
    return labels_left, messages_left


def disagree(parts: tuple[float, float] | None) -> bool:
    """Do the two parts disagree in sign while logistic regression is sure (|log-odds| >= SURE)?"""
    if parts is None:
        return False
    z_nb, z_lr = parts
    return abs(z_lr) >= SURE and z_nb != 0 and (z_nb > 0) != (z_lr > 0)


class LabelRequests:
    """The |log-odds| of the last ``window`` messages classified, and the rule that asks.

    Parameters
    ----------
    window : int
        How many recent messages the quantile is taken over.
    warmup : int
        While fewer messages have been seen, every message is asked for.
    """

    def __init__(self, window: int = WINDOW, warmup: int = WARMUP) -> None:
        self.window = window
        self.warmup = warmup
        self._recent: deque[float] = deque()
        self._sorted: list[float] = []

    def ask(self, log_odds: float, budget: tuple[int, int], parts: tuple[float, float] | None = None) -> bool:
        """Ask for this message's label? Then remember its |log-odds|.

        Parameters
        ----------
        log_odds : float
            The message's log-odds.
        budget : (int, int)
            (labels_left, messages_left), checked (:func:`check_budget`).
        parts : (float, float) or None
            The log-odds of the model's two parts, (naive Bayes', logistic regression's),
            when it has two.

        Returns
        -------
        bool
            Whether the label is worth one of the labels left.
        """
        labels_left, messages_left = budget
        margin = abs(log_odds) if not math.isnan(log_odds) else 0.0
        if labels_left <= 0:
            wanted = False
        elif (labels_left >= messages_left or len(self._sorted) < self.warmup or margin < NEAR
              or disagree(parts)):
            wanted = True
        else:
            share = labels_left / messages_left
            # the |log-odds| at or below which that share of the recent messages fell: the
            # k+1 smallest of n are a share (k+1)/n, so k = ceil(share n) - 1
            k = max(0, min(len(self._sorted), math.ceil(share * len(self._sorted))) - 1)
            wanted = margin <= self._sorted[k]
        self._remember(margin)
        return wanted

    def _remember(self, margin: float) -> None:
        self._recent.append(margin)
        bisect.insort(self._sorted, margin)
        if len(self._recent) > self.window:
            old = self._recent.popleft()
            del self._sorted[bisect.bisect_left(self._sorted, old)]
