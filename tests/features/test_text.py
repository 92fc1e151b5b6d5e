"""Tests of streamnb.text: Tokenizer options, OnlineTfidf values."""

from __future__ import annotations

import json
import math
import pickle
import re
import sys
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer

from streamnb.errors import (
    IncompatibleModelsError,
    InvalidInputError,
    InvalidParameterError,
    InvalidTypeError,
)
from streamnb.features.text import DEFAULT_TOKEN_PATTERN, ENGLISH_STOP_WORDS, OnlineTfidf, Tokenizer

# --------------------------------------------------------------------------------------------
# Tokenizer: the default token definition
# --------------------------------------------------------------------------------------------


def test_default_tokens_exact():
    text = "Hello, World! a I x2 don't e-mail 2024 snake_case HELLO"
    assert Tokenizer()(text) == {
        "hello": 2,
        "world": 1,
        "x2": 1,
        "don": 1,
        "mail": 1,
        "2024": 1,
        "snake_case": 1,
    }


def test_result_is_a_dict_of_int_counts():
    features = Tokenizer()("spam spam eggs")
    assert isinstance(features, dict)
    assert features == {"spam": 2, "eggs": 1}
    assert all(type(v) is int for v in features.values())


def test_empty_and_separator_only_text():
    assert Tokenizer()("") == {}
    assert Tokenizer()("a b c ! ? -- ,, 1 2 3") == {}


def test_latin1_and_unicode_words():
    # Latin-1 letters take the byte-table path, Cyrillic/Greek/CJK the regex path.
    assert Tokenizer()("Ærø ÉCOLE straße µm ÿes") == {"ærø": 1, "école": 1, "straße": 1, "µm": 1, "ÿes": 1}
    assert Tokenizer()("Привет мир ΑΒΓ 東京タワー") == {"привет": 1, "мир": 1, "αβγ": 1, "東京タワー": 1}
    # Latin-1 punctuation and symbols separate words; superscripts and fractions are \w.
    assert Tokenizer()("foo«bar»baz¿qué? x²y ½½") == {"foo": 1, "bar": 1, "baz": 1, "qué": 1, "x²y": 1, "½½": 1}


SAMPLE_TEXTS = [
    "Subject: WIN a FREE iPhone!!! Click http://example.com/win?id=42 now.",
    "Dear friend,\r\n\tI am Mr. O'Neil from the bank of Lagos; transfer $10,000,000 USD.",
    "Ça va? Très bien. Grüße aus Köln — naïve café déjà vu ÀÉÎÕÜ",
    "Это тест. Ελληνικά κείμενα. 日本語のテキスト with ASCII mixed in_between",
    "tabs\tand\nnewlines\x0bvertical\x0cform\x1cfile\x1dgroup\x1erecord\x1funit\x85nel\xa0nbsp",
    "under_score __dunder__ 3.14159 a1b2c3 1st 2nd x",
]


@pytest.mark.parametrize("text", SAMPLE_TEXTS)
def test_default_equals_scikit_learn_count_vectorizer(text):
    analyzer = CountVectorizer().build_analyzer()
    assert Tokenizer()(text) == Counter(analyzer(text))


@pytest.mark.parametrize("text", SAMPLE_TEXTS)
def test_lowercase_off_equals_scikit_learn(text):
    analyzer = CountVectorizer(lowercase=False).build_analyzer()
    assert Tokenizer(lowercase=False)(text) == Counter(analyzer(text))


def _regex_reference(text: str, lowercase: bool = True) -> Counter:
    """The token definition written literally: findall of the documented pattern."""
    return Counter(re.findall(DEFAULT_TOKEN_PATTERN, text.lower() if lowercase else text))


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_default_matches_documented_pattern_on_any_text(text):
    assert Tokenizer()(text) == _regex_reference(text)
    assert Tokenizer(lowercase=False)(text) == _regex_reference(text, lowercase=False)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=255)))
def test_latin1_fast_path_matches_documented_pattern(text):
    assert Tokenizer()(text) == _regex_reference(text)
    assert Tokenizer(lowercase=False)(text) == _regex_reference(text, lowercase=False)
    assert Tokenizer().words(text) == re.findall(DEFAULT_TOKEN_PATTERN, text.lower())


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.sampled_from("ab cÉé ,x1_\u0416")),
    st.integers(min_value=1, max_value=8),
    st.sampled_from([None, ("ab", "cé")]),
)
def test_counting_path_equals_word_list_path(text, max_tokens, stop_words):
    """The fast unigram counter and the ordered word list agree on caps and stop words."""
    tokenizer = Tokenizer(max_tokens=max_tokens, stop_words=stop_words)
    expected = re.findall(DEFAULT_TOKEN_PATTERN, text.lower())[:max_tokens]
    expected = [w for w in expected if stop_words is None or w not in stop_words]
    assert tokenizer.words(text) == expected
    assert tokenizer(text) == Counter(expected)


def test_lowercase_off_keeps_case():
    assert Tokenizer(lowercase=False)("Hello hello HELLO Ünï ünï") == {
        "Hello": 1,
        "hello": 1,
        "HELLO": 1,
        "Ünï": 1,
        "ünï": 1,
    }


def test_custom_token_pattern():
    assert Tokenizer(token_pattern=r"[a-z]+")("abc1def a Z") == {"abc": 1, "def": 1, "a": 1, "z": 1}
    # One capture group: the group is the token (scikit-learn's rule); empty groups dropped.
    hashtags = Tokenizer(token_pattern=r"#(\w*)")
    assert hashtags("#spam and #Eggs #spam # end") == {"spam": 2, "eggs": 1}


def test_words_in_order():
    assert Tokenizer().words("B a c dd A b dd") == ["dd", "dd"]
    assert Tokenizer(stop_words="english").words("The end of the story is near") == ["end", "story", "near"]


# --------------------------------------------------------------------------------------------
# Tokenizer options
# --------------------------------------------------------------------------------------------


def test_stop_words_english():
    text = "This is the best offer of the year and you should not miss it"
    assert Tokenizer(stop_words="english")(text) == {"best": 1, "offer": 1, "year": 1, "miss": 1}
    assert {"the", "and", "of", "you", "not", "is", "this"} <= ENGLISH_STOP_WORDS
    assert isinstance(ENGLISH_STOP_WORDS, frozenset)


def test_stop_words_custom_list():
    tokenizer = Tokenizer(stop_words=["spam", "eggs"])
    assert tokenizer("spam and eggs and ham") == {"and": 2, "ham": 1}
    assert tokenizer.stop_words == ("eggs", "spam")


def test_word_ngrams():
    text = "the quick brown fox"
    assert Tokenizer(ngram_range=(1, 2))(text) == {
        "the": 1, "quick": 1, "brown": 1, "fox": 1,
        "the quick": 1, "quick brown": 1, "brown fox": 1,
    }
    assert Tokenizer(ngram_range=(2, 3))(text) == {
        "the quick": 1, "quick brown": 1, "brown fox": 1,
        "the quick brown": 1, "quick brown fox": 1,
    }
    assert Tokenizer(ngram_range=(5, 5))(text) == {}
    assert Tokenizer(ngram_range=(2, 2))("go go go go") == {"go go": 3}


def test_ngrams_are_built_after_stop_words_like_scikit_learn():
    text = "the price of the pills is low and the offer is real"
    stop = ["the", "of", "is", "and"]
    ours = Tokenizer(stop_words=stop, ngram_range=(1, 3))(text)
    assert ours["price pills low"] == 1
    analyzer = CountVectorizer(stop_words=stop, ngram_range=(1, 3)).build_analyzer()
    assert ours == Counter(analyzer(text))


@pytest.mark.parametrize("text", SAMPLE_TEXTS)
def test_ngrams_equal_scikit_learn(text):
    analyzer = CountVectorizer(ngram_range=(1, 3)).build_analyzer()
    assert Tokenizer(ngram_range=(1, 3))(text) == Counter(analyzer(text))


def test_char_ngrams_only():
    assert Tokenizer(ngram_range=None, char_ngram_range=(2, 3))("ab cde") == {
        " a": 1, "ab": 1, "b ": 1, " ab": 1, "ab ": 1,
        " c": 1, "cd": 1, "de": 1, "e ": 1, " cd": 1, "cde": 1, "de ": 1,
    }
    # A padded word shorter than n yields itself once.
    assert Tokenizer(ngram_range=None, char_ngram_range=(5, 6))("ab") == {" ab ": 1}


def test_char_ngrams_equal_scikit_learn_char_wb_on_token_text():
    text = "free viagra free offers now"  # whitespace chunks are exactly the tokens
    ours = Tokenizer(ngram_range=None, char_ngram_range=(2, 4))(text)
    theirs = Counter(CountVectorizer(analyzer="char_wb", ngram_range=(2, 4)).build_analyzer()(text))
    assert ours == theirs


def test_char_ngrams_prefixed_when_mixed_with_words():
    assert Tokenizer(char_ngram_range=(3, 3))("abc") == {"abc": 1, "c: ab": 1, "c:abc": 1, "c:bc ": 1}


def test_binary():
    assert Tokenizer(binary=True)("spam spam spam eggs") == {"spam": 1, "eggs": 1}
    assert Tokenizer(binary=True, ngram_range=(1, 2))("go go go") == {"go": 1, "go go": 1}


def test_max_tokens_keeps_the_first_tokens():
    text = "a one b two c three d four"
    assert Tokenizer(max_tokens=2)(text) == {"one": 1, "two": 1}
    # Non-Latin-1 text goes through the regex path: same rule.
    assert Tokenizer(max_tokens=2)("Ж one b two Жж three") == {"one": 1, "two": 1}
    assert Tokenizer(max_tokens=3, ngram_range=(1, 2))(text) == {
        "one": 1, "two": 1, "three": 1, "one two": 1, "two three": 1,
    }
    assert Tokenizer(max_tokens=100)(text) == {"one": 1, "two": 1, "three": 1, "four": 1}
    # Stop words are removed after the cap (the cap bounds the work done).
    assert Tokenizer(max_tokens=3, stop_words=["two"])(text) == {"one": 1, "three": 1}


def test_max_chars_cuts_the_input():
    assert Tokenizer(max_chars=6)("abc defghi") == {"abc": 1, "de": 1}
    assert Tokenizer(max_chars=None)("x" * 10) == {"x" * 10: 1}
    big = "word " * 300_000  # 1.5 MB: the default cap keeps the first 1,000,000 characters
    assert Tokenizer()(big) == {"word": 200_000}


def test_stemming():
    assert Tokenizer(stemmer="snowball")("Running runs runner cats generously") == {
        "run": 2, "runner": 1, "cat": 1, "generous": 1,
    }
    assert Tokenizer(stemmer="snowball", ngram_range=(2, 2))("running cats running cats") == {
        "run cat": 2, "cat run": 1,
    }


def test_stemming_missing_package_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "snowballstemmer", None)  # makes `import` raise ImportError
    with pytest.raises(ImportError, match=r"pip install streamnb\[stem\]"):
        Tokenizer(stemmer="snowball")


# --------------------------------------------------------------------------------------------
# Tokenizer settings, pickling, errors
# --------------------------------------------------------------------------------------------

NON_DEFAULT = dict(
    lowercase=False,
    token_pattern=r"(?u)\b\w+\b",
    stop_words=["b", "a"],
    ngram_range=(1, 2),
    char_ngram_range=(2, 3),
    binary=True,
    max_tokens=50,
    max_chars=1000,
    stemmer="snowball",
)


def test_get_params_round_trip_through_json():
    tokenizer = Tokenizer(**NON_DEFAULT)
    params = tokenizer.get_params()
    assert params == {
        "lowercase": False,
        "token_pattern": r"(?u)\b\w+\b",
        "stop_words": ["a", "b"],
        "ngram_range": [1, 2],
        "char_ngram_range": [2, 3],
        "binary": True,
        "max_tokens": 50,
        "max_chars": 1000,
        "stemmer": "snowball",
    }
    again = Tokenizer(**json.loads(json.dumps(params)))
    assert again == tokenizer
    assert hash(again) == hash(tokenizer)
    assert again("Running A b cats") == tokenizer("Running A b cats")
    assert Tokenizer() != tokenizer
    assert Tokenizer(**Tokenizer().get_params()) == Tokenizer()


def test_attributes_have_the_constructor_names():
    tokenizer = Tokenizer(**NON_DEFAULT)
    assert tokenizer.lowercase is False
    assert tokenizer.ngram_range == (1, 2)
    assert tokenizer.char_ngram_range == (2, 3)
    assert tokenizer.stop_words == ("a", "b")
    assert tokenizer.max_tokens == 50
    assert tokenizer.stemmer == "snowball"


def test_pickle_round_trip():
    for tokenizer in (Tokenizer(), Tokenizer(**NON_DEFAULT)):
        clone = pickle.loads(pickle.dumps(tokenizer))
        assert clone == tokenizer
        assert clone("The Running cats, the END") == tokenizer("The Running cats, the END")


def test_repr_shows_changed_settings():
    assert repr(Tokenizer()) == "Tokenizer()"
    assert repr(Tokenizer(binary=True)) == "Tokenizer(binary=True)"


@pytest.mark.parametrize(
    "kwargs, error, fragment",
    [
        ({"lowercase": "yes"}, InvalidTypeError, "'yes'"),
        ({"token_pattern": "("}, InvalidParameterError, "'('"),
        ({"token_pattern": r"(a)(b)"}, InvalidParameterError, "at most one capture group"),
        ({"token_pattern": 5}, InvalidTypeError, "5 (type int)"),
        ({"stop_words": "german"}, InvalidParameterError, "'german'"),
        ({"stop_words": ["ok", 3]}, InvalidTypeError, "3 (type int)"),
        ({"stop_words": 3}, InvalidTypeError, "3 (type int)"),
        ({"ngram_range": (2, 1)}, InvalidParameterError, "(2, 1)"),
        ({"ngram_range": (0, 1)}, InvalidParameterError, "(0, 1)"),
        ({"ngram_range": 2}, InvalidTypeError, "2 (type int)"),
        ({"ngram_range": (1.0, 2)}, InvalidTypeError, "1.0"),
        ({"ngram_range": None}, InvalidParameterError, "both be None"),
        ({"char_ngram_range": (3, 2)}, InvalidParameterError, "(3, 2)"),
        ({"binary": 1}, InvalidTypeError, "1 (type int)"),
        ({"max_tokens": 0}, InvalidParameterError, "0"),
        ({"max_tokens": 2.5}, InvalidTypeError, "2.5"),
        ({"max_chars": -1}, InvalidParameterError, "-1"),
        ({"stemmer": "porter"}, InvalidParameterError, "'porter'"),
    ],
)
def test_bad_settings_raise_naming_the_value(kwargs, error, fragment):
    with pytest.raises(error) as info:
        Tokenizer(**kwargs)
    assert fragment in str(info.value)


def test_non_str_input_raises():
    with pytest.raises(InvalidTypeError, match="bytes"):
        Tokenizer()(b"bytes are not text")
    with pytest.raises(InvalidTypeError, match="None"):
        Tokenizer()(None)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# OnlineTfidf
# --------------------------------------------------------------------------------------------

DOCS = [{"a": 1, "b": 2}, {"b": 1, "c": 3}, {"a": 4}]


def _streamed(docs, **params) -> OnlineTfidf:
    tfidf = OnlineTfidf(**params)
    for doc in docs:
        tfidf.learn_one(doc)
    return tfidf


def test_tfidf_hand_computed():
    tfidf = _streamed(DOCS)
    assert tfidf.n_docs == 3
    assert tfidf.df == {"a": 2, "b": 2, "c": 1}
    # idf = ln((1 + N) / (1 + df)) + 1 with N = 3
    assert tfidf.idf("a") == pytest.approx(1.2876820724517808, abs=1e-15)  # ln(4/3) + 1
    assert tfidf.idf("c") == pytest.approx(1.6931471805599454, abs=1e-15)  # ln(4/2) + 1
    # log(1+1) cancels in the L2 normalisation: (idf_a, idf_c) / ||(idf_a, idf_c)||
    out = tfidf.transform_one({"a": 1, "c": 1})
    assert out == pytest.approx({"a": 0.6053485081062916, "c": 0.7959605415681652}, abs=1e-15)
    # equal idf for a and b; tf log(1+3) = 2 log 2 vs log(1+1): the vector is (2, 1) / sqrt(5)
    out = tfidf.transform_one({"a": 3, "b": 1})
    assert out == pytest.approx({"a": 2 / math.sqrt(5), "b": 1 / math.sqrt(5)}, abs=1e-15)


def test_tfidf_unseen_features_and_empty_state():
    tfidf = _streamed(DOCS)
    # df = 0: idf = ln(1 + N) + 1, the largest idf (the rarest possible feature).
    assert tfidf.idf("never") == pytest.approx(math.log(4) + 1, abs=1e-15)
    out = tfidf.transform_one({"never": 1})
    assert out == {"never": 1.0}
    # Nothing learned: idf = 1 everywhere, only tf and the norm remain.
    fresh = OnlineTfidf(norm=None)
    assert fresh.transform_one({"x": 1, "y": 3}) == {"x": math.log(2), "y": math.log(4)}
    # smooth_idf=False: unseen features are dropped (infinite idf), ln(N/df)+1 otherwise.
    rough = _streamed(DOCS, smooth_idf=False, norm=None, tf="raw")
    assert rough.transform_one({"c": 2, "never": 5}) == {"c": 2 * (math.log(3) + 1)}
    assert rough.idf("never") == math.inf


def test_tfidf_zero_values_are_absent():
    tfidf = OnlineTfidf()
    tfidf.learn_one({"a": 1, "z": 0})
    assert tfidf.df == {"a": 1}
    assert tfidf.transform_one({"a": 0, "z": 0}) == {}
    assert tfidf.transform_one({}) == {}


COUNTS = np.array(
    [
        [3, 0, 1, 0, 0, 2],
        [0, 1, 0, 0, 5, 0],
        [1, 1, 1, 1, 0, 0],
        [0, 0, 0, 7, 1, 1],
        [2, 0, 0, 0, 0, 0],
        [0, 4, 2, 0, 1, 9],
    ]
)


def _rows(matrix):
    return [{j: int(v) for j, v in enumerate(row) if v} for row in matrix]


def _dense(out: dict, width: int) -> np.ndarray:
    vector = np.zeros(width)
    for j, v in out.items():
        vector[j] = v
    return vector


@pytest.mark.parametrize(
    "ours, theirs",
    [
        ({"tf": "1+log", "norm": "l2"}, {"sublinear_tf": True, "norm": "l2"}),
        ({"tf": "raw", "norm": "l2"}, {"sublinear_tf": False, "norm": "l2"}),
        ({"tf": "1+log", "norm": "l1"}, {"sublinear_tf": True, "norm": "l1"}),
        ({"tf": "raw", "norm": None}, {"sublinear_tf": False, "norm": None}),
        ({"tf": "raw", "norm": "l2", "smooth_idf": False}, {"sublinear_tf": False, "smooth_idf": False}),
    ],
)
def test_tfidf_equals_scikit_learn(ours, theirs):
    tfidf = _streamed(_rows(COUNTS), **ours)
    expected = TfidfTransformer(**theirs).fit_transform(COUNTS).toarray()
    for row, doc in enumerate(_rows(COUNTS)):
        np.testing.assert_allclose(_dense(tfidf.transform_one(doc), COUNTS.shape[1]), expected[row], rtol=0, atol=1e-12)


def test_tfidf_log1p_equals_scikit_learn_on_shifted_counts():
    # scikit-learn's sublinear tf is 1 + ln(x); ours (Rennie's) is ln(1 + x) = 1 + ln((1 + x) / e).
    # So scikit-learn fitted on the counts, applied to (1 + x) / e at the nonzero cells, must agree.
    tfidf = _streamed(_rows(COUNTS))
    transformer = TfidfTransformer(sublinear_tf=True).fit(COUNTS)
    shifted = np.where(COUNTS > 0, (1.0 + COUNTS) / math.e, 0.0)
    expected = transformer.transform(shifted).toarray()
    for row, doc in enumerate(_rows(COUNTS)):
        np.testing.assert_allclose(_dense(tfidf.transform_one(doc), COUNTS.shape[1]), expected[row], rtol=0, atol=1e-12)


def test_tfidf_learn_transform_one():
    a = _streamed(DOCS[:2])
    b = _streamed(DOCS[:2])
    out = a.learn_transform_one(DOCS[2])
    b.learn_one(DOCS[2])
    assert out == b.transform_one(DOCS[2])
    assert a == b


def test_tfidf_unlearn_restores_state():
    tfidf = _streamed(DOCS[:2])
    before = tfidf.get_state()
    tfidf.learn_one(DOCS[2])
    tfidf.unlearn_one(DOCS[2])
    assert tfidf.get_state() == before
    tfidf.unlearn_one(DOCS[1])
    tfidf.unlearn_one(DOCS[0])
    assert tfidf.get_state() == {"n_docs": 0, "df": {}}


def test_tfidf_bad_unlearn_changes_nothing():
    tfidf = _streamed(DOCS)
    before = tfidf.get_state()
    with pytest.raises(InvalidInputError, match="'zzz'"):
        tfidf.unlearn_one({"a": 1, "zzz": 1})
    assert tfidf.get_state() == before
    with pytest.raises(InvalidInputError, match="no document"):
        OnlineTfidf().unlearn_one({})


@pytest.mark.parametrize(
    "features, error, fragment",
    [
        ({"a": -1}, InvalidInputError, "-1"),
        ({"a": float("nan")}, InvalidInputError, "nan"),
        ({"a": float("inf")}, InvalidInputError, "inf"),
        ({"a": "3"}, InvalidTypeError, "'3' (type str)"),
        ({"a": True}, InvalidTypeError, "True"),
        (["a"], InvalidTypeError, "list"),
    ],
)
def test_tfidf_bad_input_raises_and_changes_nothing(features, error, fragment):
    tfidf = _streamed(DOCS)
    before = tfidf.get_state()
    for method in (tfidf.learn_one, tfidf.unlearn_one, tfidf.transform_one, tfidf.learn_transform_one):
        with pytest.raises(error) as info:
            method({"b": 1, **features} if isinstance(features, dict) else features)
        assert fragment in str(info.value)
    assert tfidf.get_state() == before


def test_tfidf_merge_is_concatenation():
    left, right = _streamed(DOCS[:1]), _streamed(DOCS[1:])
    assert left.merge(right) is left
    assert left == _streamed(DOCS)
    assert right == _streamed(DOCS[1:])  # the other one is untouched
    with pytest.raises(IncompatibleModelsError, match="1\\+log"):
        _streamed(DOCS).merge(OnlineTfidf(tf="1+log"))
    with pytest.raises(InvalidTypeError):
        OnlineTfidf().merge({"df": {}})  # type: ignore[arg-type]


def test_tfidf_state_and_params_round_trip():
    tfidf = _streamed(DOCS, tf="raw", norm="l1")
    assert tfidf.get_params() == {"tf": "raw", "norm": "l1", "smooth_idf": True}
    copy = OnlineTfidf(**json.loads(json.dumps(tfidf.get_params())))
    copy.set_state(json.loads(json.dumps(tfidf.get_state())))
    assert copy == tfidf
    assert copy.transform_one({"a": 2, "c": 1}) == tfidf.transform_one({"a": 2, "c": 1})
    clone = pickle.loads(pickle.dumps(tfidf))
    assert clone == tfidf
    with pytest.raises(InvalidInputError, match="n_docs=3"):
        copy.set_state({"n_docs": 3, "df": {"a": 4}})
    with pytest.raises(InvalidInputError):
        copy.set_state({"n_docs": -1, "df": {}})
    assert copy == tfidf  # failed set_state left it unchanged


def test_tfidf_repr():
    assert repr(_streamed(DOCS)) == "OnlineTfidf(tf='log1p', norm='l2', smooth_idf=True; n_docs=3, features=3)"


def test_tfidf_bad_settings():
    with pytest.raises(InvalidParameterError, match="'log'"):
        OnlineTfidf(tf="log")
    with pytest.raises(InvalidParameterError, match="'l3'"):
        OnlineTfidf(norm="l3")
    with pytest.raises(InvalidTypeError, match="'no'"):
        OnlineTfidf(smooth_idf="no")  # type: ignore[arg-type]


docs_strategy = st.lists(
    st.dictionaries(st.sampled_from("abcdefgh"), st.integers(min_value=0, max_value=5), max_size=6),
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(docs_strategy, st.randoms(use_true_random=False))
def test_tfidf_unlearn_in_any_order_empties_and_norm_is_one(docs, rng):
    tfidf = _streamed(docs)
    for doc in docs:
        out = tfidf.transform_one(doc)
        if any(doc.values()):
            assert math.fsum(v * v for v in out.values()) == pytest.approx(1.0, abs=1e-12)
            assert set(out) == {f for f, v in doc.items() if v}
    order = list(docs)
    rng.shuffle(order)
    for doc in order:
        tfidf.unlearn_one(doc)
    assert tfidf.get_state() == {"n_docs": 0, "df": {}}


def test_core_word_characters_are_pythons_on_every_code_point():
    """The core's tables (src/unicode_tables.rs) are Python's \\w, for all of Unicode."""
    import sys
    import unicodedata

    from streamnb import _core

    flags, version = _core.WordTokenizer._unicode_tables(sys.maxunicode + 1)
    assert version == unicodedata.unidata_version, "regenerate src/unicode_tables.rs with this Python"
    word = re.compile(r"\w")
    expected = bytes(word.match(chr(code)) is not None for code in range(sys.maxunicode + 1))
    assert flags == expected


def test_core_lowercase_and_words_are_pythons_on_every_code_point():
    """Each character between two letters, through the core and through Python's lower() + re.

    Text with a capital sigma (lowered by context) or lone surrogates (not UTF-8) is cut and
    lowercased by Python before the core reads it; both paths are checked."""
    import sys

    tokenizer = Tokenizer()
    special = {0x3A3} | set(range(0xD800, 0xE000))
    for start in range(0, sys.maxunicode + 1, 1 << 16):
        codes = [c for c in range(start, min(start + (1 << 16), sys.maxunicode + 1)) if c not in special]
        text = " ".join(f"x{chr(code)}y" for code in codes)
        assert tokenizer.words(text) == re.findall(r"\w\w+", text.lower())
    for text in ("ΟΔΟΣ ΣΑΣ aΣ Σ", "ab\ud800cd \udfffΣΣ x\udc80yz"):
        assert tokenizer.words(text) == re.findall(r"\w\w+", text.lower())
        assert Tokenizer(max_chars=7).words(text) == re.findall(r"\w\w+", text[:7].lower())
