"""The boundary of the compiled core (streamnb._core): panics, token kinds, hostile tokens."""

from __future__ import annotations

import pytest

from streamnb import _core
from streamnb.errors import InternalError, InvalidTypeError
from streamnb.store import Vocabulary


def test_a_panic_becomes_an_internal_error_not_a_panic_exception():
    with pytest.raises(InternalError, match="deliberate panic"):
        _core._panic_for_tests()


def test_tokens_of_every_kind_round_trip_with_python_dict_semantics():
    vocabulary = Vocabulary()
    tokens = ["a", "b", 1, ("x", 2), "\ud800", b"raw", None, 2.5, "", "\xff"]
    ids = vocabulary.find_or_add(tokens)
    assert ids.tolist() == list(range(len(tokens)))
    assert vocabulary.tokens(ids) == tokens
    # True == 1 == 1.0 are one dict key in Python, and one feature here.
    assert vocabulary.find([True, 1.0, 1]).tolist() == [2, 2, 2]
    assert vocabulary.mapping() == dict(zip(tokens, range(len(tokens))))


def test_unusable_tokens_raise_before_anything_is_added():
    vocabulary = Vocabulary()
    with pytest.raises(InvalidTypeError, match="feature names must be"):
        vocabulary.find_or_add(["fine", frozenset({1})])
    assert len(vocabulary) == 0 and vocabulary.epoch == 0


def test_removed_ids_are_reused_and_the_epoch_moves():
    vocabulary = Vocabulary()
    vocabulary.find_or_add(["a", "b", "c"])
    epoch = vocabulary.epoch
    vocabulary.remove([1])
    assert vocabulary.epoch > epoch and vocabulary.find(["b"]).tolist() == [-1]
    assert vocabulary.free_ids() == [1] and vocabulary.capacity == 3
    assert vocabulary.find_or_add(["d"]).tolist() == [1]


def test_hashed_ids_are_crc32_buckets_of_the_token_text():
    import zlib

    vocabulary = Vocabulary(n_buckets=1000)
    words = ["alpha", "\u00e9t\u00e9", 42, ("a", 1)]
    expected = [zlib.crc32(str(w).encode("utf-8", "surrogatepass")) % 1000 for w in words]
    assert vocabulary.find(words).tolist() == expected
    assert vocabulary.token(7) == "#7" and len(vocabulary) == 0


def test_a_million_distinct_tokens():
    vocabulary = Vocabulary()
    tokens = [f"t{i}" for i in range(1_000_000)]
    assert vocabulary.find_or_add(tokens)[-1] == 999_999
    assert len(vocabulary) == 1_000_000 and vocabulary.find(["t123456"]).tolist() == [123456]
    assert vocabulary.nbytes() < 40 * 1_000_000
