"""The web app: app factory, dependencies, templating, errors, middleware and routes.

Routes are thin: they parse a request, call :mod:`app.content`,
:mod:`app.practice`, :mod:`app.accounts` or :mod:`app.live`, and render a
template through :mod:`app.web.render`. Every ``*Dep`` lives in
:mod:`app.web.deps`.

May import: every part except the worker and the CLI, and never torch.
"""

from app.web.app import create_app

__all__ = ["create_app"]
