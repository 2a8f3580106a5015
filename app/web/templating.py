"""The one Jinja environment: autoescaped templates, static URLs with content hashes."""

import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Any

from fastapi.templating import Jinja2Templates
from jinja2 import pass_context

from app.content.card import QUICK_SCAN_SECTIONS, SECTIONS
from app.practice import MAX_ANSWER_LENGTH
from app.settings import PROJECT_ROOT
from app.web.middleware.csrf import token_for_render

STATIC_DIR = PROJECT_ROOT / "static"
TEMPLATES_DIR = PROJECT_ROOT / "templates"


@lru_cache(maxsize=256)
def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


@pass_context
def static_url(context: dict[str, Any], name: str) -> str:
    """URL of a static file with its content hash, so it can be cached for a year."""
    root = context["request"].scope.get("root_path", "")
    return f"{root}/static/{name}?v={_digest(STATIC_DIR / name)}"


@pass_context
def path_for(context: dict[str, Any], name: str, /, **params: Any) -> str:
    """Root-relative URL of a route, so links survive a proxy that changes scheme or host."""
    request = context["request"]
    root = request.scope.get("root_path", "")
    return f"{root}{request.app.url_path_for(name, **params)}"


@pass_context
def csrf_token(context: dict[str, Any]) -> str:
    """The token every POST form and the csrf-token meta tag carry (app.web.middleware.csrf)."""
    return token_for_render(context["request"].scope)


@pass_context
def auth_mode(context: dict[str, Any]) -> str:
    """none or accounts: the same for every request, so cached pages may show it."""
    mode: str = context["request"].app.state.settings.auth
    return mode


# Jinja2Templates turns autoescape on for .html files; keep it that way.
templates = Jinja2Templates(directory=TEMPLATES_DIR)
templates.env.globals["static_url"] = static_url
templates.env.globals["path_for"] = path_for
templates.env.globals["csrf_token"] = csrf_token
templates.env.globals["auth_mode"] = auth_mode
# Templates ship with the code: checking their mtimes on every render costs
# a stat per include on the hot path.
templates.env.auto_reload = False
templates.env.trim_blocks = True
templates.env.lstrip_blocks = True
templates.env.globals["SECTIONS"] = SECTIONS
templates.env.globals["QUICK_SCAN_SECTIONS"] = QUICK_SCAN_SECTIONS
templates.env.globals["MAX_ANSWER_LENGTH"] = MAX_ANSWER_LENGTH
