"""Tests of streamnb.datasets: corpus layouts, ordering, download, worked examples."""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import tarfile
import urllib.request
from collections import Counter
from datetime import datetime, timezone
from fractions import Fraction
from pathlib import Path

import pytest

from streamnb.errors import CorpusIntegrityError, CorpusNotFoundError, InvalidParameterError
from streamnb.filter import datasets
from streamnb.filter.datasets import (
    Message,
    china_japan,
    download_spamassassin,
    load_spamassassin,
    parse_date,
    play_tennis,
)

# --- a tiny synthetic corpus ------------------------------------------------------------

# (group, number, header lines). Chosen to exercise every ordering rule; see EXPECTED_DATE_ORDER.
SPECS = [
    ("easy_ham", 1, ["Date: Mon, 02 Sep 2002 10:00:00 +0000"]),
    ("easy_ham", 2, []),  # undated: borrows easy_ham/1's date (previous in file order)
    ("easy_ham", 3, ["Date: Sun, 01 Sep 2002 09:00:00 +0000"]),
    ("easy_ham_2", 1, ["Date: Tue, 03 Sep 2002 12:00:00 +0200"]),
    ("easy_ham_2", 2, ["Date: Wed,", " 04 Sep 2002 07:00:00 +0000"]),  # folded, CRLF below
    ("hard_ham", 1, []),  # undated, first of its group: borrows hard_ham/2's date
    ("hard_ham", 2, ["Date: Mon, 02 Sep 2002 10:00:00 +0000"]),  # ties with easy_ham/1
    ("spam", 1, ["Date: Wed, 04 Sep 0102 08:00:00 +0000"]),  # years-since-1900 bug
    ("spam", 2, ["Date: not a date at all"]),  # unparseable: borrows spam/1's date
    ("spam_2", 1, []),  # its group has no date at all: goes last
]
PACKAGED_GROUP = {
    "easy_ham": "easy-ham-1",
    "easy_ham_2": "easy-ham-2",
    "hard_ham": "hard-ham-1",
    "spam": "spam-1",
    "spam_2": "spam-2",
}
EXPECTED_DATE_ORDER = [
    ("easy_ham", 3),
    ("easy_ham", 1),
    ("easy_ham", 2),
    ("hard_ham", 1),
    ("hard_ham", 2),
    ("easy_ham_2", 1),
    ("easy_ham_2", 2),
    ("spam", 1),
    ("spam", 2),
    ("spam_2", 1),
]
EXPECTED_FILE_ORDER = sorted(
    EXPECTED_DATE_ORDER, key=lambda gn: (list(PACKAGED_GROUP).index(gn[0]), gn[1])
)


def make_raw(group: str, number: int, header_lines: list[str]) -> bytes:
    lines = [
        "From sender@example.com  Mon Sep  2 10:00:00 2002",
        f"Subject: message {group} {number}",
        *header_lines,
        "",
        f"Body of {group} {number}.",
        # A Date line in the body must not count as the header's.
        "Date: Mon, 01 Jan 2001 00:00:00 +0000",
        "",
    ]
    newline = "\r\n" if (group, number) == ("easy_ham_2", 2) else "\n"
    return newline.join(lines).encode("latin-1")


def corpus_files() -> list[tuple[str, str, bytes]]:
    """(group, file name, raw) of the synthetic corpus."""
    files = []
    for group, number, header in SPECS:
        raw = make_raw(group, number, header)
        files.append((group, f"{number:05d}.{hashlib.md5(raw).hexdigest()}", raw))
    return files


def add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def build_official_folder(root: Path) -> Path:
    for group, name, raw in corpus_files():
        folder = root / group
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(raw)
        (folder / "cmds").write_text("mv 00001.x 00001.y\n")
    return root


def build_official_archives(root: Path, date: str = "20030228") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    by_group: dict[str, list[tuple[str, bytes]]] = {}
    for group, name, raw in corpus_files():
        by_group.setdefault(group, []).append((name, raw))
    for group, members in by_group.items():
        with tarfile.open(root / f"{date}_{group}.tar.bz2", "w:bz2") as tar:
            add_bytes(tar, f"{group}/cmds", b"mv a b\n")
            for name, raw in members:
                add_bytes(tar, f"{group}/{name}", raw)
    return root


def build_packaged(path: Path) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        add_bytes(tar, "package/package.json", b"{}")
        add_bytes(tar, "package/data/data.js", b"module.exports = [];")
        for group, name, raw in corpus_files():
            base = f"package/data/{PACKAGED_GROUP[group]}/{name}"
            add_bytes(tar, base + ".json", json.dumps({"text": raw.decode("latin-1")}).encode())
            add_bytes(tar, base + ".txt", raw)
    return path


def keys(messages: list[Message]) -> list[tuple[str, int]]:
    return [(m.group, int(m.name[:5])) for m in messages]


def utc(*args: int) -> float:
    return datetime(*args, tzinfo=timezone.utc).timestamp()


@pytest.fixture(autouse=True)
def no_ambient_corpus(monkeypatch, tmp_path):
    """Isolate every test from a real corpus or cache on the machine."""
    monkeypatch.delenv(datasets.SPAMASSASSIN_ENV, raising=False)
    monkeypatch.setenv(datasets.CACHE_ENV, str(tmp_path / "empty-cache"))


# --- layouts ------------------------------------------------------------------------------


def test_three_layouts_give_identical_records(tmp_path):
    folder = build_official_folder(tmp_path / "official")
    archives = build_official_archives(tmp_path / "archives")
    packaged = build_packaged(tmp_path / "spamassassin.tgz")
    extracted = tmp_path / "extracted"
    with tarfile.open(packaged) as tar:
        tar.extractall(extracted, filter="data")
    results = [
        load_spamassassin(source, order="file")
        for source in (folder, archives, packaged, extracted)
    ]
    expected_raw = {(g, n): raw for g, n, raw in corpus_files()}
    for messages in results:
        assert keys(messages) == EXPECTED_FILE_ORDER
        assert {(m.group, m.name): m.raw for m in messages} == expected_raw
        assert [(m.label, m.date) for m in messages] == [(m.label, m.date) for m in results[0]]
    labels = Counter(m.label for m in results[0])
    assert labels == {"ham": 7, "spam": 3}
    assert all(m.label == ("spam" if m.group.startswith("spam") else "ham") for m in results[0])


def test_single_official_archive(tmp_path):
    archives = build_official_archives(tmp_path / "archives")
    messages = load_spamassassin(archives / "20030228_easy_ham.tar.bz2", order="file")
    assert keys(messages) == [("easy_ham", 1), ("easy_ham", 2), ("easy_ham", 3)]
    assert {m.label for m in messages} == {"ham"}


def test_folder_holding_the_packaged_archive(tmp_path):
    folder = tmp_path / "downloads"
    folder.mkdir()
    build_packaged(folder / "spamassassin-public-corpus.tgz")
    assert keys(load_spamassassin(folder, order="file")) == EXPECTED_FILE_ORDER
    build_packaged(folder / "another-copy.tar.gz")
    with pytest.raises(CorpusNotFoundError, match="several archives .*another-copy.tar.gz"):
        load_spamassassin(folder)


def test_latest_release_of_a_group_wins(tmp_path):
    archives = build_official_archives(tmp_path / "archives")
    # An older spam release with a different message must be ignored.
    with tarfile.open(archives / "20021010_spam.tar.bz2", "w:bz2") as tar:
        add_bytes(tar, "spam/00999." + "0" * 32, b"Subject: old\n\nold release\n")
    messages = load_spamassassin(archives, order="file")
    assert keys(messages) == EXPECTED_FILE_ORDER


def test_groups_filter_accepts_both_spellings(tmp_path):
    folder = build_official_folder(tmp_path / "official")
    messages = load_spamassassin(folder, order="file", groups=["spam-1", "hard_ham"])
    assert keys(messages) == [("hard_ham", 1), ("hard_ham", 2), ("spam", 1), ("spam", 2)]
    with pytest.raises(InvalidParameterError, match="'spam-3'"):
        load_spamassassin(folder, groups=["spam-3"])


def test_bad_order_is_rejected(tmp_path):
    with pytest.raises(InvalidParameterError, match="'by-size'"):
        load_spamassassin(build_official_folder(tmp_path / "c"), order="by-size")


def test_message_repr_hides_raw_bytes(tmp_path):
    message = load_spamassassin(build_official_folder(tmp_path / "c"), order="file")[0]
    assert "Body of" not in repr(message) and "easy_ham" in repr(message)


# --- order ----------------------------------------------------------------------------------


def test_date_order_rules(tmp_path):
    messages = load_spamassassin(build_official_folder(tmp_path / "c"))
    assert keys(messages) == EXPECTED_DATE_ORDER
    dates = {(m.group, int(m.name[:5])): m.date for m in messages}
    assert dates[("easy_ham", 2)] is None  # the borrowed date is only a sort key
    assert dates[("hard_ham", 1)] is None
    assert dates[("spam", 2)] is None
    assert dates[("spam_2", 1)] is None  # a Date line in the body does not count
    assert dates[("easy_ham_2", 1)] == utc(2002, 9, 3, 10, 0, 0)
    assert dates[("easy_ham_2", 2)] == utc(2002, 9, 4, 7, 0, 0)
    assert dates[("spam", 1)] == utc(2002, 9, 4, 8, 0, 0)


def test_date_order_is_the_same_for_every_layout(tmp_path):
    archives = build_official_archives(tmp_path / "a")
    packaged = build_packaged(tmp_path / "p.tgz")
    assert keys(load_spamassassin(archives)) == EXPECTED_DATE_ORDER
    assert keys(load_spamassassin(packaged)) == EXPECTED_DATE_ORDER


def test_seeded_shuffle_is_reproducible(tmp_path):
    folder = build_official_folder(tmp_path / "c")
    first = keys(load_spamassassin(folder, order="shuffle", seed=7))
    again = keys(load_spamassassin(folder, order="shuffle", seed=7))
    other = keys(load_spamassassin(folder, order="shuffle", seed=8))
    assert first == again
    assert sorted(first) == sorted(EXPECTED_FILE_ORDER)
    assert other != first
    # Documented: the file order shuffled by random.Random(seed).
    expected = list(EXPECTED_FILE_ORDER)
    random.Random(7).shuffle(expected)
    assert first == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"Date: Thu, 22 Aug 2002 18:26:25 +0700\n\nbody", utc(2002, 8, 22, 11, 26, 25)),
        (b"Subject: x\r\nDATE: Thu, 22 Aug 2002 18:26:25 -0000\r\n\r\n", utc(2002, 8, 22, 18, 26, 25)),
        (b"Date: Thu, 22 Aug 2002 18:26:25\n\n", utc(2002, 8, 22, 18, 26, 25)),  # no zone: UTC
        (b"Date: Thu,\n\t22 Aug 2002\n 18:26:25 +0000\n\n", utc(2002, 8, 22, 18, 26, 25)),
        (b"Date: Sat, 02 Feb 0102 11:39:51 +0200\n\n", utc(2002, 2, 2, 9, 39, 51)),
        (b"Date: 22 Aug 02 18:26 GMT\n\n", utc(2002, 8, 22, 18, 26, 0)),
        (b"Subject: x\n\nDate: Thu, 22 Aug 2002 18:26:25 +0700\n", None),
        (b"Delivery-Date: Thu, 22 Aug 2002 18:26:25 +0700\n\n", None),
        (b"Date: 2002/09/14 Sat 13:06:03 GMT\n\n", None),
        (b"Date: Thu, 45 Aug 2002 18:26:25 +0700\n\n", None),
        (b"Date:\n\n", None),
        (b"", None),
    ],
)
def test_parse_date(raw, expected):
    assert parse_date(raw) == expected


# --- locating the corpus ---------------------------------------------------------------------


def test_not_found_message_says_how_to_get_it(tmp_path):
    with pytest.raises(CorpusNotFoundError) as caught:
        load_spamassassin()
    text = str(caught.value)
    assert "STREAMNB_SPAMASSASSIN" in text
    assert "download=True" in text
    assert "path=" in text
    assert str(tmp_path / "empty-cache") in text


def test_missing_path_and_missing_env_target_are_named(tmp_path, monkeypatch):
    with pytest.raises(CorpusNotFoundError, match="nowhere"):
        load_spamassassin(tmp_path / "nowhere")
    monkeypatch.setenv(datasets.SPAMASSASSIN_ENV, str(tmp_path / "gone"))
    with pytest.raises(CorpusNotFoundError, match="STREAMNB_SPAMASSASSIN=.*gone"):
        load_spamassassin()


def test_folder_without_a_corpus_is_reported(tmp_path):
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "notes.txt").write_text("hello")
    with pytest.raises(CorpusNotFoundError, match="junk"):
        load_spamassassin(tmp_path / "junk")
    with pytest.raises(CorpusNotFoundError, match="not a corpus archive"):
        load_spamassassin(tmp_path / "junk" / "notes.txt")


def test_corrupt_archive_raises_integrity_error(tmp_path):
    broken = tmp_path / "broken.tgz"
    broken.write_bytes(b"\x1f\x8b\x08\x00 this is not really gzip")
    with pytest.raises(CorpusIntegrityError, match="broken.tgz"):
        load_spamassassin(broken)


def test_environment_variable_is_used(tmp_path, monkeypatch):
    packaged = build_packaged(tmp_path / "p.tgz")
    monkeypatch.setenv(datasets.SPAMASSASSIN_ENV, str(packaged))
    assert keys(load_spamassassin()) == EXPECTED_DATE_ORDER


def test_path_argument_wins_over_environment(tmp_path, monkeypatch):
    folder = build_official_folder(tmp_path / "c")
    (tmp_path / "other").mkdir()
    monkeypatch.setenv(datasets.SPAMASSASSIN_ENV, str(tmp_path / "other"))
    assert len(load_spamassassin(folder)) == len(SPECS)


# --- download ---------------------------------------------------------------------------------


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def mirror(tmp_path):
    """A local folder of official-style archives, served through file:// URLs."""
    return build_official_archives(tmp_path / "mirror")


def checksums_of(mirror: Path, algorithm: str = "sha256") -> dict[str, str]:
    return {
        p.name: f"{algorithm}:{hashlib.new(algorithm, p.read_bytes()).hexdigest()}"
        for p in sorted(mirror.glob("*.tar.bz2"))
    }


def test_download_with_correct_checksums(tmp_path, mirror):
    cache = tmp_path / "cache"
    folder = download_spamassassin(cache, base_url=mirror.as_uri(), checksums=checksums_of(mirror))
    assert folder == cache / "spamassassin"
    for archive in mirror.glob("*.tar.bz2"):
        assert (folder / archive.name).read_bytes() == archive.read_bytes()
    assert not list(folder.glob("*.part"))
    recorded = dict(line.split("  ")[::-1] for line in (folder / "SHA256SUMS").read_text().splitlines())
    assert recorded == {p.name: sha256_of(p) for p in mirror.glob("*.tar.bz2")}
    assert keys(load_spamassassin(folder)) == EXPECTED_DATE_ORDER
    # The cache is now found without a path.
    assert keys(load_spamassassin(cache_dir=cache)) == EXPECTED_DATE_ORDER


def test_download_accepts_md5_and_bare_hex(tmp_path, mirror):
    md5 = checksums_of(mirror, "md5")
    bare = {name: value.split(":")[1] for name, value in checksums_of(mirror).items()}
    download_spamassassin(tmp_path / "c1", base_url=mirror.as_uri(), checksums=md5)
    download_spamassassin(tmp_path / "c2", base_url=mirror.as_uri(), checksums=bare)
    assert len(load_spamassassin(tmp_path / "c1" / "spamassassin")) == len(SPECS)
    assert len(load_spamassassin(tmp_path / "c2" / "spamassassin")) == len(SPECS)


def test_download_checksum_mismatch_fails_cleanly(tmp_path, mirror):
    checksums = checksums_of(mirror)
    checksums["20030228_spam.tar.bz2"] = "sha256:" + "0" * 64
    cache = tmp_path / "cache"
    with pytest.raises(CorpusIntegrityError) as caught:
        download_spamassassin(cache, base_url=mirror.as_uri(), checksums=checksums)
    text = str(caught.value)
    assert "20030228_spam.tar.bz2" in text and "0" * 64 in text
    assert sha256_of(mirror / "20030228_spam.tar.bz2") in text
    folder = cache / "spamassassin"
    assert not (folder / "20030228_spam.tar.bz2").exists()
    assert not list(folder.glob("*.part"))


def test_download_rejects_a_non_archive(tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "20030228_spam.tar.bz2").write_text("<html>404 Not Found</html>")
    with pytest.raises(CorpusIntegrityError, match="not a tar archive"):
        download_spamassassin(tmp_path / "cache", base_url=mirror.as_uri(), checksums={"20030228_spam.tar.bz2": None})
    assert not list((tmp_path / "cache" / "spamassassin").iterdir())


def test_download_of_a_missing_file_is_not_found(tmp_path):
    (tmp_path / "mirror").mkdir()
    with pytest.raises(CorpusNotFoundError, match="could not download .*20030228_spam.tar.bz2"):
        download_spamassassin(
            tmp_path / "cache", base_url=(tmp_path / "mirror").as_uri(), checksums={"20030228_spam.tar.bz2": None}
        )


def test_bad_checksum_parameter(tmp_path, mirror):
    with pytest.raises(InvalidParameterError, match="'sha1:abc'"):
        download_spamassassin(tmp_path, base_url=mirror.as_uri(), checksums={"20030228_spam.tar.bz2": "sha1:abc"})


def test_corrupt_cached_copy_is_fetched_again(tmp_path, mirror, monkeypatch):
    cache = tmp_path / "cache"
    no_digests = {name: None for name in checksums_of(mirror)}
    folder = download_spamassassin(cache, base_url=mirror.as_uri(), checksums=no_digests)
    cached = folder / "20030228_spam.tar.bz2"
    cached.write_bytes(b"truncated")
    fetched = []
    real_urlopen = urllib.request.urlopen

    def counting_urlopen(url, *args, **kwargs):
        fetched.append(url.rsplit("/", 1)[1])
        return real_urlopen(url, *args, **kwargs)

    monkeypatch.setattr(urllib.request, "urlopen", counting_urlopen)
    download_spamassassin(cache, base_url=mirror.as_uri(), checksums=no_digests)
    # Only the corrupt archive is fetched again; the others match SHA256SUMS.
    assert fetched == ["20030228_spam.tar.bz2"]
    assert cached.read_bytes() == (mirror / "20030228_spam.tar.bz2").read_bytes()


def test_load_with_download_uses_the_official_url(tmp_path, mirror, monkeypatch):
    """load_spamassassin(download=True) fetches SPAMASSASSIN_URL/<archive> (redirected here to a local mirror)."""
    requested = []
    real_urlopen = urllib.request.urlopen

    def local_urlopen(url, *args, **kwargs):
        requested.append(url)
        assert url.startswith(datasets.SPAMASSASSIN_URL)
        return real_urlopen(mirror.as_uri() + "/" + url[len(datasets.SPAMASSASSIN_URL):], *args, **kwargs)

    monkeypatch.setattr(urllib.request, "urlopen", local_urlopen)
    cache = tmp_path / "cache"
    messages = load_spamassassin(download=True, cache_dir=cache)
    assert keys(messages) == EXPECTED_DATE_ORDER
    assert sorted(u.rsplit("/", 1)[1] for u in requested) == sorted(datasets.SPAMASSASSIN_ARCHIVES)
    # A second load reads the cache and fetches nothing.
    requested.clear()
    assert len(load_spamassassin(download=True, cache_dir=cache)) == len(SPECS)
    assert requested == []
    # A partial cache is completed.
    (cache / "spamassassin" / "20030228_hard_ham.tar.bz2").unlink()
    assert len(load_spamassassin(download=True, cache_dir=cache)) == len(SPECS)
    assert [u.rsplit("/", 1)[1] for u in requested] == ["20030228_hard_ham.tar.bz2"]


def test_default_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("STREAMNB_CACHE", str(tmp_path / "a"))
    assert datasets.default_cache_dir() == tmp_path / "a"
    monkeypatch.delenv("STREAMNB_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert datasets.default_cache_dir() == tmp_path / "xdg" / "streamnb"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert datasets.default_cache_dir() == Path(os.path.expanduser("~")) / ".cache" / "streamnb"


# --- the real corpus -------------------------------------------------------------------------

REAL_CORPUS = os.environ.get("STREAMNB_SPAMASSASSIN")


@pytest.mark.skipif(not REAL_CORPUS, reason="STREAMNB_SPAMASSASSIN is not set (point it at the corpus to run)")
def test_real_corpus(monkeypatch):
    monkeypatch.setenv("STREAMNB_SPAMASSASSIN", REAL_CORPUS)
    messages = load_spamassassin()
    assert len(messages) == 6046
    assert Counter(m.label for m in messages) == {"ham": 4150, "spam": 1896}
    assert Counter(m.group for m in messages) == {
        "easy_ham": 2500, "easy_ham_2": 1400, "hard_ham": 250, "spam": 500, "spam_2": 1396,
    }
    dated = [m.date for m in messages if m.date is not None]
    assert all(a <= b for a, b in zip(dated, dated[1:]))
    assert len(dated) >= 6040
    assert len({(m.group, m.name) for m in messages}) == 6046


# --- worked examples -------------------------------------------------------------------------


def multinomial_scores(train, doc, alpha):
    """Independent re-computation: P(c) * prod_w P(w|c)^x_w with add-alpha smoothing."""
    vocabulary = {w for x, _ in train for w in x}
    scores = {}
    for c in {y for _, y in train}:
        docs = [x for x, y in train if y == c]
        tokens = Counter()
        for x in docs:
            tokens.update(x)
        total = sum(tokens.values())
        score = Fraction(len(docs), len(train))
        for w, n in doc.items():
            score *= Fraction(tokens[w] + alpha, total + alpha * len(vocabulary)) ** n
        scores[c] = score
    return scores


def bernoulli_scores(train, doc, alpha):
    vocabulary = {w for x, _ in train for w in x}
    scores = {}
    for c in {y for _, y in train}:
        docs = [x for x, y in train if y == c]
        score = Fraction(len(docs), len(train))
        for w in vocabulary:
            p = Fraction(sum(w in x for x in docs) + alpha, len(docs) + 2 * alpha)
            score *= p if w in doc else 1 - p
        scores[c] = score
    return scores


def test_china_japan_matches_the_book():
    example = china_japan()
    assert example.train[0] == ({"Chinese": 2, "Beijing": 1}, "China")
    assert [y for _, y in example.train] == ["China", "China", "China", "not China"]
    (doc,) = example.test
    assert doc == {"Chinese": 3, "Tokyo": 1, "Japan": 1}
    expected = example.expected
    assert multinomial_scores(example.train, doc, 1) == expected["multinomial"]
    assert bernoulli_scores(example.train, doc, 1) == expected["bernoulli"]
    # The rounded figures printed in Examples 13.1 and 13.2.
    assert round(float(expected["multinomial"]["China"]), 4) == 0.0003
    assert round(float(expected["multinomial"]["not China"]), 4) == 0.0001
    assert round(float(expected["bernoulli"]["China"]), 3) == 0.005
    assert round(float(expected["bernoulli"]["not China"]), 3) == 0.022
    multinomial, bernoulli = expected["multinomial"], expected["bernoulli"]
    assert max(multinomial, key=multinomial.get) == expected["multinomial_prediction"] == "China"
    assert max(bernoulli, key=bernoulli.get) == expected["bernoulli_prediction"] == "not China"
    as_text = china_japan(as_text=True)
    assert as_text.train[3] == ("Tokyo Japan Chinese", "not China")
    assert as_text.test == ("Chinese Chinese Chinese Tokyo Japan",)


def test_play_tennis_matches_the_book():
    example = play_tennis()
    assert len(example.train) == 14
    assert Counter(y for _, y in example.train) == {"yes": 9, "no": 5}
    # Counts quoted in Mitchell's text (chapter 3): Wind=weak [6+,2-], strong [3+,3-];
    # Humidity=high [3+,4-], normal [6+,1-].
    def split(feature):
        return Counter((x[feature], y) for x, y in example.train)

    assert split("wind") == {("weak", "yes"): 6, ("weak", "no"): 2, ("strong", "yes"): 3, ("strong", "no"): 3}
    assert split("humidity") == {("high", "yes"): 3, ("high", "no"): 4, ("normal", "yes"): 6, ("normal", "no"): 1}
    (day,) = example.test
    scores = {}
    for c in ("yes", "no"):
        rows = [x for x, y in example.train if y == c]
        score = Fraction(len(rows), 14)
        for feature, value in day.items():
            score *= Fraction(sum(x[feature] == value for x in rows), len(rows))
        scores[c] = score
    assert scores == example.expected["categorical"]
    assert round(float(scores["yes"]), 4) == 0.0053
    assert round(float(scores["no"]), 4) == 0.0206
    assert example.expected["categorical_prediction"] == "no"
