"""Text to features: the word tokenizer and online TF-IDF.

The data path of streamnb is text -> tokens -> feature ids -> counts. This module owns the
first arrow: :class:`Tokenizer` turns a ``str`` into a mapping ``feature -> count``;
:class:`OnlineTfidf` re-weights such mappings with document frequencies that grow as
documents stream by. (A model given a tokenizer remembers the last message it tokenized,
so predict-then-learn of the same text tokenizes it once: see ``DiscreteNB._lookup``.)

Everything here is plain data (settings are str/int/bool/list values), so objects pickle,
compare by settings, and can be saved as JSON by ``get_params()``.
"""

from __future__ import annotations

import abc
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from itertools import islice
from typing import Any

from streamnb import _core
from streamnb.errors import (
    IncompatibleModelsError,
    InvalidInputError,
    InvalidTypeError,
    describe,
)
from streamnb.validate import (
    check_bool,
    check_choice,
    check_one_of,
    check_optional_int,
    check_range,
    check_some_ngrams,
    check_stop_words,
    check_token_pattern,
)

__all__ = [
    "DEFAULT_TOKEN_PATTERN",
    "ENGLISH_STOP_WORDS",
    "OnlineTfidf",
    "Tokenizer",
]

#: A token is a run of two or more word characters (letters, digits, underscore, in the
#: Unicode sense), the same definition as scikit-learn's default ``token_pattern``, so
#: ``Tokenizer()`` gives the same counts as ``CountVectorizer().build_analyzer()``.
DEFAULT_TOKEN_PATTERN = r"(?u)\b\w\w+\b"

#: Common English function words (articles, pronouns, auxiliaries, prepositions,
#: conjunctions and frequent adverbs/determiners) that carry little topical signal; the list
#: lives in the core (src/tokenize.rs), which removes them.
ENGLISH_STOP_WORDS: frozenset[str] = frozenset(_core.ENGLISH_STOP_WORDS.split())


class PicklesSettings(abc.ABC):
    """Pickled as its settings (``get_params()``) and rebuilt from them on load: compiled
    regexes, stemmers and cores are not pickled (the tokenizers of streamnb.features)."""

    @abc.abstractmethod
    def get_params(self) -> dict[str, Any]:
        """The settings the object is rebuilt from."""

    def __getstate__(self) -> dict[str, Any]:
        return self.get_params()

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]


class Tokenizer(PicklesSettings):
    """Callable turning a text into a bag of features, ``tokenizer(text) -> {feature: count}``.

    Steps, in order:

    1. keep the first ``max_chars`` characters (a guard: memory and time stay bounded on any
       input; the default 1,000,000 is far above real mail bodies);
    2. lowercase (``lowercase=True``, ``str.lower``, as scikit-learn);
    3. tokens = ``re.findall(token_pattern, text)``; the default ``(?u)\\b\\w\\w+\\b`` means runs
       of 2+ Unicode word characters; a pattern with one capture group yields the group (as
       scikit-learn); only the first ``max_tokens`` matches are kept, and empty ones dropped;
    4. stop words are removed (``"english"`` uses :data:`ENGLISH_STOP_WORDS`);
    5. character n-grams (``char_ngram_range``) are taken inside each remaining token, padded
       with one space on each side (like scikit-learn's ``analyzer="char_wb"``, but on the
       tokens of step 3 rather than on whitespace-separated chunks; a padded token shorter
       than n yields itself once); they are prefixed ``"c:"`` when word features are also
       produced, unprefixed when ``ngram_range=None``;
    6. stemming (``stemmer="snowball"``: the English Snowball stemmer, extra ``stem``);
    7. word n-grams for each n in ``ngram_range``, joined by a single space (as scikit-learn);
    8. counting; ``binary=True`` maps every present feature to 1.

    The result is a ``dict`` (a ``collections.Counter`` unless ``binary``). With the default
    pattern, steps 1-5, 7 and 8 run in the compiled core (``streamnb._core.WordTokenizer``,
    which follows Python's own definitions of ``\\w`` and ``str.lower()``); a custom
    pattern is matched by Python's ``re``, and stemming is Python's snowballstemmer.

    >>> Tokenizer()("The cat sat on the mat, the END.")
    Counter({'the': 3, 'cat': 1, 'sat': 1, 'on': 1, 'mat': 1, 'end': 1})
    >>> Tokenizer(stop_words="english", ngram_range=(1, 2))("the cat sat")
    Counter({'cat': 1, 'sat': 1, 'cat sat': 1})

    Do not change attributes after construction: build a new tokenizer (the derived regex and
    tables are computed once in ``__init__``).

    Parameters
    ----------
    lowercase : bool
        Lowercase the text before matching (step 2).
    token_pattern : str
        The regular expression of a token (step 3), with at most one capture group.
    stop_words : None, "english" or iterable of str
        Words removed after matching (step 4).
    ngram_range : (int, int) or None
        The word n-grams produced, ``(min_n, max_n)`` (step 7); None for none.
    char_ngram_range : (int, int) or None
        The character n-grams produced inside each token (step 5); None for none. At least
        one of the two ranges is set.
    binary : bool
        Every present feature counts 1 (step 8).
    max_tokens : int or None
        Keep only the first matches (step 3); None for all.
    max_chars : int or None
        Read only the first characters of a text (step 1); None for all.
    stemmer : None or "snowball"
        Stem the words (step 6; needs the ``stem`` extra).

    Raises
    ------
    InvalidParameterError
        For a value out of its range (an invalid regular expression, both ranges None ...).
    InvalidTypeError
        For a value of the wrong type.
    """

    def __init__(
        self,
        *,
        lowercase: bool = True,
        token_pattern: str = DEFAULT_TOKEN_PATTERN,
        stop_words: str | Iterable[str] | None = None,
        ngram_range: tuple[int, int] | list[int] | None = (1, 1),
        char_ngram_range: tuple[int, int] | list[int] | None = None,
        binary: bool = False,
        max_tokens: int | None = None,
        max_chars: int | None = 1_000_000,
        stemmer: str | None = None,
    ) -> None:
        self.lowercase = check_bool("lowercase", lowercase)
        regex = check_token_pattern(token_pattern)
        self.token_pattern = token_pattern
        self.stop_words = check_stop_words(stop_words)
        self.ngram_range = check_range("ngram_range", ngram_range)
        self.char_ngram_range = check_range("char_ngram_range", char_ngram_range)
        check_some_ngrams(self.ngram_range, self.char_ngram_range)
        self.binary = check_bool("binary", binary)
        self.max_tokens = check_optional_int("max_tokens", max_tokens)
        self.max_chars = check_optional_int("max_chars", max_chars)
        self.stemmer = check_one_of("stemmer", stemmer, (None, "snowball"), "None or 'snowball'")

        # Derived, private state (rebuilt from the settings on unpickling).
        self._default = token_pattern == DEFAULT_TOKEN_PATTERN
        self._regex = regex
        self._group = 1 if regex.groups == 1 else 0
        if self.stop_words is None:
            self._stop: frozenset[str] = frozenset()
        elif self.stop_words == "english":
            self._stop = ENGLISH_STOP_WORDS
        else:
            self._stop = frozenset(self.stop_words)
        self._core = _core.WordTokenizer(
            lowercase=self.lowercase,
            stop_words=list(self.stop_words) if isinstance(self.stop_words, tuple) else self.stop_words,
            ngram_range=self.ngram_range, char_ngram_range=self.char_ngram_range,
            max_tokens=self.max_tokens, max_chars=self.max_chars)
        self._stem: Callable[[list[str]], list[str]] | None = None
        if stemmer == "snowball":
            try:
                import snowballstemmer
            except ImportError:
                raise ImportError(
                    "stemmer='snowball' needs the snowballstemmer package: pip install streamnb[stem]"
                ) from None
            self._stem = snowballstemmer.stemmer("english").stemWords

    # -- settings -------------------------------------------------------------------------

    def get_params(self) -> dict[str, Any]:
        """Settings as JSON-serialisable values; ``Tokenizer(**t.get_params()) == t``."""
        return {
            "lowercase": self.lowercase,
            "token_pattern": self.token_pattern,
            "stop_words": list(self.stop_words) if isinstance(self.stop_words, tuple) else self.stop_words,
            "ngram_range": None if self.ngram_range is None else list(self.ngram_range),
            "char_ngram_range": None if self.char_ngram_range is None else list(self.char_ngram_range),
            "binary": self.binary,
            "max_tokens": self.max_tokens,
            "max_chars": self.max_chars,
            "stemmer": self.stemmer,
        }

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tokenizer):
            return NotImplemented
        return self.get_params() == other.get_params()

    def __hash__(self) -> int:
        return hash(repr(sorted(self.get_params().items())))

    def __repr__(self) -> str:
        defaults = Tokenizer._defaults()
        changed = {k: v for k, v in self.get_params().items() if defaults.get(k) != v}
        return "Tokenizer(" + ", ".join(f"{k}={v!r}" for k, v in changed.items()) + ")"

    @staticmethod
    def _defaults() -> dict[str, Any]:
        return Tokenizer().get_params()

    # -- tokenizing -----------------------------------------------------------------------

    def __call__(self, text: str) -> dict[str, int]:
        """Return the bag of features of ``text`` (see the class docstring for the steps).

        Parameters
        ----------
        text : str
            The text to tokenize.

        Returns
        -------
        dict
            Feature -> count (a ``collections.Counter`` unless ``binary``).
        """
        if not isinstance(text, str):
            raise InvalidTypeError(f"Tokenizer expects a str, got {describe(text)}")
        if self._default and self._stem is None:
            counts = self._core.count(text, self.binary)
        else:
            words = self.words(text)
            stems = None
            if self._stem is not None and self.ngram_range is not None and words:
                distinct = list(set(words))
                by_word = dict(zip(distinct, self._stem(distinct)))
                stems = [by_word[word] for word in words]
            counts = self._core.count_words(words, stems, self.binary)
        return counts if self.binary else Counter(counts)

    def words(self, text: str) -> list[str]:
        """The word tokens of ``text`` in order: steps 1-4 (cap, lowercase, pattern, stop words)."""
        if not isinstance(text, str):
            raise InvalidTypeError(f"Tokenizer expects a str, got {describe(text)}")
        if self._default:
            return self._core.words(text)
        # A custom pattern: Python's re finds the words (the core implements the default one).
        if self.max_chars is not None and len(text) > self.max_chars:
            text = text[: self.max_chars]
        if self.lowercase:
            text = text.lower()
        group = self._group
        tokens = [match.group(group) for match in islice(self._regex.finditer(text), self.max_tokens)]
        stop = self._stop
        return [token for token in tokens if token and token not in stop]


# --------------------------------------------------------------------------------------------
# Online TF-IDF
# --------------------------------------------------------------------------------------------

_TF_CHOICES = ("log1p", "1+log", "raw")
_NORM_CHOICES = ("l2", "l1", None)


def _check_features(features: object) -> Mapping[Any, Any]:
    """Validate a features mapping: numeric values, finite and >= 0."""
    if not isinstance(features, Mapping):
        raise InvalidTypeError(f"features must be a mapping feature -> count, got {describe(features)}")
    for feature, value in features.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InvalidTypeError(f"feature {feature!r} has value {describe(value)}; expected a number >= 0")
        if not value >= 0 or value == math.inf:  # `not >=` also rejects NaN
            raise InvalidInputError(f"feature {feature!r} has value {value!r}; expected a finite number >= 0")
    return features


class OnlineTfidf:
    """TF-IDF whose document frequencies grow one document at a time.

    ``transform_one(x)[f] = tf(x_f) * idf(f)``, then the vector is normalised (L2 by default):

    - ``tf="log1p"`` (default): log(1 + x_f), the transform of Rennie et al. (2003) for TWCNB;
      ``tf="1+log"``: 1 + log(x_f), scikit-learn's ``sublinear_tf=True``; ``tf="raw"``: x_f;
    - ``smooth_idf=True`` (default): idf(f) = ln((1 + N) / (1 + df_f)) + 1, with N the number of
      documents learned and df_f how many of them contain f (value > 0). This is exactly
      scikit-learn's ``TfidfTransformer(smooth_idf=True)`` fitted on the same documents.
      A feature never learned (df_f = 0) gets the same formula, ln(1 + N) + 1: as rare as a
      feature can be, which is what scikit-learn gives a vocabulary column with no occurrences.
      ``smooth_idf=False``: idf(f) = ln(N / df_f) + 1 and unseen features are dropped (their
      idf would be infinite);
    - ``norm="l2"`` | ``"l1"`` | ``None``; an all-zero vector is returned unscaled.

    Features with value 0 are absent: they neither count in df nor appear in the output.
    Each call costs O(distinct features of the document). State: ``df`` (dict feature -> int,
    only positive entries) and ``n_docs``; see :meth:`get_state` / :meth:`set_state`.

    >>> t = OnlineTfidf()
    >>> t.learn_one({"spam": 2, "eggs": 1}); t.learn_one({"eggs": 3})
    >>> round(t.idf("spam"), 6), round(t.idf("eggs"), 6)
    (1.405465, 1.0)

    Parameters
    ----------
    tf : {"log1p", "1+log", "raw"}
        The transform of a feature's value.
    norm : {"l2", "l1", None}
        The normalisation of the transformed vector.
    smooth_idf : bool
        Smooth the document frequencies (and give unseen features an idf).

    Raises
    ------
    InvalidParameterError
        For a ``tf`` or ``norm`` outside its choices.
    InvalidTypeError
        For a ``smooth_idf`` that is not a bool.
    """

    def __init__(self, *, tf: str = "log1p", norm: str | None = "l2", smooth_idf: bool = True) -> None:
        self.tf = check_choice("tf", tf, _TF_CHOICES)
        self.norm = check_choice("norm", norm, _NORM_CHOICES)
        self.smooth_idf = check_bool("smooth_idf", smooth_idf)
        self.df: dict[Any, int] = {}
        self.n_docs = 0

    # -- settings and state ---------------------------------------------------------------

    def get_params(self) -> dict[str, Any]:
        """Settings as JSON-serialisable values; ``OnlineTfidf(**t.get_params())`` is an empty twin."""
        return {"tf": self.tf, "norm": self.norm, "smooth_idf": self.smooth_idf}

    def get_state(self) -> dict[str, Any]:
        """Learned state: ``{"n_docs": N, "df": {feature: count}}`` (a copy)."""
        return {"n_docs": self.n_docs, "df": dict(self.df)}

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Replace the learned state by one from :meth:`get_state` (validated first).

        Parameters
        ----------
        state : mapping
            A state from :meth:`get_state`.
        """
        if not isinstance(state, Mapping) or set(state) != {"n_docs", "df"}:
            raise InvalidInputError(f"state must be a mapping with keys 'n_docs' and 'df', got {describe(state)}")
        n_docs, df = state["n_docs"], state["df"]
        if isinstance(n_docs, bool) or not isinstance(n_docs, int) or n_docs < 0:
            raise InvalidInputError(f"state n_docs must be an int >= 0, got {describe(n_docs)}")
        if not isinstance(df, Mapping):
            raise InvalidInputError(f"state df must be a mapping feature -> int, got {describe(df)}")
        for feature, count in df.items():
            if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= n_docs:
                raise InvalidInputError(
                    f"state df[{feature!r}] = {count!r}; expected an int between 1 and n_docs={n_docs}"
                )
        self.n_docs = n_docs
        self.df = dict(df)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OnlineTfidf):
            return NotImplemented
        return (self.get_params(), self.n_docs, self.df) == (other.get_params(), other.n_docs, other.df)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        settings = f"tf={self.tf!r}, norm={self.norm!r}, smooth_idf={self.smooth_idf}"
        return f"OnlineTfidf({settings}; n_docs={self.n_docs}, features={len(self.df)})"

    # -- learning -------------------------------------------------------------------------

    def learn_one(self, features: Mapping[Any, float]) -> None:
        """Count one document: N += 1 and df_f += 1 for each feature with a value > 0.

        Parameters
        ----------
        features : mapping
            A document, feature -> value; the features with a value > 0 count as present.
        """
        _check_features(features)
        df = self.df
        for feature, value in features.items():
            if value > 0:
                df[feature] = df.get(feature, 0) + 1
        self.n_docs += 1

    def unlearn_one(self, features: Mapping[Any, float]) -> None:
        """Exact inverse of :meth:`learn_one`: N -= 1, df_f -= 1, features reaching 0 leave df."""
        _check_features(features)
        present = [feature for feature, value in features.items() if value > 0]
        # Check everything before touching the state, so a bad call changes nothing.
        if self.n_docs == 0:
            raise InvalidInputError("cannot unlearn a document: no document has been learned")
        for feature in present:
            if feature not in self.df:
                raise InvalidInputError(f"cannot unlearn feature {feature!r}: its document frequency is 0")
        df = self.df
        for feature in present:
            if df[feature] == 1:
                del df[feature]
            else:
                df[feature] -= 1
        self.n_docs -= 1

    def merge(self, other: OnlineTfidf) -> OnlineTfidf:
        """Add the counts of ``other`` into this one (in place) and return self.

        Document frequencies and N are sums, so merging equals learning both streams.
        """
        if not isinstance(other, OnlineTfidf):
            raise InvalidTypeError(f"can only merge another OnlineTfidf, got {describe(other)}")
        if other.get_params() != self.get_params():
            raise IncompatibleModelsError(
                f"cannot merge OnlineTfidf with settings {other.get_params()} into {self.get_params()}"
            )
        df = self.df
        for feature, count in list(other.df.items()):
            df[feature] = df.get(feature, 0) + count
        self.n_docs += other.n_docs
        return self

    # -- transforming ---------------------------------------------------------------------

    def idf(self, feature: Any) -> float:
        """Inverse document frequency of ``feature`` from the documents learned so far.

        Parameters
        ----------
        feature : hashable
            A feature name.

        Returns
        -------
        float
            Its inverse document frequency over the documents learned so far.
        """
        df = self.df.get(feature, 0)
        if self.smooth_idf:
            return math.log((1 + self.n_docs) / (1 + df)) + 1.0
        if df == 0:
            return math.inf
        return math.log(self.n_docs / df) + 1.0

    def transform_one(self, features: Mapping[Any, float]) -> dict[Any, float]:
        """TF-IDF weights of one document, normalised (see the class docstring).

        Parameters
        ----------
        features : mapping
            A document, feature -> value.

        Returns
        -------
        dict
            Feature -> TF-IDF weight, normalised by ``norm``.
        """
        _check_features(features)
        n_plus = 1 + self.n_docs
        df = self.df
        smooth = self.smooth_idf
        tf = self.tf
        out: dict[Any, float] = {}
        for feature, value in features.items():
            if value == 0:
                continue
            count = df.get(feature, 0)
            if smooth:
                idf = math.log(n_plus / (1 + count)) + 1.0
            elif count == 0:
                continue
            else:
                idf = math.log(self.n_docs / count) + 1.0
            if tf == "log1p":
                weight = math.log1p(value)
            elif tf == "1+log":
                weight = math.log(value) + 1.0
            else:
                weight = float(value)
            out[feature] = weight * idf
        if self.norm is not None and out:
            if self.norm == "l2":
                total = math.sqrt(math.fsum(v * v for v in out.values()))
            else:
                total = math.fsum(abs(v) for v in out.values())
            if total > 0:
                for feature in out:
                    out[feature] /= total
        return out

    def learn_transform_one(self, features: Mapping[Any, float]) -> dict[Any, float]:
        """Learn the document, then transform it (the document counts in its own IDF)."""
        self.learn_one(features)
        return self.transform_one(features)
