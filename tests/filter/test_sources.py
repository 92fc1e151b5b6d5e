"""How bytes from a stream are split into messages (streamnb.filter.sources.split_mail)."""

from __future__ import annotations

import mailbox

from hypothesis import given
from hypothesis import strategies as st

from streamnb.filter.sources import split_mail


def mailbox_split(raw: bytes, folder) -> list[bytes]:
    """The messages Python's mailbox reads from the same bytes in an mbox file."""
    path = folder / "box.mbox"
    path.write_bytes(raw)
    box = mailbox.mbox(str(path), create=False)
    try:
        return [box.get_bytes(key) for key in box.keys()]
    finally:
        box.close()


CASES = [
    b"From a@b Thu Jun 28 04:04:45 2001\nSubject: hi\n\nbody\n",
    b"From a@b Thu Jun 28 04:04:45 2001\r\nSubject: hi\r\n\r\nbody\r\n",
    b"From a@b\nSubject: hi\n\nno newline at the end",
    b"From a@b\nSubject: hi\n\n>From the quoted line\n",
    b"From a@b\nSubject: hi\n\nline\rFrom a carriage return is not a line end\n",
    b"From a@b\n",
    b"From a@b",
    b"From a@b\nSubject: one\n\nbody\n\nFrom c@d\nSubject: two\n\nbody\n",
    b"From a@b\nSubject: one\n\nbody\nFrom c@d\nSubject: two\n\nbody\n",
]


def test_an_mbox_on_a_stream_splits_as_mailbox_splits_the_file(tmp_path):
    for raw in CASES:
        assert [m.raw for m in split_mail(raw, "<stdin>")] == mailbox_split(raw, tmp_path), raw


@given(st.lists(st.sampled_from([b"From ", b"\n", b"\r\n", b"From x\n", b"\nFrom ", b"a", b">From ", b"\r"]),
                max_size=12))
def test_any_bytes_after_a_from_line_split_as_mailbox_splits_them(tmp_path_factory, parts):
    raw = b"From a@b\n" + b"".join(parts)
    folder = tmp_path_factory.mktemp("mbox")
    assert [m.raw for m in split_mail(raw, "<stdin>")] == mailbox_split(raw, folder)


def test_one_message_keeps_the_streams_name():
    (message,) = split_mail(b"From a@b\nSubject: hi\n\nbody\n", "<stdin>")
    assert message.origin == "<stdin>" and message.raw == b"Subject: hi\n\nbody\n"
