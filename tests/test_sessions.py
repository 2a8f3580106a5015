"""The signed session cookie: a changed, foreign or expired cookie is worth nothing."""

from app.web.middleware.sessions import MAX_AGE, VISITOR_WINDOW, Session, Signer, new_token

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


def test_a_visitor_takes_todays_and_yesterdays_token_only() -> None:
    signer = Signer(b"k" * 32)
    today = signer.visitor(NOW)
    tomorrow = signer.visitor(NOW + VISITOR_WINDOW)
    later = signer.visitor(NOW + 2 * VISITOR_WINDOW)
    assert today.is_visitor and not today.modified
    assert today.csrf in tomorrow.accepted_tokens  # a page opened before midnight
    assert today.csrf not in later.accepted_tokens
    assert Signer(b"j" * 32).visitor(NOW).csrf != today.csrf  # another server's key
    assert len(today.csrf) == len(new_token())


def test_starting_a_visitors_session_gives_it_a_random_token() -> None:
    visitor = Signer(b"k" * 32).visitor(NOW)
    shared = visitor.csrf
    visitor.start()
    assert not visitor.is_visitor and visitor.modified
    assert visitor.csrf != shared and visitor.accepted_tokens == (visitor.csrf,)


def test_a_cookie_read_again_is_a_fresh_copy() -> None:
    """Verified cookies are remembered by their text; each request still gets its own session."""
    signer = Signer(b"k" * 32)
    cookie = signer.dumps(Session(c="token", t=int(NOW)))
    first = signer.loads(cookie, now=NOW)
    assert first is not None
    first["m"] = 5  # what the multiple-choice route does to its request's session
    again = signer.loads(cookie, now=NOW)
    assert again == {"c": "token", "t": int(NOW)} and not again.modified


def test_the_session_cookie_is_found_among_others_even_malformed_ones() -> None:
    from app.web.middleware.sessions import COOKIE, _cookie_value

    header = f'theirs="unterminated; {COOKIE}=abc.def; other=1'.encode()
    assert _cookie_value({"headers": [(b"cookie", header)]}, COOKIE) == "abc.def"
    assert _cookie_value({"headers": [(b"cookie", b"x=1")]}, COOKIE) is None
    assert _cookie_value({"headers": [(b"cookie", f"x{COOKIE}=no".encode())]}, COOKIE) is None
