"""Types for what a form, query or path sends, checked where the request comes in.

A value that reaches a route through one of these is one both databases can
store (:mod:`app.storage.values`); a bad one is a 422 page that names the
field and says why, before any query runs.
"""

from typing import Annotated

from pydantic import AfterValidator

from app.storage.values import storable_text

StoredText = Annotated[str, AfterValidator(storable_text)]
"""Text a route may store or look up: no NUL character, no lone surrogate."""
