"""Email features weighted field by field with an online TF-IDF, then naive Bayes.

:class:`EmailTfidf` turns :class:`streamnb.mail.EmailTokenizer` features into online TF-IDF
weights, length-normalised per field (body words, subject, links, addresses ...), and
:class:`EmailPipeline` pairs the tokenizer, the weighting and a multinomial model: the most
accurate filter measured on the SpamAssassin stream before :class:`streamnb.models.EmailNB`
(benchmarks/accuracy_variants.py). The weights of a message depend on what was learned
before it, so the pipeline has no exact unlearn or merge. The recommended filter, and the
``streamnb`` command's default, is now ``EmailNB``: it applies the IDF when scoring, not
when learning, keeps every exact operation, and ranks the stream better ((1-AUC)% 0.074
against 0.084, both with infinite log-odds while one class is unknown; 0.0595 in a SpamFilter,
which ranks that phase against a class that learned nothing)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from streamnb.errors import InvalidParameterError, InvalidTypeError, describe
from streamnb.features.email import EmailTokenizer
from streamnb.features.text import OnlineTfidf


def _check_mass(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
        raise InvalidParameterError(f"{name} must be a finite number > 0, got {describe(value)}")
    return float(value)


class EmailTfidf:
    """Online TF-IDF of :class:`EmailTokenizer` features, length-normalised field by field.

    ``transform_one(x)[f] = log(1 + x_f) * idf(f) * m / S``: the idf is that of
    :class:`~streamnb.text.OnlineTfidf` (``ln((1 + N) / (1 + df_f)) + 1`` over the N messages
    learned so far), S is the sum of these weights over the features of the same field
    (:meth:`EmailTokenizer.field`) and m is ``body_mass`` for the body and ``field_mass``
    for each other field present. So every message brings the same mass of body evidence,
    and each header field a fixed, smaller mass, however long the message is.

    Why, measured on the Date-ordered SpamAssassin stream with a multinomial model: counts let
    a long message pile up hundreds of weakly spammy words (long newsletters sent to people
    who asked for them scored log-odds above 100); fixing the mass per message bounds that.
    The IDF shrinks common words: early in the stream most messages are spam, and what made
    those newsletters look like spam was mostly everyday words ("wish", "simply", "cost")
    seen in a hundred spams and in none of the few dozen hams learned so far. Separate field
    masses keep the short fields (subject, sender, links, MIME structure) from being drowned
    by the body. See the table above :class:`EmailPipeline`. With a uniform class prior only
    the ratios matter to a multinomial model: scaling both masses and its alpha (and mu) by c
    scales the log-odds by c.

    ``learn_one`` counts a message's features in the document frequencies; ``transform_one``
    changes nothing. State: ``tfidf`` (the OnlineTfidf holding N and df).
    """

    def __init__(
        self,
        tokenizer: EmailTokenizer | Mapping[str, Any] | None = None,
        *,
        body_mass: float = 30.0,
        field_mass: float = 3.0,
    ) -> None:
        if tokenizer is None:
            tokenizer = EmailTokenizer()
        elif isinstance(tokenizer, Mapping):
            tokenizer = EmailTokenizer(**tokenizer)
        elif not isinstance(tokenizer, EmailTokenizer):
            raise InvalidTypeError(
                f"tokenizer must be an EmailTokenizer, a dict of its settings or None, got {describe(tokenizer)}"
            )
        self.tokenizer = tokenizer
        self.body_mass = _check_mass("body_mass", body_mass)
        self.field_mass = _check_mass("field_mass", field_mass)
        self.tfidf = OnlineTfidf(tf="log1p", norm=None)
        self.version = 0  # bumped by every learn/unlearn: weights computed earlier are stale

    def get_params(self) -> dict[str, Any]:
        """Settings as JSON-serialisable values; ``EmailTfidf(**w.get_params())`` is an empty twin."""
        return {"tokenizer": self.tokenizer.get_params(), "body_mass": self.body_mass, "field_mass": self.field_mass}

    def __repr__(self) -> str:
        return (f"EmailTfidf(body_mass={self.body_mass:g}, field_mass={self.field_mass:g}; "
                f"n_docs={self.tfidf.n_docs}, features={len(self.tfidf.df)})")

    @property
    def n_docs(self) -> int:
        """Messages learned so far."""
        return self.tfidf.n_docs

    def learn_one(self, features: Mapping[str, float]) -> None:
        """Count one message's features in the document frequencies."""
        self.tfidf.learn_one(features)
        self.version += 1

    def unlearn_one(self, features: Mapping[str, float]) -> None:
        """Exact inverse of :meth:`learn_one`."""
        self.tfidf.unlearn_one(features)
        self.version += 1

    def transform_one(self, features: Mapping[str, float]) -> dict[str, float]:
        """Weights of one message's features (see the class docstring); {} for no features."""
        weights = self.tfidf.transform_one(features)
        field_of = self.tokenizer.field
        fields = {feature: field_of(feature) for feature in weights}
        totals: dict[str, float] = {}
        for feature, weight in weights.items():
            totals[fields[feature]] = totals.get(fields[feature], 0.0) + weight
        scale = {
            name: (self.body_mass if name == "body" else self.field_mass) / total for name, total in totals.items()
        }
        return {feature: weight * scale[fields[feature]] for feature, weight in weights.items()}


# What was tried, and why the defaults are what they are. Prequential runs (predict, then
# learn every message) on the SpamAssassin public corpus in Date-header order, 6,046 messages
# (4,150 ham, 1,896 spam), from benchmarks/accuracy_variants.py. acc/FPR/FNR at the model's
# own decision; FPR = ham marked spam. "acc@0.3%" = best accuracy of any log-odds cutoff
# marking at most 0.3% of ham as spam, cutoff chosen in hindsight (a ranking comparison).
#
#   variant                                                   acc    FPR    FNR  (1-AUC)%  acc@0.3%
#   river BagOfWords + MultinomialNB(alpha=1), raw text     95.40%  3.23%  7.59%  1.855    68.6%
#   EmailTokenizer() counts + MNB(alpha=1)                   97.59%  2.07%  3.16%  0.708    82.4%
#   EmailTokenizer() counts + MNB(alpha=0.01)                98.51%  1.18%  2.16%  0.577    88.2%
#   EmailTokenizer(binary) + MNB(alpha=0.01)                 98.71%  1.06%  1.79%  0.471    89.0%
#   EmailTokenizer() + BernoulliNB(alpha=0.01)               97.65%  2.70%  1.58%  0.645    90.6%
#   EmailTokenizer(max_tokens=100) + BernoulliNB(0.01)       98.59%  1.61%  0.95%  0.244    92.2%
#   EmailTokenizer(binary, bigrams) + MNB(alpha=0.01)        98.83%  1.11%  1.32%  0.421    95.1%
#   binary, same mass per message + MNB(0.003, uniform)      98.81%  0.96%  1.69%  0.173    96.2%
#   OnlineTfidf(log1p, l1) + MNB(1e-4, uniform)              98.97%  0.84%  1.42%  0.120    97.9%
#   bigrams + OnlineTfidf(log1p, l1) + MNB(1e-4, uniform)    99.11%  0.94%  0.79%  0.093    97.7%
#   bigrams + EmailTfidf + MNB(0.003, uniform) (EmailPipeline() before mu existed)
#                                                            99.04%  1.01%  0.84%  0.084    98.6%
#   the same with field_mass=2 / the MLE class prior         99.14% / 98.97%, acc@0.3% 98.4% / 98.5%
#   the same plus: uppercase words and caps share, HTML tag and colour markers, ALL-CAPS
#   subject words, long words as "skip" tokens, numbers as their length, sender/date shape
#   (no display name, digits in the local part, zone beyond +-14 h, recipient count), or
#   English stop words removed: acc 98.97-99.09%, acc@0.3% 97.7-98.4%, all within a few
#   messages of the setting without them, and none better at the 0.3% end: not adopted.
#
#
# Tried later (same stream, same columns; "exact" = weights from the message alone, so
# learn / unlearn / merge stay exact). Dirichlet smoothing is MultinomialNB(mu=...);
# FieldMass lives in the benchmark:
#   bigrams + EmailTfidf + Dirichlet smoothing toward the pooled distribution,
#     P(w|c) = (T_cw + mu P(w)) / (T_c + mu), P(w) = (T_w + alpha) / (T + alpha |V|),
#     MNB(alpha 0.03, mu 300, uniform) = EmailPipeline()              99.21%  0.80%  0.79%  0.084    98.5%
#     the same, alpha 0.003, mu 3000 (shrinks harder)                  99.07%  0.70%  1.42%  0.118    97.4%
#   bigrams + per-field mass without IDF, binary + MNB(0.003) [exact]  98.99%  1.08%  0.84%  0.110    97.9%
#   the same, log(1+count) + Dirichlet(0.03, 300) [exact]              99.02%  0.92%  1.11%  0.099    98.0%
#   EmailTokenizer(binary) + Dirichlet(0.01, mu=100) [exact]           98.73%  0.99%  1.90%  0.566    88.7%
#   IDF ln((1+N)/(1+df)) without the "+1" (ubiquitous tokens weigh 0)  99.06%  0.92%  1.00%    -     98.6%
#   per-token log-ratio clipped to +-3 / +-6 (Graham's clamp)          98.81% / 99.01%, FPR 1.23% / 1.04%
#   no MIME field / no header-name field / body mass 60                99.09% / 99.02% / 99.17%, FPR 0.84-1.08%,
#                                                                      acc@0.3% 97.7-98.1% (worse ranking)
#   + Message-ID domain tokens and List-Id words                       99.06% / 1.01% (98.45% at 0.3%)
#   Robinson chi-square combining of document frequencies (EmailTokenizer() features,
#     strength 0.45, 150 clues), spam iff
#     I > 0.5 / I >= 0.9                                               97.49% / 95.42%, FPR 0.84% / 0.55%
#   train on error (learn only when |log-odds| < 20 or wrong)          99.12%  0.89%  0.84%, acc@0.3% 97.7%
#   train until no error: a learned message is right at once (a word seen in one ham
#     outweighs it), so it relearns nothing and changes nothing.
# Dirichlet smoothing is the one that helped: with little ham learned, a word absent from it
# is no longer strong evidence of spam just because the ham sample is small. It helps the
# IDF-weighted setting (58 -> 48 errors), hardly the raw binary counts, and it is now the
# default of EmailPipeline (MultinomialNB's ``mu``). Its values, alpha 0.03 and mu 300, were
# chosen on this same stream, so the 99.21% is an in-sample figure: mu swept over 30-10,000
# (in units of weight; a message weighs about 36) and alpha over 0.0003-0.1; the errors stay
# at 48-51 for alpha 0.003-0.1 with mu 100-1,000 (53-54 at mu 30, 56-61 at mu 3,000), so the
# gain does not hang on the exact values. It does not help the strict end: at the cutoff
# that keeps FPR <= 0.3% it is slightly worse than the additive model (98.36% against
# 98.49% accuracy at 11 hams; best hindsight cutoff 98.46% against 98.58%): the gain is at
# the default decision, where 9 fewer hams are marked spam.
#
# Why none reaches FPR <= 0.3% (12 ham) with accuracy >= 99%, from benchmarks/accuracy_errors.py
# on EmailPipeline() (33 ham marked spam): 32 of the 33 are the first message from
# their sender address, and 14 of them come before 100 hams have been learned, already
# more than the 12 allowed. The stream opens with 158 spams, so the first ham (The Motley
# Fool) meets a model that knows no ham at all; the next 45 hams are one Linux mailing list,
# and then the newsletters arrive (a sweepstakes notice, a domain renewal reminder, CAUCE
# news, The Register, CNET, Dilbert, Lockergnome, Oracle, a Japanese business mail ...):
# bulk mail from senders never seen, worded like the hundreds of advertisements learned so
# far. Nothing in the 45 list hams says that a newsletter can be wanted. The candidate
# headers that could tell them apart are weak on this corpus (Message-ID domain equal to
# the From domain: 36% of hard ham, 19% of spam; List-Unsubscribe: 22% vs 8%), and the
# trace headers that separate them better (Received, Delivered-To) record how the corpus
# was collected, so they are not used (see streamnb.mail). Ranking is the limit, not the
# cutoff: even the cutoff chosen in hindsight to pass 12 hams misses 74-81 spams (98.5-98.6%).
#
# Binary features beat counts for a plain multinomial model, but with the TF-IDF weighting
# log(1 + count) does as well or slightly better, so EmailTokenizer keeps counts by default
# (pass body={"binary": True} for a plain model). Word pairs helped every multinomial variant
# (not Bernoulli: 97.3% against 97.9% at alpha 0.001), at 6.7x the vocabulary (630k
# features): they are in EmailPipeline's tokenizer, not in EmailTokenizer's default. A small
# alpha helps while documents carry raw counts (alpha 1 -> 0.01: 97.59% -> 98.51%); with a
# fixed mass per message and the additive model (no mu) only alpha / mass matters, and ~1e-4
# was best (alpha 0.001-0.005 at mass 30 are within a few messages of each other).
#
# The target of issue 3, accuracy >= 99.0% with FPR <= 0.3% at one operating point, is not
# reached by any of these. EmailPipeline() gives 99.21% at FPR 0.80% (33 ham) at the default
# decision, and FPR 0.27% (11 ham) at 98.36% accuracy with P(spam|x) >= 1 - 1e-7
# (EmailPipeline.STRICT_CUTOFF); the additive model it replaced gave 99.04% at FPR 1.01%
# (42 ham), and FPR 0.27% at 98.49% with P(spam|x) >= 1 - 1e-8. Why the 0.3% end is hard on
# this stream: the first ham comes after 158 spams (it is marked spam whatever the model),
# 24 of the 250 hard hams (mostly commercial mail people subscribed to) arrive while fewer
# than 70 hams have been learned, and 10 of the 11 hams still marked spam at the strict
# cutoff are the first message from their sender address, 9 of them bulk mailings
# (newsletters, offers, notices) worded like advertisements. Their content is what spam
# says too; the gains above came from how the evidence is weighed, not from more features.


def default_model() -> Any:
    """EmailPipeline's model: ``MultinomialNB(alpha=0.03, mu=300.0, class_prior="uniform")``.

    P(w|c) = (T_cw + mu P(w)) / (T_c + mu), P(w) = (T_w + alpha) / (T + alpha*|V|): Dirichlet
    smoothing toward the pooled distribution, so that with few hams learned a word missing
    from them is weak evidence of spam. alpha and mu were chosen on the Date-ordered
    SpamAssassin stream (see the table above), the stream the figures are measured on.
    """
    from streamnb.models import MultinomialNB  # here, not at the top: models do not need mail

    return MultinomialNB(alpha=0.03, mu=300.0, class_prior="uniform")


class EmailPipeline:
    """A naive Bayes model on raw messages: :class:`EmailTokenizer` -> :class:`EmailTfidf` ->
    model. The defaults are the recommended spam-filter setting (see the table above).

    - ``tokenizer``: default ``EmailTokenizer(body={"ngram_range": [1, 2]})`` (words and
      word pairs, in the body and the subject);
    - ``weights``: default ``EmailTfidf(tokenizer)`` (body mass 30, field mass 3); given
      without a tokenizer, its own tokenizer is used;
    - ``model``: default :func:`default_model`, ``MultinomialNB(alpha=0.03, mu=300,
      class_prior="uniform")`` (Dirichlet smoothing toward the pooled distribution; alpha and
      mu were chosen on the SpamAssassin stream the table reports); any model with
      ``learn_one(x, y)`` and ``predict_*_one(x)`` on feature mappings will do.

    Same interface as a model: ``learn_one(raw, y)``, ``predict_one``, ``predict_proba_one``,
    ``predict_log_proba_one`` and ``classes``, so it works with
    :func:`streamnb.evaluate.progressive_evaluate`. A message is weighted with the document
    frequencies from before it is learned, and ``learn_one`` teaches the model exactly the
    weights a prediction just used, then counts the message in the IDF; a predict-then-learn
    pair tokenizes it once. There is no unlearn or merge: a message's weights depend on what
    was learned before it, so the order of learning is part of the model.

    A spam decision biased against false positives compares P(spam|x) with a cutoff t > 1/2,
    or equivalently the log-odds with log(t / (1 - t)); with the class prior uniform, that
    cutoff is a pure evidence threshold. :attr:`STRICT_CUTOFF` is the cutoff measured for the
    default setting (see the table above).
    """

    #: P(spam|x) at or above which the default setting's decision marked at most 0.3% of the
    #: ham as spam on the Date-ordered SpamAssassin stream (log-odds 16.1; 11 of 4,150 ham, at
    #: 98.36% accuracy). Read off that same stream, as the default's alpha and mu were.
    STRICT_CUTOFF = 1 - 1e-7

    def __init__(
        self,
        model: Any = None,
        *,
        tokenizer: EmailTokenizer | None = None,
        weights: EmailTfidf | None = None,
    ) -> None:
        if weights is not None and not isinstance(weights, EmailTfidf):
            raise InvalidTypeError(f"weights must be an EmailTfidf or None, got {describe(weights)}")
        if tokenizer is None:
            tokenizer = weights.tokenizer if weights is not None else EmailTokenizer(body={"ngram_range": [1, 2]})
        elif not isinstance(tokenizer, EmailTokenizer):
            raise InvalidTypeError(f"tokenizer must be an EmailTokenizer or None, got {describe(tokenizer)}")
        if weights is None:
            weights = EmailTfidf(tokenizer)
        if model is None:
            model = default_model()
        elif not all(callable(getattr(model, name, None)) for name in ("learn_one", "predict_log_proba_one")):
            raise InvalidTypeError(f"model must have learn_one and predict_log_proba_one, got {describe(model)}")
        self.tokenizer = tokenizer
        self.weights = weights
        self.model = model
        self._last: tuple[Any, int, dict[str, int], dict[str, float]] | None = None

    def __repr__(self) -> str:
        return f"EmailPipeline({self.model!r}, tokenizer={self.tokenizer!r}, weights={self.weights!r})"

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_last"] = None  # a cache holding the caller's last message
        return state

    def _transform(self, raw: bytes | str) -> tuple[dict[str, int], dict[str, float]]:
        """(features, weights) of a message, reusing the last message's work when possible."""
        last = self._last
        version = self.weights.version
        if last is not None and type(last[0]) is type(raw) and last[0] == raw:
            if last[1] == version:
                return last[2], last[3]
            features = last[2]
        else:
            features = self.tokenizer(raw)
        weights = self.weights.transform_one(features)
        self._last = (raw, version, features, weights)
        return features, weights

    @property
    def classes(self) -> list:
        return self.model.classes

    def learn_one(self, raw: bytes | str, y: Any) -> "EmailPipeline":
        """Teach the model the message's weights, then count it in the document frequencies."""
        features, weights = self._transform(raw)
        self.model.learn_one(weights, y)  # raises (changing nothing) on an empty message
        self.weights.learn_one(features)
        return self

    def predict_log_proba_one(self, raw: bytes | str) -> dict:
        return self.model.predict_log_proba_one(self._transform(raw)[1])

    def predict_proba_one(self, raw: bytes | str) -> dict:
        return self.model.predict_proba_one(self._transform(raw)[1])

    def predict_one(self, raw: bytes | str) -> Any:
        return self.model.predict_one(self._transform(raw)[1])
