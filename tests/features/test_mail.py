"""Tests of streamnb.mail: MIME decoding, HTML to text, EmailTokenizer, never raising."""

from __future__ import annotations

import json
import pickle
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamnb.errors import InvalidParameterError, InvalidTypeError
from streamnb.features.email import (
    DEFAULT_IGNORED_HEADERS,
    EmailTokenizer,
    ParsedMessage,
    decode_bytes,
    decode_header_value,
    html_to_text,
    parse_message,
    url_host,
)
from streamnb.features.text import Tokenizer


def body_words(features: dict) -> dict:
    """The unprefixed (body) features."""
    return {k: v for k, v in features.items() if ":" not in k}


def prefixed(features: dict, prefix: str) -> dict:
    return {k: v for k, v in features.items() if k.startswith(prefix)}


# --------------------------------------------------------------------------------------------
# Hand-written messages
# --------------------------------------------------------------------------------------------

ALTERNATIVE = b"""\
From: "Alice Example" <alice@mail.example.com>
To: bob@example.org, carol@lists.example.net
Subject: Quarterly report
Date: Tue, 01 Oct 2002 10:30:00 +0200
Message-ID: <1@mail.example.com>
MIME-Version: 1.0
X-Mailer: Microsoft Outlook Express 6.00
Received: from relay.example.com by mx.example.org
Delivered-To: bob@example.org
X-Spam-Status: No, hits=-2.0
Content-Type: multipart/alternative; boundary="ALT"

This is a multi-part message in MIME format.

--ALT
Content-Type: text/plain; charset="us-ascii"
Content-Transfer-Encoding: 7bit

plainversion only words here

--ALT
Content-Type: text/html; charset="us-ascii"
Content-Transfer-Encoding: 7bit

<html><body><p>Numbers are <b>up</b>!</p><a href="http://reports.example.com/q3?x=1">see</a></body></html>

--ALT--
"""


def test_multipart_alternative_reads_the_preferred_html_part():
    parsed = parse_message(ALTERNATIVE)
    assert parsed.subject == "Quarterly report"
    assert parsed.body.split() == ["Numbers", "are", "up", "!", "see"]
    assert parsed.urls == ["http://reports.example.com/q3?x=1"]
    assert [p.content_type for p in parsed.parts] == ["multipart/alternative", "text/html"]
    assert parsed.defects == []

    features = EmailTokenizer()(ALTERNATIVE)
    assert body_words(features) == {"numbers": 1, "are": 1, "up": 1, "see": 1}
    assert prefixed(features, "subject:") == {"subject:quarterly": 1, "subject:report": 1}
    assert prefixed(features, "from:") == {"from:mail.example.com": 1, "from:example.com": 1, "from:com": 1}
    assert prefixed(features, "to:") == {
        "to:example.org": 1, "to:org": 1,
        "to:lists.example.net": 1, "to:example.net": 1, "to:net": 1,
    }
    assert prefixed(features, "url:") == {"url:reports.example.com": 1, "url:example.com": 1, "url:com": 1}
    assert prefixed(features, "x-mailer:") == {
        "x-mailer:microsoft": 1, "x-mailer:outlook": 1, "x-mailer:express": 1, "x-mailer:6": 1, "x-mailer:00": 1,
    }
    assert prefixed(features, "header:") == {
        f"header:{name}": 1
        for name in ("from", "to", "subject", "date", "message-id", "mime-version", "x-mailer", "content-type")
    }
    # Receiving-side headers give nothing (see DEFAULT_IGNORED_HEADERS).
    assert not any("received" in k or "delivered" in k or "spam" in k for k in features)
    assert prefixed(features, "content-type:") == {"content-type:multipart/alternative": 1, "content-type:text/html": 1}
    assert features["charset:us-ascii"] == 1
    assert features["encoding:7bit"] == 1


BASE64_UTF8 = b"""\
From: shop@example.de
Subject: =?utf-8?B?R3LDvMOfZQ==?= =?utf-8?q?aus_M=C3=BCnchen?=
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: base64

R3LDvMOfZSBhdXMgTcO8bmNoZW4sIGfDvG5zdGlnZSBQcmVpc2U=
"""


def test_base64_body_and_encoded_word_subject():
    parsed = parse_message(BASE64_UTF8)
    # Adjacent encoded words are joined without the whitespace between them (RFC 2047).
    assert parsed.subject == "Grüßeaus München"
    assert parsed.body == "Grüße aus München, günstige Preise"
    features = EmailTokenizer()(BASE64_UTF8)
    assert body_words(features) == {"grüße": 1, "aus": 1, "münchen": 1, "günstige": 1, "preise": 1}
    assert prefixed(features, "subject:") == {"subject:grüßeaus": 1, "subject:münchen": 1}
    assert features["encoding:base64"] == 1
    assert features["charset:utf-8"] == 1


QUOTED_PRINTABLE_LATIN1 = b"""\
Subject: =?iso-8859-1?q?Caf=E9_cr=E8me?=
Content-Type: text/plain; charset=iso-8859-1
Content-Transfer-Encoding: quoted-printable

Un caf=E9 tr=E8s sp=E9cial, =E0 bient=F4t! Ceci est une longue ligne qui do=
it =EAtre coup=E9e.
"""


def test_quoted_printable_latin1():
    parsed = parse_message(QUOTED_PRINTABLE_LATIN1)
    assert parsed.subject == "Café crème"
    assert parsed.body.strip() == "Un café très spécial, à bientôt! Ceci est une longue ligne qui doit être coupée."
    words = body_words(EmailTokenizer()(QUOTED_PRINTABLE_LATIN1))
    assert words["café"] == 1 and words["doit"] == 1 and words["être"] == 1
    assert "do" not in words  # the soft line break joined "do=\nit"


def test_8bit_charsets():
    latin1 = b"Content-Type: text/plain; charset=iso-8859-1\n\nna\xefve r\xe9sum\xe9\n"
    assert body_words(EmailTokenizer()(latin1)) == {"naïve": 1, "résumé": 1}
    koi8 = b"Subject: test\nContent-Type: text/plain; charset=koi8-r\n\n\xf0\xd2\xc9\xd7\xc5\xd4 \xcd\xc9\xd2\n"
    assert parse_message(koi8).body.strip() == "Привет мир"
    assert body_words(EmailTokenizer()(koi8)) == {"привет": 1, "мир": 1}
    koi8_subject = b"Subject: =?koi8-r?B?8NLJ18XU?=\n\nx\n"
    assert parse_message(koi8_subject).subject == "Привет"


def test_bogus_charset_falls_back_to_utf8_then_latin1():
    utf8 = "Content-Type: text/plain; charset=x-no-such-charset\n\nÉtude générale\n".encode("utf-8")
    assert parse_message(utf8).body.strip() == "Étude générale"
    latin1 = b"Content-Type: text/plain; charset=x-no-such-charset\n\n\xc9tude g\xe9n\xe9rale\n"
    assert parse_message(latin1).body.strip() == "Étude générale"
    # Python knows "hex" as a codec but not a text encoding: still no error.
    odd = b"Content-Type: text/plain; charset=hex\n\nplain words\n"
    assert body_words(EmailTokenizer()(odd)) == {"plain": 1, "words": 1}
    features = EmailTokenizer()(utf8)
    assert features["charset:x-no-such-charset"] == 1


def test_declared_ascii_with_8bit_bytes_is_read_as_utf8():
    mislabelled = "Content-Type: text/plain; charset=us-ascii\n\nprix réduit\n".encode("utf-8")
    assert parse_message(mislabelled).body.strip() == "prix réduit"


def test_known_charset_with_invalid_bytes_replaces():
    bad = b"Content-Type: text/plain; charset=utf-8\n\nok \xff\xfe done\n"
    assert parse_message(bad).body.strip() == "ok \ufffd\ufffd done"
    assert body_words(EmailTokenizer()(bad)) == {"ok": 1, "done": 1}


HTML_ONLY = b"""\
From: deals@spammer.example.biz
Subject: BEST DEALS
Content-Type: text/html; charset="windows-1252"

<HTML><HEAD><STYLE>p { color: red }</STYLE><script>var hidden = "secret";</script></HEAD>
<BODY bgcolor="#ffffff"><P>Cheap V<!-- x -->iagra &amp; more &#8212; <FONT size=3>today</FONT></P>
<a HREF="http://www.Cheap-Pills.example.biz/buy?id=7">Click here</a>
<a href='https://user@192.168.10.5:8080/x'>now</a> <img src=http://img.example.net/a.gif>
<a href="mailto:sales@spammer.example.biz">mail us</a> <a href="/relative">rel</a>
Visit www.other.example.org today. \x93quoted\x94
</BODY></HTML>
"""


def test_html_only_mail():
    parsed = parse_message(HTML_ONLY)
    assert parsed.urls == [
        "http://www.Cheap-Pills.example.biz/buy?id=7",
        "https://user@192.168.10.5:8080/x",
        "http://img.example.net/a.gif",
        "mailto:sales@spammer.example.biz",
        "/relative",
        "www.other.example.org",
    ]
    features = EmailTokenizer()(HTML_ONLY)
    assert body_words(features) == {
        "cheap": 1, "viagra": 1, "more": 1, "today": 2, "click": 1, "here": 1, "now": 1,
        "mail": 1, "us": 1, "rel": 1, "visit": 1, "www": 1, "other": 1, "example": 1, "org": 1,
        "quoted": 1,
    }
    # No tag names, attribute values, style or script content in the words.
    for absent in ("html", "body", "font", "bgcolor", "ffffff", "color", "red", "var", "hidden", "secret", "href"):
        assert absent not in features
    assert prefixed(features, "url:") == {
        "url:www.cheap-pills.example.biz": 1, "url:cheap-pills.example.biz": 1, "url:example.biz": 1, "url:biz": 1,
        "url:192.168.10.5": 1, "url:ip": 1,
        "url:img.example.net": 1, "url:example.net": 1, "url:net": 1,
        "url:www.other.example.org": 1, "url:other.example.org": 1, "url:example.org": 1, "url:org": 1,
    }
    assert features["content-type:text/html"] == 1
    assert features["charset:windows-1252"] == 1
    assert parsed.body.count("\u201c") == 1  # windows-1252 0x93 is a left double quote


def test_html_without_content_type_is_rendered():
    raw = b"Subject: hi\n\n<html><body><b>Win</b> <a href='http://win.example.com'>big</a></body></html>\n"
    features = EmailTokenizer()(raw)
    assert body_words(features) == {"win": 1, "big": 1}
    assert features["url:win.example.com"] == 1


def test_html_to_text_is_linear_on_unclosed_constructs():
    text, links = html_to_text("<script>" + "x" * 10 + "<!-- a < b" * 20_000)
    assert text.strip() == ""
    assert links == []
    text, links = html_to_text("a < b " * 50_000)
    assert text.count("<") == 50_000


def test_missing_headers_and_body_only():
    body_only = b"just some words without any header\n"
    parsed = parse_message(body_only)
    assert parsed.subject == ""
    assert parsed.body.strip() == "just some words without any header"
    features = EmailTokenizer()(body_only)
    assert body_words(features) == {"just": 1, "some": 1, "words": 1, "without": 1, "any": 1, "header": 1}
    assert not prefixed(features, "subject:") and not prefixed(features, "from:")
    headers_only = b"From: x@y.example.com\nSubject: Only headers\n"
    features = EmailTokenizer()(headers_only)
    assert prefixed(features, "subject:") == {"subject:only": 1, "subject:headers": 1}
    assert body_words(features) == {}
    assert features["from:y.example.com"] == 1


GARBAGE = bytes(range(256)) * 4 + b"\x00\xff" * 100 + b"\r\r\n\n--\n:\n"


def test_garbage_bytes_give_a_dict():
    features = EmailTokenizer()(GARBAGE)
    assert isinstance(features, dict)
    assert all(isinstance(k, str) and v > 0 for k, v in features.items())
    parse_message(GARBAGE)


MULTIPART_MIXED = b"""\
From: Bob <bob@example.org>
Subject: the patch
Content-Type: multipart/mixed; boundary="MIX"

--MIX
Content-Type: text/plain

Here is the patch and the invoice.
--MIX
Content-Type: text/x-diff; name="fix.diff"
Content-Disposition: attachment; filename="fix.diff"

-old line
+new line
--MIX
Content-Type: application/pdf; name="invoice.pdf"
Content-Disposition: attachment; filename*=utf-8''r%C3%A9sum%C3%A9.pdf
Content-Transfer-Encoding: base64

JVBERi0xLjQKJcfsj6IKNSAwIG9iago8PC9MZW5ndGggNiAwIFI+PgpzdHJlYW0K
--MIX
Content-Type: message/rfc822

Subject: forwarded
From: someone@else.example.com

inner message text
--MIX--
"""


def test_attachments_and_forwarded_message():
    parsed = parse_message(MULTIPART_MIXED)
    assert [(p.content_type, p.attachment, p.filename) for p in parsed.parts] == [
        ("multipart/mixed", False, None),
        ("text/plain", False, None),
        ("text/x-diff", True, "fix.diff"),
        ("application/pdf", True, "résumé.pdf"),
        ("message/rfc822", False, None),
        ("text/plain", False, None),
    ]
    features = EmailTokenizer()(MULTIPART_MIXED)
    # Text attachments are read (clients show them inline); the PDF is not.
    assert body_words(features) == {
        "here": 1, "is": 1, "the": 2, "patch": 1, "and": 1, "invoice": 1,
        "old": 1, "line": 2, "new": 1, "inner": 1, "message": 1, "text": 1,
    }
    assert prefixed(features, "attachment:") == {"attachment:text/x-diff": 1, "attachment:application/pdf": 1}
    assert features["content-type:text/plain"] == 2
    assert features["content-type:message/rfc822"] == 1


def test_truncated_mail_still_gives_tokens():
    cut_in_part = MULTIPART_MIXED[: MULTIPART_MIXED.index(b"+new line")]
    features = EmailTokenizer()(cut_in_part)
    assert body_words(features) == {
        "here": 1, "is": 1, "the": 2, "patch": 1, "and": 1, "invoice": 1, "old": 1, "line": 1,
    }
    assert any(k.startswith("mime:") for k in features)  # the parser noticed the missing end
    cut_in_headers = ALTERNATIVE[: ALTERNATIVE.index(b"Message-ID") + 5]
    features = EmailTokenizer()(cut_in_headers)
    assert prefixed(features, "subject:") == {"subject:quarterly": 1, "subject:report": 1}
    cut_base64 = BASE64_UTF8[:-20]
    assert parse_message(cut_base64).body.startswith("Grüße aus München")


def test_crlf_line_endings():
    crlf = ALTERNATIVE.replace(b"\n", b"\r\n")
    assert EmailTokenizer()(crlf) == EmailTokenizer()(ALTERNATIVE)


def test_deep_nesting_does_not_raise():
    depth = 400
    raw = b"Subject: nest\n"
    for level in range(depth):
        raw += b"Content-Type: multipart/mixed; boundary=b%d\n\n--b%d\n" % (level, level)
    raw += b"Content-Type: text/plain\n\ndeepest words\n"
    features = EmailTokenizer()(raw)
    assert features["subject:nest"] == 1
    assert isinstance(parse_message(raw), ParsedMessage)


def test_max_bytes_cuts_huge_messages():
    raw = b"Subject: big\n\n" + b"word " * 1_000_000
    features = EmailTokenizer(max_bytes=1000)(raw)
    assert features["word"] == (1000 - len(b"Subject: big\n\n")) // 5
    assert EmailTokenizer()(raw)["word"] == 200_000  # then the body Tokenizer's max_chars applies


def test_str_input_equals_bytes_input_for_utf8():
    assert EmailTokenizer()(BASE64_UTF8.decode("ascii")) == EmailTokenizer()(BASE64_UTF8)
    text = "Subject: Grüße\nContent-Type: text/plain; charset=utf-8\n\nschöne Grüße\n"
    assert EmailTokenizer()(text) == EmailTokenizer()(text.encode("utf-8"))


def test_bytearray_and_memoryview_input():
    assert EmailTokenizer()(bytearray(ALTERNATIVE)) == EmailTokenizer()(ALTERNATIVE)
    assert EmailTokenizer()(memoryview(ALTERNATIVE)) == EmailTokenizer()(ALTERNATIVE)


def test_wrong_input_type_raises():
    with pytest.raises(InvalidTypeError, match="bytes or str"):
        EmailTokenizer()(123)  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="NoneType"):
        parse_message(None)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="'2MB'"):
        parse_message(b"x", max_bytes="2MB")  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# ParsedMessage and helpers
# --------------------------------------------------------------------------------------------


def test_parsed_message_headers_and_date():
    parsed = parse_message(ALTERNATIVE)
    assert parsed.header("FROM") == '"Alice Example" <alice@mail.example.com>'
    assert parsed.header("x-missing") is None
    assert parsed.header("x-missing", "default") == "default"
    assert parsed.get_all("received") == ["from relay.example.com by mx.example.org"]
    assert parsed.headers[0] == ("from", '"Alice Example" <alice@mail.example.com>')
    assert parsed.date == datetime(2002, 10, 1, 10, 30, tzinfo=timezone(timedelta(hours=2)))
    assert parse_message(b"Date: not a date\n\nx").date is None
    assert parse_message(b"Subject: none\n\nx").date is None


def test_folded_and_8bit_headers():
    raw = b"Subject: a long\n\tfolded =?utf-8?q?subj=C3=A9ct?=\nX-Mailer: B\xe4ckerei Mail\n\nbody\n"
    parsed = parse_message(raw)
    assert parsed.subject == "a long\tfolded subjéct"
    assert parsed.header("x-mailer") == "Bäckerei Mail"
    features = EmailTokenizer()(raw)
    assert features["x-mailer:bäckerei"] == 1


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("plain", "plain"),
        ("=?UTF-8?B?w6k=?=", "é"),
        ("=?utf-8?b?w6k?=", "é"),  # missing padding
        ("=?iso-8859-1?Q?a=E9_b?=", "aé b"),
        ("=?utf-8*en?q?caf=C3=A9?=", "café"),  # RFC 2231 language tag
        ("=?no-such?q?abc?=", "abc"),
        ("=?utf-8?B?@@@?=", "=?utf-8?B?@@@?="),  # undecodable: kept as written
        ("x\r\n y", "x y"),
        ("caf\udce9", "café"),  # a raw 8-bit byte as the parser keeps it
    ],
)
def test_decode_header_value(raw, expected):
    assert decode_header_value(raw) == expected


def test_decode_bytes():
    assert decode_bytes(b"caf\xc3\xa9") == "café"
    assert decode_bytes(b"caf\xe9") == "café"
    assert decode_bytes(b"caf\xe9", "iso-8859-15") == "café"
    assert decode_bytes(b"\xa4", "iso-8859-15") == "€"
    assert decode_bytes(b"caf\xe9", "utf-8") == "caf\ufffd"
    assert decode_bytes(b"caf\xe9", '"bogus"') == "café"


@pytest.mark.parametrize(
    "url, host",
    [
        ("http://Www.Example.COM/path", "www.example.com"),
        ("https://user:pw@example.com:8443/x?y#z", "example.com"),
        ("ftp://files.example.org", "files.example.org"),
        ("//cdn.example.net/a.js", "cdn.example.net"),
        ("www.example.co.uk/offer", "www.example.co.uk"),
        ("http://%77%77%77.example.com/", "www.example.com"),
        ("http://10.0.0.1/", "10.0.0.1"),
        ("http://example.com./", "example.com"),
        ("mailto:a@example.com", None),
        ("/relative/path", None),
        ("http:///nohost", None),
        ("http://bad host/", None),
        ("javascript:alert(1)", None),
    ],
)
def test_url_host(url, host):
    assert url_host(url) == host


# --------------------------------------------------------------------------------------------
# EmailTokenizer settings
# --------------------------------------------------------------------------------------------


def test_options_turn_feature_groups_off():
    features = EmailTokenizer(subject=False, urls=False, mime=False, header_names=False,
                              address_headers=[], word_headers=[])(ALTERNATIVE)
    assert features == {"numbers": 1, "are": 1, "up": 1, "see": 1}


def test_body_settings_apply_to_body_and_subject():
    tokenizer = EmailTokenizer(body={"stop_words": "english", "ngram_range": [1, 2]})
    features = tokenizer(b"Subject: the best offer\n\nthe best price of the year\n")
    assert body_words(features) == {"best": 1, "price": 1, "year": 1, "best price": 1, "price year": 1}
    assert prefixed(features, "subject:") == {"subject:best": 1, "subject:offer": 1, "subject:best offer": 1}


def test_binary_body_setting_makes_every_feature_binary():
    raw = b"Subject: spam spam\nContent-Type: text/html\n\n<a href='http://a.example.com'>spam</a> <a href='http://b.example.com'>x</a>\n"
    features = EmailTokenizer(body=Tokenizer(binary=True))(raw)
    assert set(features.values()) == {1}
    assert features["url:example.com"] == 1
    assert EmailTokenizer()(raw)["url:example.com"] == 2


def test_header_selection():
    raw = b"From: a@b.example.com\nX-Custom: Hello World\nX-Spam-Flag: YES\nReceived: x\n\nbody\n"
    default = EmailTokenizer()(raw)
    assert "header:x-custom" in default and "header:x-spam-flag" not in default
    custom = EmailTokenizer(word_headers=["X-Custom"], ignored_headers=["x-custom"])(raw)
    assert not prefixed(custom, "x-custom:") and "header:x-custom" not in custom
    assert "header:x-spam-flag" in custom and "header:received" in custom
    words = EmailTokenizer(word_headers=["X-Custom"])(raw)
    assert prefixed(words, "x-custom:") == {"x-custom:hello": 1, "x-custom:world": 1}


def test_get_params_json_round_trip_equality_and_pickle():
    tokenizer = EmailTokenizer(body={"binary": True, "stop_words": ["x"]}, urls=False, word_headers=["X-A"])
    params = tokenizer.get_params()
    assert params["body"] == {**Tokenizer().get_params(), "binary": True, "stop_words": ["x"]}
    assert params["word_headers"] == ["x-a"]
    assert params["ignored_headers"] == list(DEFAULT_IGNORED_HEADERS)
    again = EmailTokenizer(**json.loads(json.dumps(params)))
    assert again == tokenizer and hash(again) == hash(tokenizer)
    assert again(ALTERNATIVE) == tokenizer(ALTERNATIVE)
    assert EmailTokenizer() != tokenizer
    clone = pickle.loads(pickle.dumps(tokenizer))
    assert clone == tokenizer and clone(HTML_ONLY) == tokenizer(HTML_ONLY)
    assert repr(EmailTokenizer()) == "EmailTokenizer()"
    assert repr(EmailTokenizer(urls=False)) == "EmailTokenizer(urls=False)"


@pytest.mark.parametrize(
    "kwargs, error, fragment",
    [
        ({"body": "english"}, InvalidTypeError, "'english'"),
        ({"body": {"ngram_range": [3, 1]}}, InvalidParameterError, "(3, 1)"),
        ({"subject": "yes"}, InvalidTypeError, "'yes'"),
        ({"address_headers": "from"}, InvalidTypeError, "'from'"),
        ({"word_headers": ["x-mailer", 3]}, InvalidTypeError, "3 (type int)"),
        ({"ignored_headers": [""]}, InvalidTypeError, "''"),
        ({"max_bytes": 0}, InvalidParameterError, "0"),
        ({"max_bytes": "1MB"}, InvalidTypeError, "'1MB'"),
    ],
)
def test_bad_settings_raise_naming_the_value(kwargs, error, fragment):
    with pytest.raises(error) as info:
        EmailTokenizer(**kwargs)
    assert fragment in str(info.value)


# --------------------------------------------------------------------------------------------
# Never raise: property tests
# --------------------------------------------------------------------------------------------


def assert_valid_features(features):
    assert isinstance(features, dict)
    for key, value in features.items():
        assert isinstance(key, str) and key
        key.encode("utf-8")  # no surrogates: every feature name can be stored as UTF-8
        assert isinstance(value, int) and value > 0


TOKENIZER = EmailTokenizer()


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=3000))
def test_arbitrary_bytes_never_raise(raw):
    assert_valid_features(TOKENIZER(raw))
    parsed = parse_message(raw)
    assert isinstance(parsed.body, str) and isinstance(parsed.subject, str)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=2000))
def test_arbitrary_text_never_raises(text):
    assert_valid_features(TOKENIZER(text))


PIECES = [
    b"From: ", b"To: ", b"Subject: ", b"Content-Type: ", b"multipart/mixed; boundary=", b"multipart/alternative; boundary=\"B\"",
    b"text/html", b"text/plain; charset=", b"koi8-r", b"bogus", b"utf-8", b"Content-Transfer-Encoding: ",
    b"base64", b"quoted-printable", b"=?utf-8?B?", b"=?x?q?", b"?=", b"--B", b"--B--", b"\n", b"\r\n", b"\n\n",
    b"<a href=\"http://", b"<!--", b"<script>", b"<", b">", b"&amp;", b"&#", b"@", b"example.com", b"=E9",
    b"SGVsbG8=", b"\xff\xfe", b"\xe9", b"word ", b"Content-Disposition: attachment; filename*=utf-8''%FF",
    b"www.", b"http://[::1]/", b"message/rfc822", b"\t", b";", b"\"",
]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=60))
def test_mail_shaped_fuzz_never_raises(pieces):
    raw = b"".join(pieces)
    assert_valid_features(TOKENIZER(raw))
    parsed = parse_message(raw)
    for name, value in parsed.headers:
        name.encode("utf-8")
        value.encode("utf-8")
    parsed.date  # noqa: B018 - must not raise either


def test_custom_token_pattern_reads_in_the_core_and_tokenizes_in_python():
    raw = b"Subject: a big deal\nX-Mailer: Mutt\n\nI am a cat\n"
    features = EmailTokenizer(body={"token_pattern": r"(?u)\b\w+\b"})(raw)
    assert body_words(features) == {"i": 1, "am": 1, "a": 1, "cat": 1}
    assert prefixed(features, "subject:") == {"subject:a": 1, "subject:big": 1, "subject:deal": 1}
    assert features["x-mailer:mutt"] == 1 and features["content-type:text/plain"] == 1
    assert list(features)[:4] == ["i", "am", "a", "cat"]
    parsed = parse_message(raw)
    assert EmailTokenizer().features(parsed) == EmailTokenizer()(raw)


def test_feature_strings_reused_across_messages_never_change_a_result():
    # The core keeps the Python strings of recent features (a small cache keyed by hash);
    # results must be the same Counter as a fresh tokenizer gives, message after message.
    from collections import Counter

    messages = [f"Subject: offer {i}\nFrom: a@ex{i % 3}.com\n\nword{i % 7} shared w{i} {'x' * (i * 9)}\n".encode()
                for i in range(60)]
    tokenizer = EmailTokenizer()
    for message in messages + messages[::-1]:
        got = tokenizer(message)
        assert type(got) is Counter
        assert list(got.items()) == list(EmailTokenizer()(message).items())
