"""The naive Bayes models, one per file over the shared bases in ``base.py`` and ``record.py``."""

from .bernoulli import BernoulliNB
from .categorical import CategoricalNB
from .complement import ComplementNB
from .email import EmailNB
from .gaussian import GaussianNB
from .mixed import MixedNB
from .multinomial import MultinomialNB

__all__ = ["MultinomialNB", "BernoulliNB", "ComplementNB", "GaussianNB", "CategoricalNB", "MixedNB", "EmailNB"]
