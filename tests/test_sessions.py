"""The signed session cookie: a changed, foreign or expired cookie is worth nothing."""

from app.web.middleware.sessions import MAX_AGE, Session, Signer

NOW = 1_800_000_000.0


def test_a_signed_session_reads_back() -> None:
    signer = Signer(b"k" * 32)
    cookie = signer.dumps(Session(c="token", i="session", t=int(NOW)))
    assert signer.loads(cookie, now=NOW) == {"c": "token", "i": "session", "t": int(NOW)}


def test_a_changed_cookie_is_refused() -> None:
    signer = Signer(b"k" * 32)
    body, mac = signer.dumps(Session(c="token", i="mine", t=int(NOW))).split(".")
    forged = Signer(b"k" * 32).dumps(Session(c="token", i="theirs", t=int(NOW))).split(".")[0]
    assert signer.loads(f"{forged}.{mac}", now=NOW) is None
    assert signer.loads(body, now=NOW) is None
    assert signer.loads("not a cookie", now=NOW) is None


def test_a_cookie_signed_with_another_key_is_refused() -> None:
    cookie = Signer(b"a" * 32).dumps(Session(c="token", t=int(NOW)))
    assert Signer(b"b" * 32).loads(cookie, now=NOW) is None


def test_a_session_expires() -> None:
    signer = Signer(b"k" * 32)
    cookie = signer.dumps(Session(c="token", t=int(NOW)))
    assert signer.loads(cookie, now=NOW + MAX_AGE - 1) is not None
    assert signer.loads(cookie, now=NOW + MAX_AGE + 1) is None


def test_signing_in_and_out_change_the_csrf_token() -> None:
    session = Session(c="before", t=int(NOW))
    session.sign_in("server-side token")
    assert session.csrf != "before" and session.signed_in == "server-side token"
    assert session.modified
    signed_in_token = session.csrf
    session.sign_out()
    assert session.signed_in is None and session.csrf != signed_in_token
