"""Shared fixtures: paths to the real sample data and small submission builders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def shared_data() -> Path:
    """The folder of real sample data (../shared/data, or $GEOREVIEW_SHARED_DATA)."""
    env = os.environ.get("GEOREVIEW_SHARED_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared() -> Path:
    path = shared_data()
    if not path.is_dir():
        pytest.skip(f"shared sample data not found at {path}")
    return path


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO
