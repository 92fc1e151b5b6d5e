"""A user's name and the file its model is stored in: any name, a reversible file name, always in DIR.

Any name a client sends in the ``User`` header is served: an e-mail local part may hold
``'``, ``&``, ``/``, letters outside ASCII, and be up to 64 bytes long (spamc sends what it is
given). The name's bytes (UTF-8 as spamc sends them; any byte that is not UTF-8 too) are
stored under a file name that encodes them: letters, digits and ``_ . @ + = -`` stay as they
are, every other byte is ``%XX`` (its value in hex), and so is a leading ``.``, ``-`` or ``@``
(no hidden file, no option-like name, never the site model's ``@site``). So ``o'brien`` is
``o%27brien.snb``, ``a/b`` is ``a%2Fb.snb``, ``josé`` is ``jos%C3%A9.snb``, ``..`` is
``%2E..snb``. The file name never holds a ``/``, never starts with ``.`` and is never empty,
so it is always a file of the models folder. A name of the rule the service had before
(1-64 letters, digits or ``_ . @ + = -``, not starting with ``.`` or ``-``) is its own file
name: the models stored under it load as they are, nothing to migrate.

A file name has at most 255 bytes, and a model's journal, lock and temporary files add up to
36 to its name: a name whose encoding is longer than :data:`MAX_STEM` bytes is stored under
the first 150 bytes of its encoding, ``~`` and 32 hex digits of the SHA-256 of the name (one
file per name still, but not reversible from the file name alone: ``~`` is never part of a
reversible encoding). An empty ``User`` header is the default user, as a request without one.
"""

from __future__ import annotations

import hashlib
import re

# The bytes a file name keeps as they are (the old rule's characters).
_PLAIN = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.@+=-")
_LEADING_ESCAPED = frozenset(b".-@")
MAX_STEM = 200
_HASHED_PREFIX = 150
_ESCAPE = re.compile(r"%([0-9A-F]{2})")


def name_bytes(user: str) -> bytes:
    """The bytes of a user's name as the client sent them (the protocol decodes the header as
    UTF-8, any other byte kept as a surrogate escape).

    Parameters
    ----------
    user
        The user's name.

    Returns
    -------
    bytes
        Its UTF-8 bytes (a byte that was not UTF-8 as it came).
    """
    return user.encode("utf-8", "surrogateescape")


def file_stem(user: str) -> str:
    """The file name (before ``.snb``) of a user's model: the name encoded, reversibly up to
    :data:`MAX_STEM` bytes.

    Parameters
    ----------
    user
        The user's name, any string (not empty).

    Returns
    -------
    str
        ASCII letters, digits, ``_ . @ + = - %`` (and ``~`` for a name too long to encode
        reversibly); never empty, never starting with ``.``.

    Examples
    --------
    >>> file_stem("alice"), file_stem("o'brien"), file_stem("a/b"), file_stem(".."), file_stem("josé")
    ('alice', 'o%27brien', 'a%2Fb', '%2E.', 'jos%C3%A9')
    """
    data = name_bytes(user)
    if not data:
        raise ValueError("an empty user name has no file (it is the default user)")
    stem = "".join(chr(byte) if byte in _PLAIN and not (i == 0 and byte in _LEADING_ESCAPED) else f"%{byte:02X}"
                   for i, byte in enumerate(data))
    if len(stem) <= MAX_STEM:
        return stem
    prefix = stem[:_HASHED_PREFIX]
    prefix = prefix[: prefix.rfind("%")] if "%" in prefix[-2:] else prefix  # no escape cut in two
    return f"{prefix}~{hashlib.sha256(data).hexdigest()[:32]}"


def user_of(stem: str) -> str | None:
    """The user whose model a file name (before ``.snb``) holds: :func:`file_stem` reversed.

    Parameters
    ----------
    stem
        A file name in the models folder, without ``.snb``.

    Returns
    -------
    str or None
        The user's name; None for a name :func:`file_stem` does not make (a hashed long name,
        the site model's ``@site``, any other file).

    Examples
    --------
    >>> user_of("o%27brien"), user_of("jos%C3%A9"), user_of("@site")
    ("o'brien", 'josé', None)
    """
    parts = _ESCAPE.split(stem)
    try:
        data = b"".join(bytes.fromhex(part) if i % 2 else part.encode("ascii") for i, part in enumerate(parts))
    except UnicodeEncodeError:
        return None
    user = data.decode("utf-8", "surrogateescape")
    return user if data and file_stem(user) == stem else None


def shown(user: str) -> str:
    """``user`` for a log line or a reply, all printable: printable characters as they are, any
    other (a control character, a byte that is not UTF-8) as ``\\xNN``, so a name cannot forge
    log lines.

    Examples
    --------
    >>> shown("josé"), shown("a\\rb")
    ('josé', 'a\\\\x0db')
    """
    if user.isprintable():
        return user
    return "".join(c if c.isprintable() else "".join(f"\\x{b:02x}" for b in name_bytes(c)) for c in user)
