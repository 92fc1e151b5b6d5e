"""Hostile mail: every call returns, quickly, with the limits it hit reported as features.

The crafted bombs of issue 14 (generated here, nothing large is committed): deep nesting,
a 50 MB base64 part, 100,000 headers, unterminated encoded words, invalid charsets, plus a
flat multipart of 100,000 parts and a 10 MB line. Limits (src/mail/mime.rs): the first
``max_bytes`` bytes (2 MB by default), 20 nested containers, 1,000 parts, 1,000 headers a
header block, 64 KiB a header value, 8 MB of decoded text. Past a limit the message is read
as far as it is sane: ``mime:<limit>`` and ``mime:truncated`` say so. Each call must take
well under a second (a bound of 5 s leaves room for a loaded machine).
"""

from __future__ import annotations

import base64
import time

import pytest

from streamnb import _core
from streamnb.features.email import EmailTokenizer, parse_message

BOUND = 5.0  # seconds; each of these runs in milliseconds to ~0.3 s on an idle machine


def timed(function, *args):
    start = time.perf_counter()
    result = function(*args)
    elapsed = time.perf_counter() - start
    assert elapsed < BOUND, f"{elapsed:.2f} s"
    return result


def mime(features: dict) -> set:
    return {k for k in features if k.startswith("mime:")}


def test_ten_thousand_nested_multiparts():
    raw = b"Subject: nest\n"
    raw += b"".join(b"Content-Type: multipart/mixed; boundary=b%d\n\n--b%d\n" % (i, i) for i in range(10_000))
    raw += b"Content-Type: text/plain\n\ndeepest words\n"
    features = timed(EmailTokenizer(), raw)
    assert features["subject:nest"] == 1
    assert features["content-type:multipart/mixed"] == 21  # depths 0-20; deeper is not read
    assert {"mime:toodeeplynested", "mime:truncated"} <= mime(features)
    assert "deepest" not in features
    parsed = timed(parse_message, raw)
    assert len(parsed.parts) == 21 and parsed.defects[-1] == "Truncated"


def test_fifty_megabyte_base64_part():
    words = b"spam eggs " * 3_750_000  # 37.5 MB of text, 50 MB as base64
    encoded = base64.encodebytes(words)
    assert len(encoded) > 50_000_000
    raw = b"Subject: big\nContent-Type: text/plain\nContent-Transfer-Encoding: base64\n\n" + encoded
    features = timed(EmailTokenizer(), raw)  # the first 2 MB are read
    assert {"mime:toolarge", "mime:truncated"} == mime(features)
    assert features["spam"] == features["eggs"] == 100_000  # then the body's max_chars (1,000,000)
    unbounded = timed(EmailTokenizer(max_bytes=None), raw)  # all of it: 8 MB of text decoded
    assert {"mime:decodedtoolarge", "mime:truncated"} == mime(unbounded)
    assert unbounded["spam"] == 100_000  # the body tokenizer's max_chars (1,000,000) then applies


def test_hundred_thousand_headers():
    raw = b"".join(b"X-H%d: v\n" % i for i in range(100_000)) + b"Subject: s\n\nbody words\n"
    features = timed(EmailTokenizer(max_bytes=None), raw)
    assert {"mime:toomanyheaders", "mime:truncated"} == mime(features)
    assert sum(k.startswith("header:") for k in features) == 1_000
    assert features["body"] == 1 and features["words"] == 1  # the body is still found
    parsed = parse_message(raw, max_bytes=None)
    assert len(parsed.headers) == 1_000 and parsed.body == "body words\n"


def test_unterminated_encoded_words():
    subject = b"=?utf-8?q?" * 100_000 + b"=?utf-8?b?" + b"A" * 100_000 + b" =?x?q?abc"
    raw = b"Subject: " + subject + b"\nFrom: =?utf-8?B?\n\nhello\n"
    features = timed(EmailTokenizer(), raw)
    assert {"mime:headertoolong", "mime:truncated"} == mime(features)
    assert features["hello"] == 1
    assert "subject:utf" in features  # the words of the undecoded text, as written
    short = b"Subject: =?utf-8?q?caf=C3=A9 =?utf-8?q?unterminated\n\nx\n"
    assert parse_message(short).subject == "=?utf-8?q?caf=C3=A9 =?utf-8?q?unterminated"


@pytest.mark.parametrize("charset", [
    b"bogus", b'"\xff\xfe"', b"hz-gb-2312", b"iso-2022-kr", b"x-user-defined", b"utf-7", b"utf-32",
    b"replacement", b"=?utf-8?q?x?=", b"", b"'", b"a" * 10_000,
])
def test_invalid_charsets_fall_back_to_utf8_then_latin1(charset):
    body = "Grüße aus München".encode("utf-8")
    raw = b"Subject: =?" + charset + b"?q?Gr=C3=BC=C3=9Fe?=\nContent-Type: text/plain; charset=" + charset + b"\n\n" + body
    features = timed(EmailTokenizer(), raw)
    assert features["grüße"] == 1 and features["münchen"] == 1
    assert parse_message(b"Content-Type: text/plain; charset=" + charset + b"\n\n\xe9t\xe9").body == "été"


def test_hundred_thousand_parts():
    raw = b"Content-Type: multipart/mixed; boundary=B\n\n" + b"--B\n\nword\n" * 100_000 + b"--B--\n"
    features = timed(EmailTokenizer(), raw)
    assert {"mime:toomanyparts", "mime:truncated"} == mime(features)
    assert features["content-type:text/plain"] == 999 and features["word"] == 999


def test_ten_megabyte_line_and_nothing_but_separators():
    assert mime(timed(EmailTokenizer(), b"Subject: x\n\n" + b"a" * 10_000_000)) == {"mime:toolarge", "mime:truncated"}
    timed(EmailTokenizer(), b"\n--" * 1_000_000)
    timed(EmailTokenizer(), b"<" * 2_000_000)
    timed(EmailTokenizer(), b"<!--" + b"<script>" * 250_000)
    timed(EmailTokenizer(), b"Content-Type: text/html\n\n" + b"<a href=" * 250_000)
    timed(EmailTokenizer(), b"Content-Type: text/html\n\n" + b"&#" * 1_000_000 + b"&amp" * 100_000)
    timed(EmailTokenizer(), b"=?" * 1_000_000)


def test_no_panic_reaches_python():
    """Entry points are guarded (a panic would be InternalError, never PanicException)."""
    with pytest.raises(Exception) as info:
        _core._panic_for_tests()
    assert type(info.value).__name__ == "InternalError"
