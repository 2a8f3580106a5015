"""The worker's HTTP surface.

Endpoints:
    ``GET /health``: ``{"status": "ok", "torch": "2.x", "device": "cpu", "demos": [...]}``.
    ``GET /demos``: every demo with its parameters described for a form.
    ``GET /demos/{name}``: one of those.
    ``POST /demos/{name}``: run a demo; the body is a JSON object of parameters
    (missing ones take their defaults, an empty body means all defaults) and
    the answer is a :class:`~app.worker.demo.DemoResult`.

Errors:
    404 ``{"detail": "unknown demo 'x': the demos are ...", "demos": [...]}``.
    422 ``{"detail": [{"param": "d_k", "message": "d_k must be an integer
    between 1 and 4096, got 5000"}, ...]}``, one entry per bad parameter
    (``param`` is null when the body itself is not a JSON object, nests more
    than 8 levels, holds a number of more than 30 digits or is not UTF-8).
    413, in the same shape, for a body larger than 64 KiB.
    503 ``{"detail": "..."}`` with ``Retry-After`` when the queue is full.

Run it with ``uvicorn --factory app.worker.api:create_worker_app``.
"""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from typing import Annotated

import torch
from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from app import safejson
from app.demos.params import InvalidParams, ParamProblem
from app.demos.spec import DemoInfo
from app.worker.demo import DemoResult
from app.worker.demos import DEMOS, UnknownDemo, get_demo
from app.worker.device import resolve_device
from app.worker.parent import exit_with_parent
from app.worker.runner import DemoRunner, WorkerBusy
from app.worker.settings import get_worker_settings

try:
    VERSION = version("quizlab")
except PackageNotFoundError:  # run from a source tree that was never installed
    VERSION = "0+unknown"

router = APIRouter()

MAX_BODY_BYTES = 65_536  # a demo's parameters are a few numbers
MAX_DEPTH = 8  # they are a flat object; a little room for what a client wraps them in


def get_runner(request: Request) -> DemoRunner:
    runner: DemoRunner = request.app.state.runner
    return runner


RunnerDep = Annotated[DemoRunner, Depends(get_runner)]


@router.get("/health")
async def health(runner: RunnerDep) -> dict[str, str | list[str]]:
    return {
        "status": "ok",
        "torch": torch.__version__,
        "device": runner.device.type,
        "demos": list(DEMOS),
    }


@router.get("/demos")
async def list_demos() -> list[DemoInfo]:
    return [demo.info() for demo in DEMOS.values()]


class UnknownDemoAnswer(BaseModel):
    """The 404 for a demo name the worker does not know: the names it does."""

    detail: str
    demos: list[str]


class ProblemAnswer(BaseModel):
    """One bad parameter: its name (null for the body as a whole) and what is wrong."""

    param: str | None
    message: str


class InvalidParamsAnswer(BaseModel):
    """The 422 (and 413) of a run: one entry per problem, not FastAPI's validation shape."""

    detail: list[ProblemAnswer]


class BusyAnswer(BaseModel):
    """The 503 when the queue is full; ``Retry-After`` says when to ask again."""

    detail: str


UNKNOWN_DEMO = {404: {"model": UnknownDemoAnswer, "description": "No demo has this name."}}
RUN_ANSWERS = {
    **UNKNOWN_DEMO,
    413: {"model": InvalidParamsAnswer, "description": "The body is larger than 64 KiB."},
    422: {"model": InvalidParamsAnswer, "description": "A parameter or the body is invalid."},
    503: {"model": BusyAnswer, "description": "The queue is full: try again (Retry-After)."},
}


@router.get("/demos/{name}", responses=UNKNOWN_DEMO)  # type: ignore[arg-type]
async def describe_demo(name: str) -> DemoInfo:
    return get_demo(name).info()


@router.post(
    "/demos/{name}",
    responses=RUN_ANSWERS,  # type: ignore[arg-type]
    openapi_extra={
        "requestBody": {
            "required": False,
            "content": {"application/json": {"schema": {"type": "object"}}},
        }
    },
)
async def run_demo(name: str, request: Request, runner: RunnerDep) -> DemoResult:
    demo = get_demo(name)
    params = demo.validate(await _json_body(request))
    return await runner.run(demo, params)


class BodyTooLarge(InvalidParams):
    """A body past :data:`MAX_BODY_BYTES`: answered 413, in the shape of a 422."""


async def _json_body(request: Request) -> object:
    # Read the body by hand rather than declaring a Body(): the params model
    # depends on the path, and a bad body must get the same 422 shape as a
    # bad parameter. Read only as far as the limit: parameters are a few
    # numbers, so a larger body is refused before it fills memory.
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            too_large = f"the body is larger than {MAX_BODY_BYTES} bytes: send only the parameters"
            raise BodyTooLarge([ParamProblem(None, too_large)])
    if not body.strip():
        return {}
    try:
        return safejson.loads(body, max_depth=MAX_DEPTH)
    except safejson.BadJSON as error:
        raise InvalidParams([ParamProblem(None, f"the body is {error}")]) from None


async def _unknown_demo(request: Request, error: Exception) -> JSONResponse:
    return JSONResponse({"detail": str(error), "demos": list(DEMOS)}, status_code=404)


async def _invalid_params(request: Request, error: Exception) -> JSONResponse:
    problems = error.problems if isinstance(error, InvalidParams) else []
    status = 413 if isinstance(error, BodyTooLarge) else 422
    return JSONResponse({"detail": [problem.as_json() for problem in problems]}, status_code=status)


async def _busy(request: Request, error: Exception) -> JSONResponse:
    return JSONResponse({"detail": str(error)}, status_code=503, headers={"Retry-After": "1"})


def create_worker_app(
    *,
    device: str | None = None,
    max_concurrent: int | None = None,
    max_waiting: int | None = None,
    num_threads: int | None = None,
    warm_up: bool = True,
) -> FastAPI:
    """Build the worker app.

    Args:
        device: ``"auto"``, ``"cpu"`` or ``"cuda"``. This and the next three
            read their ``Settings`` field when None (``QUIZLAB_WORKER_DEVICE``,
            ``QUIZLAB_WORKER_MAX_CONCURRENT``, ``QUIZLAB_WORKER_MAX_WAITING``,
            ``QUIZLAB_WORKER_THREADS``).
        max_concurrent: demos computing at once. One by default, which
            leaves a core to the web server when both share a 2-core machine;
            on a machine of its own, the number of cores.
        max_waiting: requests that may queue for a slot before the worker
            answers 503.
        num_threads: torch intra-op threads per demo: one by default, as
            more slow every demo down badly when other processes compete for
            the cores (see :class:`~app.worker.runner.DemoRunner`).
        warm_up: run every demo once at its smallest parameters before
            serving, so that torch's one-time set-up does not land on the
            first request.

    Returns:
        The app. Its lifespan resolves the device, failing at start-up when
        CUDA is asked for and absent, and waits at shutdown for the demos
        still computing.
    """

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        settings = get_worker_settings()
        runner = DemoRunner(
            resolve_device(device or settings.device),
            max_concurrent=max_concurrent or settings.max_concurrent,
            max_waiting=settings.max_waiting if max_waiting is None else max_waiting,
            num_threads=num_threads or settings.threads,
        )
        app.state.runner = runner
        watcher = None
        if settings.parent_pid is not None:
            watcher = asyncio.create_task(exit_with_parent(settings.parent_pid))
        if warm_up:
            await runner.warm_up(DEMOS.values())
        try:
            yield
        finally:
            if watcher is not None:
                watcher.cancel()
            await runner.drain()

    app = FastAPI(title="Quizlab demo worker", version=VERSION, lifespan=lifespan)
    app.include_router(router)
    app.add_exception_handler(UnknownDemo, _unknown_demo)
    app.add_exception_handler(InvalidParams, _invalid_params)
    app.add_exception_handler(WorkerBusy, _busy)
    return app
