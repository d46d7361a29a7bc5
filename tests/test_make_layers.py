"""layers/make_layers.py without its shared data: one line naming the file, exit 2.

The generator reads ``../shared/data``, which a fresh clone does not have; it must say
which file is missing and write nothing (no traceback, no half-built folder). The
outputs themselves are checked against the shipped files by re-running the script
by hand (``layers/README.md``): the tests do not read ``../shared``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "layers" / "make_layers.py"


def test_missing_shared_data_is_one_line(tmp_path: Path) -> None:
    data, out = tmp_path / "no_shared_data", tmp_path / "out"
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--data", str(data), "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1
    assert run.stderr.startswith(f"make_layers: {data}/")
    assert "no such file" in run.stderr
    assert not out.exists()  # checked before anything is written
