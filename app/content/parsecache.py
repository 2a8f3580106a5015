"""Parsed cards kept on disk by content hash, so a restart does not parse again.

A card file's parse result depends on its text, its path (messages name it)
and the code that parses it: this module, the rest of :mod:`app.content`, the
demo specs that ``{live}`` bindings are checked against, and the Markdown,
YAML, highlighting and sanitising libraries. :data:`PARSER_VERSION` hashes all
of that, and each entry is stored under
``<folder>/<PARSER_VERSION>/<sha256(path, text)>.pickle``: an edit gives a new
key, an upgrade a new folder, and the folders of other versions are removed
when a library first uses the cache.

The folder is the data folder (``QUIZLAB_DATA_DIR``), which already holds the
database and the session key, so its pickles are trusted like them. Writes go
through a temporary file and a rename, so replicas sharing the folder never
read half an entry; a folder that cannot be written only costs the parse.
"""

import hashlib
import logging
import os
import pickle
import shutil
import tempfile
from functools import cache
from importlib import metadata
from pathlib import Path

from app.content.card import ParseResult

logger = logging.getLogger(__name__)

_CODE = Path(__file__).resolve().parent.parent  # app/
_SOURCES = ("content", "demos")
_LIBRARIES = (
    "markdown-it-py",
    "mdit-py-plugins",
    "pygments",
    "nh3",
    "pyyaml",
    "latex2mathml",
    "pydantic",
)


@cache
def parser_version() -> str:
    """A hash of the parsing code and the versions of the libraries it calls."""
    digest = hashlib.sha256()
    for part in _SOURCES:
        for source in sorted((_CODE / part).rglob("*.py")):
            digest.update(str(source.relative_to(_CODE)).encode() + b"\0")
            digest.update(source.read_bytes())
    for name in _LIBRARIES:
        try:
            digest.update(f"{name}={metadata.version(name)}\0".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{name}=none\0".encode())
    return digest.hexdigest()[:16]


def entry_key(shown_path: str, text: str, salt: str = "") -> str:
    """The key of a parse result: the file's path and text, and ``salt`` (how links render)."""
    data = shown_path.encode() + b"\0" + text.encode() + b"\0" + salt.encode()
    return hashlib.sha256(data).hexdigest()


class ParseCache:
    """Parse results on disk under ``folder``; every method is safe to call from threads."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder / parser_version()
        self._root = folder
        self._pruned = False
        self._writable = True

    def get(self, key: str) -> ParseResult | None:
        try:
            data = (self.folder / f"{key}.pickle").read_bytes()
        except OSError:
            return None
        try:
            result = pickle.loads(data)
        except Exception:  # a damaged entry is a miss; the parse replaces it
            return None
        return result if isinstance(result, ParseResult) else None

    def put(self, key: str, result: ParseResult) -> None:
        if not self._writable:
            return
        try:
            self._prune_versions()
            self.folder.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
            with os.fdopen(handle, "wb") as file:
                pickle.dump(result, file, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(temporary, self.folder / f"{key}.pickle")
        except OSError as exc:
            self._writable = False
            logger.warning("parsed cards not cached on disk (%s): restarts will parse again", exc)

    def keep_only(self, keys: set[str]) -> None:
        """Delete this version's entries that are not in ``keys`` (files edited or removed)."""
        try:
            for entry in self.folder.glob("*.pickle"):
                if entry.stem not in keys:
                    entry.unlink(missing_ok=True)
        except OSError:
            pass  # a read-only folder keeps its entries

    def _prune_versions(self) -> None:
        if self._pruned:
            return
        self._pruned = True
        if self._root.is_dir():
            for other in self._root.iterdir():
                if other.is_dir() and other != self.folder:
                    shutil.rmtree(other, ignore_errors=True)
