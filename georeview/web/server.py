"""``georeview serve``: the workspace under waitress, with warm worker processes for the jobs.

One server process answers requests on waitress's threads (a production WSGI server,
pure Python, no build step); ``workers`` processes run the reviews and screenings
(:func:`georeview.web.jobs.work`). Static files (georeview's own scripts, styles and the
Leaflet it ships) are served by WhiteNoise from the installed package, with far-future
caching: nothing is fetched from anywhere else.

Several servers may share one PostgreSQL database and one workspace folder (on a shared
disk): each claims jobs with a conditional update, so a job runs once. DESIGN §2.7 shows
how to run them behind a reverse proxy.
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["application", "configure", "serve"]


def configure(folder: Path | str, database: str | None = None, **options: Any) -> Any:
    """Open the workspace for serving (Django configured, migrations applied); return it."""
    from georeview.cases.store import open_workspace
    from georeview.web.settings import web_settings

    return open_workspace(folder, database, extra_settings=lambda f: web_settings(f, **options))


def application() -> Any:
    """The WSGI application: Django's, with the package's static files in front of it."""
    from django.core.wsgi import get_wsgi_application
    from whitenoise import WhiteNoise

    import georeview

    root = Path(georeview.__file__).parent
    app = WhiteNoise(get_wsgi_application(), max_age=24 * 3600)
    app.add_files(str(root / "web" / "static" / "web"), prefix="static/web/")
    app.add_files(str(root / "static"), prefix="static/lib/")
    return app


def _stop_on_term(*_: Any) -> None:
    raise KeyboardInterrupt


def serve(
    folder: Path | str,
    database: str | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    workers: int = 2,
    threads: int = 8,
    layers_root: Path | None = None,
    scheduler: str | None = None,
    hosts: Sequence[str] = (),
    https: bool = False,
    trusted_origins: Sequence[str] = (),
    ready: Any = None,
) -> None:
    """Serve the workspace until interrupted (Ctrl-C or SIGTERM), then stop the workers.

    Parameters
    ----------
    folder, database
        The workspace (:func:`georeview.cases.store.open_workspace`).
    host, port
        Where to listen (loopback by default: put a reverse proxy in front for others).
    workers
        Worker processes for reviews and screenings (0: run none here; another server's
        workers take the jobs).
    threads
        Request threads of the server.
    layers_root
        A folder of ``<municipality>/layers.toml`` folders (default: as ``georeview review``
        finds them).
    scheduler
        A Dask scheduler's address: screenings run on that cluster.
    hosts, https, trusted_origins
        The names the server answers to, and whether it is behind a TLS proxy
        (:func:`georeview.web.settings.web_settings`).
    ready : callable, optional
        Called with the listening URL once the server is up (tests, the benchmark).
    """
    import waitress

    allowed = list(dict.fromkeys([*hosts, host, "localhost", "127.0.0.1", "[::1]"]))
    options = {"hosts": allowed, "https": https, "trusted_origins": list(trusted_origins)}
    ws = configure(folder, database, **options)
    from georeview.web import jobs

    lost = jobs.sweep()
    if lost:
        print(
            f"georeview: {lost} job(s) were running when the server stopped: marked failed",
            file=sys.stderr,
        )
    ctx = multiprocessing.get_context("spawn")
    stop = ctx.Event()
    procs = [
        ctx.Process(
            target=jobs.work,
            args=(str(ws.folder), database, options, stop),
            kwargs={
                "layers_root": None if layers_root is None else str(layers_root),
                "scheduler": scheduler,
            },
            name=f"georeview-worker-{i + 1}",
            daemon=True,
        )
        for i in range(workers)
    ]
    for p in procs:
        p.start()
    signal.signal(signal.SIGTERM, _stop_on_term)
    server = waitress.create_server(
        application(),
        host=host,
        port=port,
        threads=threads,
        ident="georeview",
        max_request_body_size=options_limit(),
    )
    url = f"http://{host}:{server.effective_port}/"
    print(
        f"georeview: serving {ws.folder} at {url} ({workers} workers; Ctrl-C stops)",
        file=sys.stderr,
        flush=True,
    )
    if ready is not None:
        ready(url)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.terminate()
        server.close()


def options_limit() -> int:
    """The largest request body waitress reads (Django checks the upload's own limit)."""
    from georeview.web.settings import UPLOAD_LIMIT_BYTES

    return UPLOAD_LIMIT_BYTES + 1024 * 1024
