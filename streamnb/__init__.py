"""streamnb: streaming naive Bayes text classification.

Count tables grow as data arrives; the model after N documents is exactly the batch model
of those N documents. See DESIGN.md for the formulas and invariants.
"""

from . import errors
from .mail import EmailTokenizer
from .merging import merge
from .models import BernoulliNB, CategoricalNB, ComplementNB, GaussianNB, MixedNB, MultinomialNB
from .persist import load
from .text import OnlineTfidf, Tokenizer

__all__ = ["MultinomialNB", "BernoulliNB", "ComplementNB", "GaussianNB", "CategoricalNB", "MixedNB",
           "Tokenizer", "EmailTokenizer", "OnlineTfidf", "errors", "load", "merge"]
__version__ = "0.1.0"
