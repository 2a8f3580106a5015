"""The demo worker: a separate FastAPI app that runs attention demos with torch.

The web server never imports torch (nor numpy): it asks this worker over HTTP
and renders the numbers it gets back. So importing this package is cheap and
imports nothing heavy; torch arrives with :mod:`app.worker.demos` and
:mod:`app.worker.api`.

Modules:
    params: the base class of every demo's parameters, their JSON description
        and the messages for bad values.
    demo: :class:`~app.worker.demo.Demo` (one demo: metadata, parameters and a
        compute function) and :class:`~app.worker.demo.DemoResult`.
    device: picking the torch device and seeding generators.
    demos: the registry, one module per family of demos.
    runner: runs demos off the event loop with bounded concurrency.
    api: ``create_worker_app()``, the HTTP surface.

Errors raised to callers:
    UnknownDemo (``demos``): no demo by that name (HTTP 404).
    InvalidParams (``params``): parameters out of bounds, of the wrong type or
        unknown (HTTP 422, one problem per parameter).
    WorkerBusy (``runner``): too many requests already waiting (HTTP 503).
"""
