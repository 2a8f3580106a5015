"""Live numbers on the web side: the worker client, cached results, and the local worker.

Runs a card's ``{live}`` bindings and embedded demos through the worker's HTTP
API, caches results in memory and (through a
:class:`~app.live.results.ResultStore`) in the database, and judges each
claim. ``quizlab serve`` starts a local worker process when no worker URL is
set (:mod:`app.live.localworker`).

May import: :mod:`app.content`, :mod:`app.demos` and itself. Never the web,
the CLI, or torch: the worker runs in its own process.
"""
