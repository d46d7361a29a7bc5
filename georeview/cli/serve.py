"""``georeview serve``: the review workspace in a browser (issue 26)."""

from __future__ import annotations

import argparse
from pathlib import Path

from georeview.cli.options import need_web, need_workspace, workspace_arguments

__all__ = ["add_arguments", "main"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``georeview serve`` options."""
    workspace_arguments(parser)
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default loopback)"
    )
    parser.add_argument(
        "--port", type=int, default=8000, help="port (default 8000; 0: any free one)"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=2,
        help="worker processes for reviews and screenings (default 2; 0: this server runs none)",
    )
    parser.add_argument("--threads", type=int, default=8, help="request threads (default 8)")
    parser.add_argument(
        "--layers",
        type=Path,
        metavar="DIR",
        help="a folder of <municipality>/layers.toml folders (default: as `review` finds them)",
    )
    parser.add_argument("--scheduler", help="a Dask scheduler's address: screenings run there")
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name the server answers to behind a proxy (repeatable)",
    )
    parser.add_argument(
        "--https",
        action="store_true",
        help="behind a TLS proxy: secure cookies, trust X-Forwarded-Proto",
    )
    parser.add_argument(
        "--trusted-origin",
        action="append",
        default=[],
        metavar="URL",
        help="an origin forms are posted from behind a proxy, e.g. https://permits.example.gov",
    )


def main(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    need_web("serve")
    from georeview.web.server import serve

    serve(
        need_workspace(args),
        args.database,
        host=args.host,
        port=args.port,
        workers=args.workers,
        threads=args.threads,
        layers_root=args.layers,
        scheduler=args.scheduler,
        hosts=args.allowed_host,
        https=args.https,
        trusted_origins=args.trusted_origin,
    )
    return 0
