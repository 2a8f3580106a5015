"""Which reverse proxy ``quizlab serve`` trusts for the client's address and scheme."""

from collections.abc import Mapping
from typing import Any


def proxy_options(environ: Mapping[str, str]) -> dict[str, Any]:
    """uvicorn's proxy settings: X-Forwarded-For and -Proto only from ``FORWARDED_ALLOW_IPS``.

    Unset, no proxy is trusted. (uvicorn's own default trusts 127.0.0.1, so any
    process on the machine could name its own address and dodge the per-address
    sign-in limit.) docs/security.md says how to name the reverse proxy.
    """
    trusted = environ.get("FORWARDED_ALLOW_IPS", "").strip()
    if not trusted:
        return {"proxy_headers": False}
    return {"proxy_headers": True, "forwarded_allow_ips": trusted}
