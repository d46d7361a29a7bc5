"""Shared fixtures: paths to the real sample data and small submission builders."""

from __future__ import annotations

from pathlib import Path

import pytest
from _build import shared_data

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def shared() -> Path:
    path = shared_data()
    if not path.is_dir():
        pytest.skip(f"shared sample data not found at {path}")
    return path


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO
