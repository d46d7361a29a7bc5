"""Run the command line with ``python -m georeview``."""

from georeview.cli import main

raise SystemExit(main())
