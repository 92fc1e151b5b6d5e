"""streamnb.trec: the TREC 2007 layout read from a folder or an archive (a small copy written
here: the real corpus is research-use only and never in the repository), and on the real
corpus when STREAMNB_TREC07P points at it."""

from __future__ import annotations

import io
import os
import tarfile

import pytest

from streamnb.errors import CorpusNotFoundError, InvalidParameterError
from streamnb.filter.trec import TREC_ENV, is_trec, load_trec

MESSAGES = [("spam", b"Subject: win\n\ncheap pills\n"), ("ham", b"Subject: lunch\nDate: Mon, 2 Apr 2007 10:00:00 -0400\n\nnoon?\n"),
            ("spam", b"Subject: offer\n\nbuy now\n")]


def write_folder(root) -> None:
    (root / "full").mkdir(parents=True)
    (root / "data").mkdir()
    lines = []
    for i, (label, raw) in enumerate(MESSAGES, 1):
        (root / "data" / f"inmail.{i}").write_bytes(raw)
        lines.append(f"{label} ../data/inmail.{i}")
    (root / "full" / "index").write_text("\n".join(lines) + "\n")


def test_a_folder_reads_in_delivery_order(tmp_path):
    root = tmp_path / "trec07p"
    write_folder(root)
    assert is_trec(root) and not is_trec(tmp_path)
    messages = load_trec(root)
    assert [(m.label, m.raw) for m in messages] == MESSAGES
    assert [m.name for m in messages] == ["inmail.1", "inmail.2", "inmail.3"] and messages[1].date is not None
    assert [m.name for m in load_trec(root, limit=2)] == ["inmail.1", "inmail.2"]
    shuffled = load_trec(root, order="shuffle", seed=1)
    assert sorted(m.name for m in shuffled) == ["inmail.1", "inmail.2", "inmail.3"]
    assert [m.name for m in load_trec(root, order="shuffle", seed=1)] == [m.name for m in shuffled]


@pytest.mark.parametrize("suffix, mode", [(".tar", "w"), (".tar.gz", "w:gz"), (".tar.xz", "w:xz")])
def test_an_archive_reads_as_the_folder_even_with_the_index_last(tmp_path, suffix, mode):
    archive = tmp_path / f"trec07p-copy{suffix}"
    with tarfile.open(archive, mode) as tar:
        def add(name, data):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for i, (_, raw) in enumerate(MESSAGES, 1):
            add(f"trec07p-copy/data/inmail.{i}", raw)
        add("trec07p-copy/full/index", "".join(f"{label} ../data/inmail.{i}\n"
                                               for i, (label, _) in enumerate(MESSAGES, 1)).encode())
    assert is_trec(archive)
    assert [(m.label, m.raw) for m in load_trec(archive)] == MESSAGES


def test_what_is_missing_or_wrong_is_named(tmp_path, monkeypatch):
    monkeypatch.delenv(TREC_ENV, raising=False)
    with pytest.raises(CorpusNotFoundError, match=TREC_ENV):
        load_trec()
    with pytest.raises(CorpusNotFoundError, match="no such folder"):
        load_trec(tmp_path / "absent")
    with pytest.raises(CorpusNotFoundError, match="no full/index"):
        load_trec(tmp_path)
    root = tmp_path / "broken"
    write_folder(root)
    (root / "data" / "inmail.2").unlink()
    with pytest.raises(CorpusNotFoundError, match="inmail.2"):
        load_trec(root)
    (root / "full" / "index").write_text("maybe ../data/inmail.1\n")
    with pytest.raises(CorpusNotFoundError, match="line 1"):
        load_trec(root)
    with pytest.raises(InvalidParameterError, match="order"):
        load_trec(root, order="date")
    (tmp_path / "trec-bad.tar").write_bytes(b"not a tar archive at all")
    with pytest.raises(CorpusNotFoundError, match="not a readable archive"):
        load_trec(tmp_path / "trec-bad.tar")


@pytest.fixture(scope="module")
def first_10000():
    if not os.environ.get(TREC_ENV):
        pytest.skip(f"{TREC_ENV} is not set (point it at trec07p or trec07p-dev)")
    return [(m.raw, m.label) for m in load_trec(limit=10_000)]


def test_the_real_corpus_loads_with_its_labels(first_10000):
    assert len(first_10000) == 10_000
    assert first_10000[0][1] == "spam" and first_10000[0][0].startswith(b"From ")  # inmail.1
    assert sum(label == "spam" for _, label in first_10000) > 5_000


def test_the_default_filter_ranks_the_first_10000_better_than_either_part(first_10000):
    """Issue 26: on the first 10,000 messages of trec07p, classify-then-learn, the fusion ranks
    better than EmailNB alone and than its logistic regression alone. Measured (1-AUC)%: the
    fusion 0.0130, EmailNB 0.0225, the logistic regression 0.0159 (its settings were chosen on
    the first 40,000 messages of trec07p-dev, this part included: in-sample)."""
    from streamnb.filter.decision import SpamFilter, progressive_filter
    from streamnb.filter.evaluate import one_minus_auc_percent
    from streamnb.models import EmailNB
    from streamnb.models.fusion import default_lr

    fusion = progressive_filter(SpamFilter(), first_10000, curve=None).one_minus_auc_percent
    email = progressive_filter(SpamFilter(EmailNB()), first_10000, curve=None).one_minus_auc_percent
    lr, scores = default_lr(), []
    for raw, label in first_10000:
        log_proba = lr.predict_log_proba_one(raw)
        scores.append(log_proba["spam"] - log_proba["ham"] if len(log_proba) == 2 else 0.0)
        lr.learn_one(raw, label)
    alone = one_minus_auc_percent([label for _, label in first_10000], scores)
    assert fusion < 0.014 and fusion < email and fusion < alone, (fusion, email, alone)
