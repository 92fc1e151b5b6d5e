"""The models compared, each behind the same three calls: predict_one, predict_proba_one, learn_one.

streamnb models take raw text themselves (``tokenizer=``) and tokenize a message once for
predict-then-learn. river is used as its documentation shows, a pipeline
``BagOfWords() | <model>`` that tokenizes on every call; :class:`RiverTokenizeOnce` is the
careful variant that tokenizes each message once, as streamnb does. scikit-learn's
streaming path is ``HashingVectorizer`` + ``partial_fit`` with the classes given up front.
"""

from __future__ import annotations

from typing import Any

from streamnb import BernoulliNB, ComplementNB, EmailTokenizer, MultinomialNB, OnlineTfidf, Tokenizer

MODELS = ("MNB", "BNB", "CNB", "CNB norm")
TOKENIZERS = ("Tokenizer", "EmailTokenizer")
CLASSES = ("ham", "spam")


def streamnb_model(model: str, tokenizer: str | None = None, **params: Any):
    """A fresh streamnb model: MNB, BNB, CNB or "CNB norm", reading raw text when a tokenizer is named."""
    if tokenizer is not None:
        params["tokenizer"] = Tokenizer() if tokenizer == "Tokenizer" else EmailTokenizer()
    if model == "MNB":
        return MultinomialNB(**params)
    if model == "BNB":
        return BernoulliNB(**params)
    if model == "CNB":
        return ComplementNB(**params)
    if model == "CNB norm":
        return ComplementNB(norm=True, **params)
    raise ValueError(f"unknown model {model!r}; expected one of {MODELS}")


def streamnb_inputs(corpus, tokenizer: str | None) -> list:
    """What a streamnb model reads: raw bytes for EmailTokenizer, text for Tokenizer, else bags of words."""
    if tokenizer == "EmailTokenizer":
        return corpus.raw
    if tokenizer == "Tokenizer":
        return corpus.texts
    return corpus.dicts


def river_model(model: str):
    """A fresh river naive Bayes model (alpha=1, river's default): MNB, BNB or CNB."""
    from river import naive_bayes

    return {"MNB": naive_bayes.MultinomialNB, "BNB": naive_bayes.BernoulliNB,
            "CNB": naive_bayes.ComplementNB}[model]()


def river_pipeline(model: str):
    """``BagOfWords() | <river model>``: river's text pipeline (tokenizes on every call)."""
    from river.feature_extraction import BagOfWords

    return BagOfWords() | river_model(model)


class RiverTokenizeOnce:
    """river's BagOfWords and a river model, tokenizing each message once for predict-then-learn."""

    def __init__(self, model) -> None:
        from river.feature_extraction import BagOfWords

        self.bag = BagOfWords()
        self.model = model
        self._last: tuple[Any, dict] | None = None

    def _bag(self, text: str) -> dict:
        if self._last is None or self._last[0] is not text:
            self._last = (text, self.bag.transform_one(text))
        return self._last[1]

    def predict_one(self, text: str):
        return self.model.predict_one(self._bag(text))

    def predict_proba_one(self, text: str) -> dict:
        return self.model.predict_proba_one(self._bag(text))

    def learn_one(self, text: str, y) -> None:
        self.model.learn_one(self._bag(text), y)


class RiverBinary:
    """A river binary classifier (labels True/False) seen through the labels "spam"/"ham"."""

    def __init__(self, model, positive: str = "spam", negative: str = "ham") -> None:
        self.model = model
        self.positive, self.negative = positive, negative

    def predict_proba_one(self, x) -> dict:
        proba = self.model.predict_proba_one(x)
        p = float(proba.get(True, 0.0))
        return {self.negative: 1.0 - p, self.positive: p}

    def predict_one(self, x):
        return self.positive if self.model.predict_one(x) else self.negative

    def learn_one(self, x, y) -> None:
        self.model.learn_one(x, y == self.positive)


def river_logistic():
    """river's LogisticRegression (its defaults: SGD, learning rate 0.01) on BagOfWords counts, tokenizing once."""
    from river.linear_model import LogisticRegression

    return RiverTokenizeOnce(RiverBinary(LogisticRegression()))


class SklearnHashingNB:
    """scikit-learn per message: HashingVectorizer (2**20 columns, counts) + MultinomialNB.partial_fit.

    The classes are given on the first partial_fit, as scikit-learn requires; a message is
    hashed once for predict-then-learn. Before the first fit nothing can be predicted.
    """

    def __init__(self, classes=CLASSES) -> None:
        from sklearn.feature_extraction.text import HashingVectorizer
        from sklearn.naive_bayes import MultinomialNB as SkMultinomialNB

        self.vectorizer = HashingVectorizer(alternate_sign=False, norm=None)
        self.model = SkMultinomialNB()
        self.classes = list(classes)
        self.fitted = False
        self._last: tuple[Any, Any] | None = None

    def _row(self, text: str):
        if self._last is None or self._last[0] is not text:
            self._last = (text, self.vectorizer.transform([text]))
        return self._last[1]

    def predict_one(self, text: str):
        return self.model.predict(self._row(text))[0] if self.fitted else None

    def predict_proba_one(self, text: str) -> dict:
        if not self.fitted:
            return {}
        return dict(zip(self.model.classes_, self.model.predict_proba(self._row(text))[0].tolist()))

    def learn_one(self, text: str, y) -> None:
        self.model.partial_fit(self._row(text), [y], classes=self.classes)
        self.fitted = True


class TfidfModel:
    """Tokenize, weight by online TF-IDF (log(1+tf) x idf, L2), then a streamnb model.

    With ``ComplementNB(norm=True)`` this is TWCNB (Rennie et al. 2003). Document
    frequencies count each message once, when it is first seen (no label is involved).
    """

    def __init__(self, model, tokenizer=None) -> None:
        self.model = model
        self.tokenizer = tokenizer or Tokenizer()
        self.tfidf = OnlineTfidf()
        self._last: tuple[Any, dict] | None = None

    def _weights(self, text) -> dict:
        if self._last is None or self._last[0] is not text:
            self._last = (text, self.tfidf.learn_transform_one(self.tokenizer(text)))
        return self._last[1]

    def predict_one(self, text):
        return self.model.predict_one(self._weights(text))

    def predict_proba_one(self, text) -> dict:
        return self.model.predict_proba_one(self._weights(text))

    def learn_one(self, text, y) -> None:
        self.model.learn_one(self._weights(text), y)


class NumpyByteGramLR:
    """The reference online logistic regression of the TREC spam track (Goodman & Yih 2006;
    Cormack's TREC 2007 baseline), written for the benchmark in numpy: binary 4-grams of the
    first 3,000 bytes hashed into 2^22 weights, score w . x, step w += rate (y - p) x with rate
    0.002. A reference to compare against, not the product (streamnb.LogisticRegression is).
    """

    def __init__(self, rate: float = 0.002, bits: int = 22, n: int = 4, max_bytes: int = 3000) -> None:
        import numpy as np

        self.np, self.rate, self.bits, self.n, self.max_bytes = np, rate, bits, n, max_bytes
        self.weights = np.zeros(1 << bits)

    def features(self, raw: bytes):
        """Distinct hashed n-grams of the head (Fibonacci hashing of the gram's bytes)."""
        np = self.np
        head = np.frombuffer(raw[: self.max_bytes], dtype=np.uint8).astype(np.uint64)
        if len(head) < self.n:
            return np.zeros(0, dtype=np.int64)
        grams = np.zeros(len(head) - self.n + 1, dtype=np.uint64)
        for k in range(self.n):
            grams |= head[k: len(head) - self.n + 1 + k] << np.uint64(8 * k)
        return np.unique((grams * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - self.bits)).astype(np.int64)

    def log_odds(self, ids) -> float:
        return float(self.weights[ids].sum())

    def learn(self, ids, z: float, spam: bool) -> None:
        p = 1.0 / (1.0 + self.np.exp(-z))
        self.weights[ids] += self.rate * (float(spam) - p)
