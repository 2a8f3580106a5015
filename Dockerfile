# Quizlab images; docs/self-hosting.md explains each. Targets:
#
#   standalone (the default)  web server + a local CPU demo worker in one
#       container, on embedded defaults (SQLite under /data, bundled content):
#           docker build --build-arg TORCH_VARIANT=cpu -t quizlab .
#           docker run -p 8000:8000 -v quizlab-data:/data quizlab
#   web     the web server alone, no torch: compose's `web` service; run as
#           many as you like against one PostgreSQL and a worker.
#   worker  the demo worker with torch (`quizlab worker`): compose's `worker`
#           service, or a GPU host of its own.
#
# Build arguments:
#   PYTHON_IMAGE     base image with Python 3.11+ and venv (the official slim
#                    image by default; scripts/container_smoke.py builds on a
#                    local stand-in).
#   TORCH_VARIANT    cuda (default): torch from PyPI, the CUDA build on Linux
#                    x86_64 (~3 GB to download with its NVIDIA libraries), which runs
#                    on a CPU too; cpu: the CPU-only build from TORCH_CPU_INDEX.
#   TORCH_SPEC       the torch requirement, torch==2.13.0 by default.
#   TORCH_CPU_INDEX  extra index for the cpu variant; empty for PyPI plus
#                    docker/wheels/ only.
# Wheels in docker/wheels/ are offered to pip too (see its README). Needs
# BuildKit (Docker 23+) or Buildah/Podman: the worker uses RUN --mount.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS base
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH
# A fixed uid, so that a data volume keeps its owner across image rebuilds.
RUN groupadd --system --gid 10001 quizlab \
    && useradd --system --uid 10001 --gid quizlab --home-dir /nonexistent \
        --no-create-home --shell /usr/sbin/nologin quizlab \
    && mkdir /data \
    && chown quizlab:quizlab /data


# The virtualenv: the dependencies from pyproject.toml, then the project as an
# editable install in compat mode (a .pth that puts /app on sys.path, and the
# `quizlab` command). Only pyproject.toml goes into this stage, so a change to
# the code rebuilds neither it nor torch's layer below (nor does the README:
# pyproject.toml names it, so an empty one stands in). The code stays in /app
# because the app finds templates/, static/ and content/ next to its package
# (PROJECT_ROOT in app/settings.py). The postgres extra is small (~10 MB) and
# lets every target use PostgreSQL.
FROM base AS deps
WORKDIR /app
COPY pyproject.toml ./
RUN touch README.md \
    && python3 -m venv "$VIRTUAL_ENV" \
    && python -c 'import tomllib; p = tomllib.load(open("pyproject.toml", "rb"))["project"]; print("\n".join(p["dependencies"] + p["optional-dependencies"]["postgres"]))' \
        > /tmp/requirements.txt \
    && pip install --requirement /tmp/requirements.txt \
    && pip install --no-deps --editable . --config-settings editable_mode=compat \
    && rm -rf quizlab.egg-info README.md /tmp/requirements.txt


# The code, with its byte-code compiled now: the app user cannot write it later.
FROM base AS code
WORKDIR /app
COPY app ./app
COPY templates ./templates
COPY static ./static
COPY content ./content
RUN python3 -m compileall -q --invalidation-mode checked-hash app


# The web server's environment: no pip or setuptools (~25 MB) at run time.
FROM deps AS web-venv
RUN python -m pip uninstall --yes --quiet pip setuptools


# The worker's: the worker extra of pyproject.toml, with TORCH_SPEC as a
# constraint on it. The bind mount keeps local wheels out of the layers.
FROM deps AS worker-venv
ARG TORCH_VARIANT=cuda
ARG TORCH_SPEC=torch==2.13.0
ARG TORCH_CPU_INDEX=https://download.pytorch.org/whl/cpu
RUN --mount=type=bind,source=docker/wheels,target=/wheels \
    case "$TORCH_VARIANT" in \
        cuda) set -- ;; \
        cpu) set -- ${TORCH_CPU_INDEX:+--extra-index-url "$TORCH_CPU_INDEX"} ;; \
        *) echo "TORCH_VARIANT must be cuda or cpu, not '$TORCH_VARIANT'" >&2; exit 2 ;; \
    esac \
    && python -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["worker"]))' \
        > /tmp/worker.txt \
    && echo "$TORCH_SPEC" > /tmp/torch.txt \
    && pip install --find-links /wheels "$@" --requirement /tmp/worker.txt --constraint /tmp/torch.txt \
    && rm /tmp/worker.txt /tmp/torch.txt \
    && if [ "$TORCH_VARIANT" = cpu ]; then \
        python -c 'import sys, torch; sys.exit(0 if torch.version.cuda is None else f"TORCH_VARIANT=cpu installed a CUDA build of torch {torch.__version__}: check TORCH_CPU_INDEX and TORCH_SPEC")'; \
    fi


# What every target shares. The code and the virtualenv belong to root and
# are read-only to the app user; the one place it writes is /data.
FROM base AS runtime
WORKDIR /app
# No content reloading (so no live preview) in a container: a running site
# watches nothing; -e QUIZLAB_RELOAD_CONTENT=true turns it on for authoring.
ENV QUIZLAB_CONTENT_DIR=/app/content \
    QUIZLAB_DATA_DIR=/data \
    QUIZLAB_RELOAD_CONTENT=false \
    HEALTHCHECK_URL=http://127.0.0.1:8000/healthz
USER 10001:10001
# Python's urllib instead of curl, which slim images do not have. A target
# that listens elsewhere sets HEALTHCHECK_URL (so can `docker run -e`).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen(os.environ['HEALTHCHECK_URL'], timeout=4)"]


FROM runtime AS worker
COPY --from=worker-venv /opt/venv /opt/venv
COPY --from=code /app /app
ENV HEALTHCHECK_URL=http://127.0.0.1:8001/health
EXPOSE 8001
CMD ["quizlab", "worker", "--host", "0.0.0.0", "--port", "8001"]


FROM runtime AS web
COPY --from=web-venv /opt/venv /opt/venv
COPY --from=code /app /app
VOLUME ["/data"]
EXPOSE 8000
CMD ["quizlab", "serve", "--host", "0.0.0.0", "--port", "8000"]


# Last, so that a plain `docker build .` gives it: `quizlab serve` starts a
# local worker on 127.0.0.1 inside the container when QUIZLAB_WORKER_URL is unset.
FROM worker AS standalone
ENV HEALTHCHECK_URL=http://127.0.0.1:8000/healthz
VOLUME ["/data"]
EXPOSE 8000
CMD ["quizlab", "serve", "--host", "0.0.0.0", "--port", "8000"]
