"""Static files with long cache lifetimes.

Templates link every asset through :func:`app.web.templating.static_url`, which
adds a content hash, so a changed file gets a new URL and the old one can be
cached as immutable.
"""

from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope


class CachedStaticFiles(StaticFiles):
    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        if response.status_code == 200:
            response.headers["Cache-Control"] = "public, max-age=31536000, immutable"
        return response
