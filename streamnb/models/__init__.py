"""The naive Bayes models, one per file over the shared base in ``base.py``."""

from .bernoulli import BernoulliNB
from .complement import ComplementNB
from .multinomial import MultinomialNB

__all__ = ["MultinomialNB", "BernoulliNB", "ComplementNB"]
