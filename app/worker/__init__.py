"""The demo worker: a separate FastAPI app that runs the demos with torch.

The web server never imports torch (nor numpy): it asks this worker over HTTP
and renders the numbers it gets back. So importing this package is cheap and
imports nothing heavy; torch arrives with :mod:`app.worker.demos` and
:mod:`app.worker.api`.

May import: :mod:`app.demos` (the torch-free specs it validates with), torch,
numpy and itself. Never the web, the CLI, content, storage or the web's
``Settings``: it reads only :class:`~app.worker.settings.WorkerSettings`
(tests/test_architecture.py).

Modules:
    settings: ``WorkerSettings`` (``QUIZLAB_WORKER_*``).
    demo: :class:`~app.worker.demo.Demo` (a spec from :mod:`app.demos` with its
        compute function) and :class:`~app.worker.demo.DemoResult`.
    device: picking the torch device and seeding generators.
    demos: the registry, one module per family of demos.
    runner: runs demos off the event loop with bounded concurrency.
    api: ``create_worker_app()``, the HTTP surface.

Errors raised to callers:
    UnknownDemo (:mod:`app.demos`): no demo by that name (HTTP 404).
    InvalidParams (:mod:`app.demos`): parameters out of bounds, of the wrong
        type or unknown (HTTP 422, one problem per parameter).
    WorkerBusy (``runner``): too many requests already waiting (HTTP 503).
"""
