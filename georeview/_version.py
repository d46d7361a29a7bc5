"""The package's version, in a module of its own.

Modules that stamp their outputs with the version (report.json, the layers build,
the screening's partition manifest, the PDF sheet, ``--version``) import it from here
rather than from :mod:`georeview`, whose ``__init__`` imports the public functions
and, through them, those very modules: the version must not sit at the top of an
import cycle. ``pyproject.toml`` reads it from here too (setuptools' ``attr:``), so
this line is the one place the version is written.
"""

__version__ = "0.1.0"
