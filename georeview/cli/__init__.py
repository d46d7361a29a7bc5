"""The ``georeview`` command line: one module per subcommand, shared options in one place.

:mod:`.main` builds the parser and turns errors into exit codes; :mod:`.options` holds
what every subcommand shares; ``review``, ``screen``, ``sitemap``, ``rules`` and
``inspections`` each add their arguments and run.
"""

from georeview.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
