"""Sessions in a signed cookie: who is signed in, and the session's CSRF token.

The cookie holds ``base64(json).signature``, an HMAC-SHA256 of the payload
under the server's secret key (``app.web.secret.session_secret``): the browser can
read nothing it could not already know and change nothing without the key.
It is HttpOnly (scripts never see it) and SameSite=Lax. Over HTTPS
(``scope["scheme"]``, which uvicorn's proxy-headers support sets from
``X-Forwarded-Proto`` behind a trusted proxy) it is Secure and named
``__Host-quizlab_session``: browsers take a cookie of that name only over
HTTPS, for this host alone and the whole site, so neither a page served over
plain HTTP nor a sibling subdomain can plant one. Under a path prefix
(``root_path``) the prefix is ``__Secure-``, which allows a narrower path.

A visitor who has only read pages has no session and gets no cookie: their
pages carry a *visitor token* instead, an HMAC under the secret key of the
current day's number (:data:`VISITOR_WINDOW`), the same for every visitor that
day. It proves nothing about who sends a form, so a state-changing request
that carries it must also be vouched for by the browser as coming from this
site (``Sec-Fetch-Site`` or ``Origin``: :mod:`app.web.middleware.csrf`); that
first form then starts a real session with a random token of its own, and its
answer sends the new token in the ``X-CSRF-Token`` header for
``static/app.js`` to put in the page. The previous day's visitor token is
still taken, so a page opened before midnight can be sent after it.

A refused request never writes a cookie: a form from another site arrives
without the cookie (SameSite=Lax), and answering it with a fresh one would
replace the cookie the browser holds, signing the visitor out.

The payload:

- ``c``: the CSRF token;
- ``i``: the signed-in session's token (accounts mode), absent when signed
  out. The server keeps its hash (app.accounts.sessions) and looks it up on
  every request, so signing out, signing out everywhere, a password change or
  disabling the user end the session even in a copy of the cookie;
- ``t``: when the session was made (seconds), to expire it after
  :data:`MAX_AGE`.
"""

import base64
import hashlib
import hmac
import json
import secrets
import time
from typing import Any

from cachetools import LRUCache
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "quizlab_session"
MAX_AGE = 14 * 24 * 3600
SESSION_KEY = "quizlab.session"
VISITOR_WINDOW = 24 * 3600
"""Seconds a visitor token is made for; the one before is still accepted."""
TOKEN_HEADER = "X-CSRF-Token"


def new_token() -> str:
    """A CSRF token: 43 URL-safe characters, 256 random bits."""
    return secrets.token_urlsafe(32)


class Session(dict[str, Any]):
    """The decoded payload; ``modified`` says the cookie must be written again.

    A visitor's session (no cookie yet) lists the visitor tokens it accepts in
    ``visitor_tokens``; :meth:`start` turns it into a real one.
    """

    modified = False
    visitor_tokens: tuple[str, ...] = ()

    @property
    def is_visitor(self) -> bool:
        """Whether this is a cookieless visitor's stand-in, not a session of its own."""
        return bool(self.visitor_tokens)

    @property
    def accepted_tokens(self) -> tuple[str, ...]:
        """The CSRF tokens a state-changing request may carry."""
        return self.visitor_tokens or (self.csrf,)

    def start(self) -> None:
        """A session of its own for a visitor: a random token, and a cookie to keep it."""
        self.clear()
        self.update(c=new_token(), t=int(time.time()))
        self.visitor_tokens = ()
        self.modified = True

    @property
    def csrf(self) -> str:
        token: str = self["c"]
        return token

    @property
    def signed_in(self) -> str | None:
        """The token of the server-side session this cookie names, if signed in."""
        token = self.get("i")
        return token if isinstance(token, str) else None

    def sign_in(self, token: str) -> None:
        """Name the server-side session ``token``; a new CSRF token too, so one seen before dies."""
        self.start()
        self["i"] = token

    def sign_out(self) -> None:
        self.start()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Signer:
    def __init__(self, secret: bytes) -> None:
        self._key = hashlib.sha256(b"quizlab session\0" + secret).digest()
        self._visitor_day: int | None = None
        self._visitor_tokens: tuple[str, ...] = ()
        # Cookies whose signature checked out, by their text (bounded: see loads).
        self._verified: LRUCache[str, dict[str, Any]] = LRUCache(maxsize=4096)

    def _mac(self, body: str) -> str:
        return _b64(hmac.new(self._key, body.encode("ascii"), hashlib.sha256).digest())

    def visitor(self, now: float) -> Session:
        """A cookieless visitor's stand-in session: today's visitor token, yesterday's accepted."""
        day = int(now // VISITOR_WINDOW)
        if self._visitor_day != day:  # two HMACs a day, not two a request
            self._visitor_tokens = tuple(self._visitor_token(d) for d in (day, day - 1))
            self._visitor_day = day
        tokens = self._visitor_tokens
        session = Session(c=tokens[0], t=int(now))
        session.visitor_tokens = tokens
        return session

    def _visitor_token(self, day: int) -> str:
        # 32 bytes, as long as a random token (43 characters), so the cached
        # page's placeholder can be swapped for either.
        return _b64(hmac.new(self._key, f"visitor\0{day}".encode(), hashlib.sha256).digest())

    def dumps(self, payload: dict[str, Any]) -> str:
        body = _b64(json.dumps(payload, separators=(",", ":")).encode())
        return f"{body}.{self._mac(body)}"

    def loads(self, cookie: str, *, now: float) -> Session | None:
        """The payload if the signature is right and the session has not expired."""
        # A returning visitor sends the same cookie on every request: check its
        # signature and decode it once (docs/performance.md), then only its age.
        payload = self._verified.get(cookie)
        if payload is None:
            payload = self._verify(cookie)
            if payload is None:
                return None
            self._verified[cookie] = payload
        if now - payload["t"] > MAX_AGE:
            return None
        return Session(payload)  # a copy: the request may change it

    def _verify(self, cookie: str) -> dict[str, Any] | None:
        body, _, mac = cookie.partition(".")
        try:
            if not hmac.compare_digest(mac, self._mac(body)):
                return None
            payload = json.loads(_unb64(body))
        except (ValueError, UnicodeError):
            return None
        if not isinstance(payload, dict) or not isinstance(payload.get("c"), str):
            return None
        if not isinstance(payload.get("t"), int):
            return None
        return payload


def cookie_name(scope: Scope) -> str:
    """The cookie's name for this request: prefixed over HTTPS (see the module)."""
    if scope.get("scheme") != "https":
        return COOKIE
    return f"__Secure-{COOKIE}" if scope.get("root_path") else f"__Host-{COOKIE}"


def _cookie_value(scope: Scope, cookie: str) -> str | None:
    """The value of cookie ``cookie`` in the request's Cookie headers, if it is there.

    Split by hand rather than with ``http.cookies.SimpleCookie``, which cost more
    than the rest of the middleware: the values Quizlab sets are URL-safe base64
    and a dot, never quoted, so ``name=value`` pairs separated by ``;`` are all
    there is to read. Another site's malformed cookie does not hide ours.
    """
    prefix = cookie + "="
    for name, value in scope["headers"]:
        if name == b"cookie":
            header: str = value.decode("latin-1")
            for pair in header.split(";"):
                pair = pair.strip()
                if pair.startswith(prefix):
                    return pair[len(prefix) :]
    return None


def _set_cookie(scope: Scope, name: str, value: str) -> str:
    secure = "; Secure" if scope.get("scheme") == "https" else ""
    path = scope.get("root_path", "") or "/"
    return f"{name}={value}; Path={path}; Max-Age={MAX_AGE}; HttpOnly; SameSite=Lax{secure}"


def session_of(scope: Scope) -> Session:
    session: Session = scope[SESSION_KEY]
    return session


class SessionMiddleware:
    """Puts the :class:`Session` in ``scope``; writes the cookie when it is new or changed."""

    def __init__(self, app: ASGIApp, *, secret: bytes) -> None:
        self.app = app
        self.signer = Signer(secret)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        now = time.time()
        name = cookie_name(scope)
        cookie = _cookie_value(scope, name)
        session = self.signer.loads(cookie, now=now) if cookie else None
        if session is None:
            # No cookie until the visitor sends a form (see the module docstring).
            session = self.signer.visitor(now)
        scope[SESSION_KEY] = session

        async def send_with_cookie(message: Message) -> None:
            if message["type"] != "http.response.start":
                await send(message)
                return
            headers = MutableHeaders(scope=message)
            if "cache-control" in headers:
                # Public, immutable static files: never with a cookie a shared cache could keep.
                await send(message)
                return
            # Pages carry the session's CSRF token: no shared cache may keep them.
            headers["Cache-Control"] = "private, no-cache"
            if session.modified:
                headers.append("set-cookie", _set_cookie(scope, name, self.signer.dumps(session)))
                # The page that sent this still holds the old token (app.js swaps it in).
                headers[TOKEN_HEADER] = session.csrf
            await send(message)

        await self.app(scope, receive, send_with_cookie)
