"""Fetching the SpamAssassin public corpus's official archives into a cache, verified.

:func:`download_spamassassin` streams each archive to a ``.part`` file, checks it (its
digest when one is given, and that it reads as tar) and renames it into place; the cache
records the SHA-256 of every archive it holds. :mod:`streamnb.filter.datasets` re-exports
every public name.
"""

from __future__ import annotations

import hashlib
import os
import tarfile
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path

from streamnb.errors import CorpusIntegrityError, CorpusNotFoundError
from streamnb.validate import check_checksum, check_not_empty

__all__ = ["SPAMASSASSIN_ENV", "CACHE_ENV", "SPAMASSASSIN_URL", "SPAMASSASSIN_ARCHIVES", "download_spamassassin",
           "default_cache_dir"]

SPAMASSASSIN_ENV = "STREAMNB_SPAMASSASSIN"
CACHE_ENV = "STREAMNB_CACHE"
SPAMASSASSIN_URL = "https://spamassassin.apache.org/old/publiccorpus/"

# The 2003-02-28 release: 6,047 messages (the packaged copy has 6,046, one spam_2 fewer).
# No digest is pinned: none could be checked against the official files from this
# (offline) build machine, and a wrong pinned digest would make every download fail.
# Pass checksums to download_spamassassin() to verify; without one, the first download's
# sha256 is recorded in the cache and later uses are checked against it.
SPAMASSASSIN_ARCHIVES: dict[str, str | None] = {
    "20030228_easy_ham.tar.bz2": None,
    "20030228_easy_ham_2.tar.bz2": None,
    "20030228_hard_ham.tar.bz2": None,
    "20030228_spam.tar.bz2": None,
    "20030228_spam_2.tar.bz2": None,
}


def default_cache_dir() -> Path:
    """Folder where downloads are kept: $STREAMNB_CACHE, else $XDG_CACHE_HOME/streamnb, else ~/.cache/streamnb."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "streamnb"


def _file_digests(path: Path) -> dict[str, str]:
    sha256, md5 = hashlib.sha256(), hashlib.md5()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            sha256.update(block)
            md5.update(block)
    return {"sha256": sha256.hexdigest(), "md5": md5.hexdigest()}


_SUMS_FILE = "SHA256SUMS"


def _read_sums(folder: Path) -> dict[str, str]:
    sums = {}
    sums_path = folder / _SUMS_FILE
    if sums_path.is_file():
        for line in sums_path.read_text(encoding="utf-8").splitlines():
            digest, _, name = line.partition("  ")
            if name:
                sums[name] = digest
    return sums


def _write_sums(folder: Path, sums: Mapping[str, str]) -> None:
    temporary = folder / (_SUMS_FILE + ".part")
    temporary.write_text("".join(f"{d}  {n}\n" for n, d in sorted(sums.items())), encoding="utf-8")
    os.replace(temporary, folder / _SUMS_FILE)


def download_spamassassin(
    cache_dir: str | os.PathLike[str] | None = None,
    *,
    base_url: str = SPAMASSASSIN_URL,
    checksums: Mapping[str, str | None] | None = None,
    timeout: float = 60.0,
) -> Path:
    """Fetch the official corpus archives into ``<cache_dir>/spamassassin`` and return that folder.

    ``checksums`` maps archive names to their expected digest ('sha256:<hex>', 'md5:<hex>'
    or bare hex) and defaults to :data:`SPAMASSASSIN_ARCHIVES`; a None digest is not
    checked. Each archive is streamed to a ``.part`` file, verified (digest when given, and
    readable as tar always), then renamed into place, so an interrupted or corrupt download
    never looks complete. The sha256 of every stored archive is written to ``SHA256SUMS``
    in the folder; an archive already there is reused when it matches the expected digest
    (or its recorded one), and fetched again otherwise. ``base_url`` may be a ``file://``
    URL (a local mirror).

    Parameters
    ----------
    cache_dir : str, os.PathLike or None
        The cache; None for :func:`default_cache_dir`.
    base_url : str
        Where the archives are.
    checksums : mapping or None
        Archive name -> expected digest or None; None for :data:`SPAMASSASSIN_ARCHIVES`.
    timeout : float
        Seconds to wait for the server.

    Returns
    -------
    Path
        The folder holding the archives.

    Raises
    ------
    InvalidParameterError
        For an empty mapping or a malformed digest.
    CorpusNotFoundError
        When a download fails.
    CorpusIntegrityError
        For a download whose digest differs, or that is not a tar archive.
    """
    archives = dict(SPAMASSASSIN_ARCHIVES if checksums is None else checksums)
    check_not_empty("checksums", archives, "archive")
    expected = {name: check_checksum(name, c) if c else None for name, c in archives.items()}
    folder = (Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()) / "spamassassin"
    folder.mkdir(parents=True, exist_ok=True)
    sums = _read_sums(folder)
    if not base_url.endswith("/"):
        base_url += "/"
    for name, want in expected.items():
        target = folder / name
        if target.is_file():
            have = _file_digests(target)
            reference = want or (("sha256", sums[name]) if name in sums else None)
            if reference is None or have[reference[0]] == reference[1]:
                sums[name] = have["sha256"]
                continue
            target.unlink()  # corrupt or stale copy: fetch it again
        sums[name] = _fetch(base_url + name, target, want, timeout)
        _write_sums(folder, sums)
    _write_sums(folder, sums)
    return folder


def _fetch(url: str, target: Path, want: tuple[str, str] | None, timeout: float) -> str:
    """Download url to target through a .part file; return the sha256 of what was stored."""
    partial = target.with_name(target.name + ".part")
    sha256, md5 = hashlib.sha256(), hashlib.md5()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, open(partial, "wb") as out:
            for block in iter(lambda: response.read(1 << 20), b""):
                sha256.update(block)
                md5.update(block)
                out.write(block)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        partial.unlink(missing_ok=True)
        raise CorpusNotFoundError(
            f"could not download {url}: {exc}. Without network access, fetch the archives "
            f"elsewhere and pass their folder as path= or in {SPAMASSASSIN_ENV}"
        ) from exc
    got = {"sha256": sha256.hexdigest(), "md5": md5.hexdigest()}
    if want is not None and got[want[0]] != want[1]:
        partial.unlink()
        raise CorpusIntegrityError(
            f"checksum mismatch for {url}: expected {want[0]} {want[1]}, got {got[want[0]]}; "
            "the download was discarded"
        )
    if not tarfile.is_tarfile(partial):
        partial.unlink()
        raise CorpusIntegrityError(f"{url} is not a tar archive (an error page?); the download was discarded")
    os.replace(partial, target)
    return got["sha256"]
