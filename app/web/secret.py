"""The key that signs session cookies: the setting, or one made once and kept.

Called once, when the app is built, never per request: creating the file is
start-up work, not something reading a setting should do.
"""

import os
import secrets
import tempfile
from pathlib import Path

from app.settings import Settings


def session_secret(settings: Settings) -> bytes:
    """The cookie-signing key: ``QUIZLAB_SECRET_KEY``, or one kept in the data folder."""
    if settings.secret_key:
        return settings.secret_key.encode()
    path = settings.data_dir / "secret_key"
    if not path.exists():
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        # Written whole under another name, then linked into place: of two
        # processes starting together, both end up reading the one complete key.
        # The draft's name must be unique across machines, not only processes:
        # two containers sharing one volume both run as PID 1.
        descriptor, draft_name = tempfile.mkstemp(prefix=".secret_key.", dir=settings.data_dir)
        draft = Path(draft_name)
        with os.fdopen(descriptor, "w", encoding="ascii") as file:
            file.write(secrets.token_urlsafe(48))
        try:
            os.link(draft, path)
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    return path.read_text(encoding="ascii").strip().encode()
