"""Raw email to text and features: the email-aware tokenizer and the parsed message.

:func:`parse_message` turns raw RFC 822 bytes (or str) into a :class:`ParsedMessage`: decoded
headers, subject, the readable body text and the link targets. :class:`EmailTokenizer` turns
a raw message into a bag of features whose names say where each token came from
(``subject:free``, ``from:example.com``, ``url:com``, ``content-type:text/html`` ...) plus
unprefixed body words. ``benchmarks/email_pipeline.py`` weighs those features field by field
and pairs them with a model: the most accurate setting measured on the SpamAssassin stream.

The reading itself is in the compiled core (``streamnb._core``, ``src/mail/``): MIME
structure as Python's ``email`` package (``compat32``) reads it, header and body decoding
(RFC 2047 encoded words, base64, quoted-printable, charsets by the WHATWG Encoding
Standard), HTML to text with link targets, and the features, straight from bytes with no
Python string per token. This module holds the settings, their validation and the Python
face.

Robustness is the first rule: mail is hostile input. Nothing here raises on any ``bytes``;
broken MIME, unknown charsets, bad base64 and truncated messages all degrade to "read what can
be read". Reading is bounded whatever the input: the first ``max_bytes`` bytes (2 MB by
default), nesting 20 containers deep, 1,000 parts, 1,000 headers a header block, 64 KiB a
header value, 8 MB of decoded text; past a limit the message is read as far as it is sane
and the limit shows as defects (``mime:toomanyparts`` ... and ``mime:truncated``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from streamnb import _core
from streamnb.errors import InvalidTypeError, describe
from streamnb.features.text import DEFAULT_TOKEN_PATTERN, PicklesSettings, Tokenizer
from streamnb.validate import check_bool, check_optional_int, check_positive

__all__ = [
    "DEFAULT_ADDRESS_HEADERS",
    "DEFAULT_IGNORED_HEADERS",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_WORD_HEADERS",
    "EmailTokenizer",
    "MimePart",
    "ParsedMessage",
    "decode_bytes",
    "decode_header_value",
    "html_to_text",
    "parse_message",
    "url_host",
]

# The defaults and the reasons for them live in the core (src/mail/features.rs), which uses
# the same lists when it builds its default tokenizer.

#: Only the first 2 MB of a message are read: enough for any real text part, and it bounds
#: time and memory on huge attachments or hostile input (a cut message has ``mime:toolarge``).
DEFAULT_MAX_BYTES: int = _core.DEFAULT_MAX_BYTES

#: Headers whose address domains become tokens "<header>:<domain suffix>".
DEFAULT_ADDRESS_HEADERS: tuple[str, ...] = tuple(_core.DEFAULT_ADDRESS_HEADERS)

#: Headers whose value words become tokens "<header>:<word>" (sending software, priority flags).
DEFAULT_WORD_HEADERS: tuple[str, ...] = tuple(_core.DEFAULT_WORD_HEADERS)

#: Headers that produce no tokens: trace, delivery, mailbox and scanner headers added on the
#: receiving side (a trailing "*" matches a prefix).
DEFAULT_IGNORED_HEADERS: tuple[str, ...] = tuple(_core.DEFAULT_IGNORED_HEADERS)

@dataclass
class MimePart:
    """One MIME part: its type and how it was encoded (containers included)."""

    content_type: str
    charset: str | None = None
    transfer_encoding: str | None = None
    attachment: bool = False
    filename: str | None = None


@dataclass
class ParsedMessage:
    """A message reduced to decoded text.

    ``headers`` keeps every header in order as (lowercase name, decoded unfolded value);
    ``body`` is the readable text: the text/* parts (for multipart/alternative only the last,
    preferred, alternative), with HTML reduced to text; ``urls`` are link targets from HTML
    attributes and URLs written in the text; ``defects`` names the parser's complaints
    ("unparsed" if the message could not be parsed at all and ``body`` is the raw text).
    """

    subject: str = ""
    body: str = ""
    headers: list[tuple[str, str]] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    parts: list[MimePart] = field(default_factory=list)
    defects: list[str] = field(default_factory=list)

    def header(self, name: str, default: str | None = None) -> str | None:
        """First value of header ``name`` (case-insensitive), or ``default``."""
        name = name.lower()
        for key, value in self.headers:
            if key == name:
                return value
        return default

    def get_all(self, name: str) -> list[str]:
        """Every value of header ``name`` (case-insensitive), in order."""
        name = name.lower()
        return [value for key, value in self.headers if key == name]

    @property
    def date(self) -> datetime | None:
        """The Date header as a datetime (naive if the zone is unknown), None if absent or bad."""
        import email.utils  # here: `streamnb classify` never reads a date, and the import costs ~5 ms

        value = self.header("date")
        if not value:
            return None
        try:
            return email.utils.parsedate_to_datetime(value)
        except Exception:  # malformed dates are common; a missing date is the honest answer
            return None


# --------------------------------------------------------------------------------------------
# Decoding helpers (the core's)
# --------------------------------------------------------------------------------------------


def decode_bytes(data: bytes, charset: str | None = None) -> str:
    """Decode ``data`` with the declared ``charset``, never raising.

    Known charsets (WHATWG labels and Python's codec names) decode with U+FFFD for bytes
    they cannot map. An unknown, absent or ASCII charset falls back to UTF-8 if the bytes
    are valid UTF-8, else Latin-1 (which maps every byte to a character, so no text is lost).
    """
    return _core.decode_bytes(bytes(data), charset)


def decode_header_value(value: str | bytes) -> str:
    """Decode a raw header value: 8-bit bytes, folding, RFC 2047 encoded words. Never raises.

    A str holding raw bytes as surrogate escapes (as the email package keeps them) is read
    as those bytes.
    """
    if isinstance(value, str):
        text = value
        try:
            value = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # lone surrogates that did not come from bytes
            value = text.encode("utf-8", "replace")
    return _core.decode_header_value(bytes(value))


def html_to_text(markup: str) -> tuple[str, list[str]]:
    """Visible text of an HTML document and its link targets (href/src/action/background).

    Comments are removed without a trace (spammers split words with them: ``V<!-- -->iagra``
    reads "Viagra"), script and style blocks are dropped, every tag becomes a space, and
    character references are unescaped (as ``html.unescape``).
    """
    return _core.html_to_text(markup)


def url_host(url: str) -> str | None:
    """Lowercase host name of an absolute URL (``http://user@Www.Example.com:80/x`` ->
    ``www.example.com``), or None for relative, mailto: and malformed links."""
    return _core.url_host(url)


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------


def _to_bytes(raw: object) -> bytes:
    if isinstance(raw, bytes):
        return raw
    if isinstance(raw, (bytearray, memoryview)):
        return bytes(raw)
    if isinstance(raw, str):
        # Text is re-encoded as UTF-8 (8-bit parts are then read as UTF-8 whatever they
        # declare); pass bytes to have declared charsets honoured.
        try:
            return raw.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            return raw.encode("utf-8", "replace")
    raise InvalidTypeError(f"expected a raw message as bytes or str, got {describe(raw)}")


def parse_message(raw: bytes | str, *, max_bytes: int | None = DEFAULT_MAX_BYTES) -> ParsedMessage:
    """Parse a raw RFC 822 message into decoded text; never raises on any bytes or str.

    Only the first ``max_bytes`` bytes are read (None: all).

    >>> m = parse_message(b"Subject: =?utf-8?q?Caf=C3=A9?=\\n\\n<p>Hi <a href='http://x.org/'>there</a></p>")
    >>> m.subject, m.body.split(), m.urls
    ('Café', ['Hi', 'there'], ['http://x.org/'])

    Parameters
    ----------
    raw : bytes or str
        A raw message.
    max_bytes : int or None
        Read only the first bytes; None for all.

    Returns
    -------
    ParsedMessage
        Its headers, subject, readable body text, links and MIME parts, decoded.
    """
    data = _to_bytes(raw)
    max_bytes = check_positive("max_bytes", max_bytes, integer=True)
    subject, body, headers, urls, parts, defects = _core.parse_message(data, max_bytes)
    return ParsedMessage(
        subject=subject,
        body=body,
        headers=headers,
        urls=urls,
        parts=[MimePart(*part) for part in parts],
        defects=defects,
    )


# --------------------------------------------------------------------------------------------
# The email tokenizer
# --------------------------------------------------------------------------------------------

def _check_names(name: str, value: object) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise InvalidTypeError(f"{name} must be a list of header names, got {describe(value)}")
    names = list(value)
    for item in names:
        if not isinstance(item, str) or not item:
            raise InvalidTypeError(f"{name} must contain non-empty str header names, found {describe(item)}")
    return tuple(item.lower() for item in names)


class EmailTokenizer(PicklesSettings):
    """Callable turning a raw message (bytes or str) into ``{feature: count}``; never raises on
    any bytes or str.

    Features, each named after where it came from:

    - body words, unprefixed, by the :class:`Tokenizer` settings ``body`` (a dict of Tokenizer
      parameters or a Tokenizer; default ``Tokenizer()``); the body is the readable text of the
      message (see :func:`parse_message`);
    - ``subject:<word>`` from the Subject, by the same settings (``subject=True``);
    - ``<header>:<domain>`` for every domain suffix of the addresses in ``address_headers``
      (``from:mail.example.com``, ``from:example.com``, ``from:com``);
    - ``<header>:<word>`` for the words of ``word_headers`` values (``x-mailer:outlook``);
    - ``header:<name>`` once for each header present (``header_names=True``);
    - ``from-address:<address>``, the first address of the From header, lowercased
      (``sender_address=True``; off by default): the sender itself, so that a model learns
      each correspondent's reputation from the stream, where the ``from:<domain>`` features
      are shared by everyone at a domain;
    - ``url:<domain>`` for every domain suffix of each link target and URL in the text
      (``url:www.example.com``, ``url:example.com``, ``url:com``; IPv4 hosts give the address
      and ``url:ip``) (``urls=True``);
    - ``content-type:<type>``, ``charset:<name>``, ``encoding:<transfer encoding>``,
      ``attachment:<type>`` for every MIME part, and ``mime:<defect>`` for parser complaints
      (``mime=True``).

    Headers matching ``ignored_headers`` (receiving-side trace headers by default, see
    :data:`DEFAULT_IGNORED_HEADERS`) give no feature at all. With the default token pattern
    body words never contain ":", so they cannot collide with the prefixed features. If the
    body settings say ``binary=True``, every feature is 1.

    Parameters
    ----------
    body : mapping, Tokenizer or None
        The settings of the body's and the Subject's words: a Tokenizer or a dict of its
        parameters; None for ``Tokenizer()``.
    subject : bool
        Give ``subject:<word>`` features.
    address_headers : iterable of str
        The headers whose addresses give ``<header>:<domain>`` features.
    word_headers : iterable of str
        The headers whose words give ``<header>:<word>`` features.
    header_names : bool
        Give a ``header:<name>`` feature for each header present.
    ignored_headers : iterable of str
        Headers that give no feature at all.
    urls : bool
        Give ``url:<domain>`` features.
    mime : bool
        Give the MIME features (content types, charsets, encodings, attachments, defects).
    max_bytes : int or None
        Read only the first bytes of a message; None for all.
    sender_address : bool
        Give the ``from-address:<address>`` feature.

    Raises
    ------
    InvalidParameterError
        For a value out of its range.
    InvalidTypeError
        For a value of the wrong type.
    """

    def __init__(
        self,
        *,
        body: Mapping[str, Any] | Tokenizer | None = None,
        subject: bool = True,
        address_headers: Iterable[str] = DEFAULT_ADDRESS_HEADERS,
        word_headers: Iterable[str] = DEFAULT_WORD_HEADERS,
        header_names: bool = True,
        ignored_headers: Iterable[str] = DEFAULT_IGNORED_HEADERS,
        urls: bool = True,
        mime: bool = True,
        max_bytes: int | None = DEFAULT_MAX_BYTES,
        sender_address: bool = False,
    ) -> None:
        if body is None:
            body = Tokenizer()
        elif isinstance(body, Mapping):
            body = Tokenizer(**body)
        elif not isinstance(body, Tokenizer):
            raise InvalidTypeError(f"body must be a Tokenizer, a dict of its settings or None, got {describe(body)}")
        self.body: dict[str, Any] = body.get_params()
        self.subject = check_bool("subject", subject)
        self.address_headers = _check_names("address_headers", address_headers)
        self.word_headers = _check_names("word_headers", word_headers)
        self.header_names = check_bool("header_names", header_names)
        self.ignored_headers = _check_names("ignored_headers", ignored_headers)
        self.urls = check_bool("urls", urls)
        self.mime = check_bool("mime", mime)
        self.max_bytes = check_optional_int("max_bytes", max_bytes)
        self.sender_address = check_bool("sender_address", sender_address)

        # Counting happens with binary off; binary is applied once at the end to all features.
        self._binary = body.binary
        self._words = Tokenizer(**{**self.body, "binary": False})
        # The core counts everything itself unless the body needs Python (a custom token
        # pattern or stemming): then it reads the message and Python tokenizes the text.
        self._in_core = body.token_pattern == DEFAULT_TOKEN_PATTERN and body.stemmer is None
        self._core = _core.EmailTokenizer(
            words=self._words._core, binary=body.binary,
            subject=self.subject, address_headers=list(self.address_headers),
            word_headers=list(self.word_headers), header_names=self.header_names,
            ignored_headers=list(self.ignored_headers), urls=self.urls, mime=self.mime,
            max_bytes=self.max_bytes, sender_address=self.sender_address)

    def get_params(self) -> dict[str, Any]:
        """Settings as JSON-serialisable values; ``EmailTokenizer(**t.get_params()) == t``."""
        return {
            "body": dict(self.body),
            "subject": self.subject,
            "address_headers": list(self.address_headers),
            "word_headers": list(self.word_headers),
            "header_names": self.header_names,
            "ignored_headers": list(self.ignored_headers),
            "urls": self.urls,
            "mime": self.mime,
            "max_bytes": self.max_bytes,
            "sender_address": self.sender_address,
        }

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EmailTokenizer):
            return NotImplemented
        return self.get_params() == other.get_params()

    def __hash__(self) -> int:
        return hash(repr(sorted(self.get_params().items())))

    def __repr__(self) -> str:
        defaults = EmailTokenizer().get_params()
        changed = {k: v for k, v in self.get_params().items() if defaults.get(k) != v}
        return "EmailTokenizer(" + ", ".join(f"{k}={v!r}" for k, v in changed.items()) + ")"

    def __call__(self, message: bytes | str) -> dict[str, int]:
        """Features of a raw message (see the class docstring).

        Parameters
        ----------
        message : bytes or str
            A raw message.

        Returns
        -------
        dict
            Feature -> count (1 each when the body settings say ``binary=True``).
        """
        raw = _to_bytes(message)
        if self._in_core:
            return self._core.count(raw)  # a Counter, or a dict of 1s with binary settings
        body, subject, extras = self._core.split(raw)
        return self._combine(body, subject, extras)

    def features(self, parsed: ParsedMessage) -> dict[str, int]:
        """Features of an already parsed message (parse once, reuse for other purposes)."""
        parts = [(p.content_type, p.charset, p.transfer_encoding, p.attachment, p.filename) for p in parsed.parts]
        extras = self._core.extras(list(parsed.headers), list(parsed.urls), parts, list(parsed.defects))
        return self._combine(parsed.body, parsed.subject if self.subject else "", extras)

    def _combine(self, body: str, subject: str, extras: dict[str, int]) -> dict[str, int]:
        counts = self._words(body)
        if subject:
            for word, count in self._words(subject).items():
                counts["subject:" + word] += count
        counts.update(extras)
        if self._binary:
            return dict.fromkeys(counts, 1)
        return counts

    def field(self, feature: str) -> str:
        """The part of the message a feature came from: ``"body"`` for unprefixed words, else
        ``"subject"``, ``"url"``, ``"address"`` (the address headers), ``"header"`` (header
        names), ``"mime"`` (part types, charsets, encodings, attachments, defects),
        ``"sender"`` (``from-address:``, with ``sender_address``) or ``"other"`` (the word
        headers, e.g. X-Mailer). Fields are what ``EmailTfidf`` (``benchmarks/email_pipeline.py``)
        and :class:`~streamnb.features.weighting.EmailWeights` normalise separately.

        >>> t = EmailTokenizer()
        >>> [t.field(f) for f in ("free", "subject:free", "from:example.com", "charset:utf-8", "x-mailer:mutt")]
        ['body', 'subject', 'address', 'mime', 'other']

        Parameters
        ----------
        feature : str
            A feature this tokenizer gives.

        Returns
        -------
        str
            The field it belongs to (by its prefix).
        """
        return self._core.field(feature)  # the rule is the core's: EmailFeatures::field
