"""Rendered pages kept in memory, keyed on everything they depend on, ready to send.

A card page depends only on the card (its content hash), the view, the
card file's problems and which live results are in memory, so its HTML can be
reused until one of those changes. That keeps the page close to the speed of
serving a precomputed string (see docs/performance.md).

A cached page holds a placeholder where each visitor's CSRF token goes
(:mod:`app.web.middleware.csrf`), so it cannot be gzipped once as a whole.
:class:`Page` compresses the parts between the placeholders once, each
ending on a byte boundary (``Z_SYNC_FLUSH``), and :meth:`Page.gzip` sends
them with the token in between as an uncompressed (stored) deflate block:
one ordinary gzip stream, built per request with a CRC and no compression.
"""

import hashlib
import struct
import zlib
from collections.abc import Hashable
from threading import Lock

from cachetools import LRUCache

ENTRIES = 2048
# A gzip member header: magic, deflate, no flags, no mtime, max compression, unknown OS.
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"


def _deflate(data: bytes, *, final: bool) -> bytes:
    """Raw deflate of ``data``; ends byte-aligned, and with the final block when ``final``."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS, 9)
    return compressor.compress(data) + compressor.flush(
        zlib.Z_FINISH if final else zlib.Z_SYNC_FLUSH
    )


def _stored(data: bytes) -> bytes:
    """``data`` as one non-final stored deflate block (at most 65,535 bytes)."""
    return b"\x00" + struct.pack("<HH", len(data), len(data) ^ 0xFFFF) + data


class Page(bytes):
    """A rendered page with ``placeholder`` where the visitor's token goes.

    It is the page's bytes (so it can be used as before) plus the compressed
    parts around the placeholder and a digest for the ``ETag``.
    """

    placeholder: bytes
    parts: tuple[bytes, ...]  # compressed: between placeholders, the last one final
    digest: str

    @classmethod
    def build(cls, body: bytes, placeholder: bytes) -> "Page":
        page = cls(body)
        page.placeholder = placeholder
        pieces = body.split(placeholder)
        page.parts = tuple(
            _deflate(piece, final=i == len(pieces) - 1) for i, piece in enumerate(pieces)
        )
        page.digest = hashlib.sha256(body).hexdigest()[:16]
        return page

    def personalised(self, token: bytes) -> bytes:
        """The page with ``token`` in place of every placeholder."""
        return self.replace(self.placeholder, token)

    def gzip(self, token: bytes, personalised: bytes) -> bytes:
        """``personalised`` (what :meth:`personalised` gave for ``token``) as a gzip stream."""
        stored = _stored(token)
        trailer = struct.pack("<II", zlib.crc32(personalised), len(personalised) & 0xFFFFFFFF)
        return b"".join((_GZIP_HEADER, stored.join(self.parts), trailer))

    def etag(self, token: bytes, encoding: str) -> str:
        """A strong validator of the personalised bytes in ``encoding``.

        The token goes in hashed, so the header never repeats it.
        """
        mark = hashlib.sha256(token).hexdigest()[:12]
        suffix = "-gz" if encoding == "gzip" else ""
        return f'"{self.digest}-{mark}{suffix}"'


class PageCache:
    """A small LRU of rendered pages; safe to share between threads.

    cachetools' LRUCache is not thread-safe by itself: a lock guards it.
    """

    def __init__(self, entries: int = ENTRIES) -> None:
        self.entries = entries
        self._pages: LRUCache[Hashable, Page] = LRUCache(maxsize=entries)
        self._lock = Lock()

    def get(self, key: Hashable) -> Page | None:
        with self._lock:
            return self._pages.get(key)

    def put(self, key: Hashable, page: Page) -> None:
        with self._lock:
            self._pages[key] = page
