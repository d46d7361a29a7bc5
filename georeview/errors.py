"""The one error tree of georeview.

Every error that bad input can cause derives from :class:`GeoReviewError`; each
subclass also inherits the built-in exception it resembles (as rasterio does), so
callers may catch either. The command line turns these into one line and exit
code 2; the batch screens turn them into error rows. Anything else is a bug.
"""

from __future__ import annotations

#: C0 controls, DEL and C1 controls written as ``\xNN``: a file or folder name, a field or
#: a value from a submission reaches the terminal and the batch tables through
#: :meth:`GeoReviewError.one_line`, and a raw ESC, BEL or CR there would drive the terminal
#: (recolour, beep, overwrite the line) or break the one line in two.
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))}


class GeoReviewError(Exception):
    """Root of every error that georeview raises on purpose.

    Parameters
    ----------
    message : str
        What is wrong, in words a planner can act on.
    path : str, optional
        The file the problem was found in.
    field : str, optional
        The field, key or layer inside that file.
    """

    def __init__(self, message: str, *, path: object = None, field: str | None = None):
        self.message = message
        self.path = None if path is None else str(path)
        self.field = field
        super().__init__(self.one_line())

    def one_line(self) -> str:
        """Return the error as one line: ``file: field: message``, control characters escaped."""
        parts = [p for p in (self.path, self.field) if p]
        text = " ".join(str(self.message).split())
        return (": ".join([*parts, text]) if parts else text).translate(_CONTROLS)


class InputError(GeoReviewError, ValueError):
    """A submission or layer that cannot be used as given."""


class ConfigError(InputError):
    """A TOML file (submission.toml, layers.toml, ordinance file) with wrong keys or types."""


class CRSError(InputError):
    """A missing, geographic-where-projected-is-needed, or unusable coordinate reference system."""


class GeometryError(InputError):
    """Empty geometry, or the wrong kind of geometry (a point where a polygon belongs)."""


class DataSourceError(GeoReviewError, OSError):
    """A file that is missing, unreadable, truncated or not the format it claims."""


class CoverageError(InputError):
    """A raster that does not cover the area the computation needs."""


class UnitsError(InputError):
    """Units that are unknown, or values implausible for the declared units."""


class LimitError(InputError):
    """An input larger than the configured limits (cells, features, bytes)."""


class OutputError(GeoReviewError, OSError):
    """An output that cannot be written (exists without --overwrite, disk full, ...)."""


class ComputeError(GeoReviewError, RuntimeError):
    """A computation that could not finish for a reason outside the input.

    A Dask worker process that died (out of memory, killed) more often than the
    scheduler retries. Finished work is kept, so running the command again resumes.
    """


class DependencyError(GeoReviewError, ImportError):
    """An optional dependency a command needs is not installed (the extra is named)."""


class ConflictError(GeoReviewError):
    """A change to a case made from a view the case has moved on from, or not allowed now.

    Two reviewers acting on one case at once both apply, in turn; a change that names
    the revision it was made from (``expected_revision``) is refused when another came
    first, and says who made that one and when. A step the case's status does not allow
    (approving a withdrawn case) is refused the same way.
    """
