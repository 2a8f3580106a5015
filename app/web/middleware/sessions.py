"""Sessions in a signed cookie: who is signed in, and the session's CSRF token.

The cookie holds ``base64(json).signature``, an HMAC-SHA256 of the payload
under the server's secret key (``app.web.secret.session_secret``): the browser can
read nothing it could not already know and change nothing without the key.
It is HttpOnly (scripts never see it), SameSite=Lax, and Secure whenever the
request came over HTTPS (``scope["scheme"]``, which uvicorn's proxy-headers
support sets from ``X-Forwarded-Proto`` behind a trusted proxy).

Every visitor gets a session on their first response, even signed out: the
CSRF token lives in it (see :mod:`app.web.middleware.csrf`). The payload:

- ``c``: the CSRF token;
- ``u``: the signed-in user's id (accounts mode), absent when signed out;
- ``s``: a stamp of that user's password hash, so changing the password ends
  every other session;
- ``t``: when the session was made (seconds), to expire it after
  :data:`MAX_AGE`.
"""

import base64
import hashlib
import hmac
import json
import secrets
import time
from http.cookies import SimpleCookie
from typing import Any

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "quizlab_session"
MAX_AGE = 14 * 24 * 3600
SESSION_KEY = "quizlab.session"


def new_token() -> str:
    """A CSRF token: 43 URL-safe characters, 256 random bits."""
    return secrets.token_urlsafe(32)


class Session(dict[str, Any]):
    """The decoded payload; ``modified`` says the cookie must be written again."""

    modified = False

    @property
    def csrf(self) -> str:
        token: str = self["c"]
        return token

    def sign_in(self, user_id: int, stamp: str) -> None:
        """A fresh session for ``user_id``: a new token too, so one seen before sign-in is dead."""
        self.clear()
        self.update(c=new_token(), u=user_id, s=stamp, t=int(time.time()))
        self.modified = True

    def sign_out(self) -> None:
        self.clear()
        self.update(c=new_token(), t=int(time.time()))
        self.modified = True


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Signer:
    def __init__(self, secret: bytes) -> None:
        self._key = hashlib.sha256(b"quizlab session\0" + secret).digest()

    def _mac(self, body: str) -> str:
        return _b64(hmac.new(self._key, body.encode("ascii"), hashlib.sha256).digest())

    def dumps(self, payload: dict[str, Any]) -> str:
        body = _b64(json.dumps(payload, separators=(",", ":")).encode())
        return f"{body}.{self._mac(body)}"

    def loads(self, cookie: str, *, now: float) -> Session | None:
        """The payload if the signature is right and the session has not expired."""
        body, _, mac = cookie.partition(".")
        try:
            if not hmac.compare_digest(mac, self._mac(body)):
                return None
            payload = json.loads(_unb64(body))
        except (ValueError, UnicodeError):
            return None
        if not isinstance(payload, dict) or not isinstance(payload.get("c"), str):
            return None
        if not isinstance(payload.get("t"), int) or now - payload["t"] > MAX_AGE:
            return None
        return Session(payload)


def _cookie_value(scope: Scope) -> str | None:
    for name, value in scope["headers"]:
        if name == b"cookie":
            jar: SimpleCookie = SimpleCookie()
            try:
                jar.load(value.decode("latin-1"))
            except Exception:  # a malformed Cookie header is the same as none
                return None
            morsel = jar.get(COOKIE)
            if morsel is not None:
                return morsel.value
    return None


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
        cookie = _cookie_value(scope)
        session = self.signer.loads(cookie, now=now) if cookie else None
        if session is None:
            session = Session(c=new_token(), t=int(now))
            session.modified = True
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
                secure = "; Secure" if scope.get("scheme") == "https" else ""
                root = scope.get("root_path", "") or "/"
                value = self.signer.dumps(session)
                headers.append(
                    "set-cookie",
                    f"{COOKIE}={value}; Path={root}; Max-Age={MAX_AGE}; HttpOnly; "
                    f"SameSite=Lax{secure}",
                )
            await send(message)

        await self.app(scope, receive, send_with_cookie)
