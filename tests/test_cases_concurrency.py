"""Two reviewers changing one case at once, from two processes: nothing is lost.

Each worker (tests/_case_worker.py) records 40 changes on the same case as fast as it
can, both started together. Every change must be there afterwards: 64 comments numbered
1..64 without a gap or a repeat, 16 determinations each superseding the one before it
(one in force), an audit trail of one event per change whose hash chain is intact, and a
revision that counts them. Then a change made from a stale view is refused, naming who
changed the case since.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _cases import BACKENDS, REPO, SAMPLES, run_case

pytest.importorskip("django")

CASE = "DEE-2026-0001"
PER_WORKER = 40


@pytest.mark.slow
@pytest.mark.parametrize("database", BACKENDS, indirect=True)
def test_two_processes_one_case(tmp_path: Path, database: str | None) -> None:
    ws = tmp_path / "ws"
    run_case(
        ws,
        database,
        "open",
        str(SAMPLES / "deerfield_minor_home"),
        "--no-review",
        "--received",
        "2026-12-01",
    )
    go = tmp_path / "go"
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                str(REPO / "tests" / "_case_worker.py"),
                str(ws),
                database or "-",
                CASE,
                name,
                str(PER_WORKER),
                str(go),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        for name in ("Reviewer A", "Reviewer B")
    ]
    go.touch()
    revisions = []
    for w in workers:
        out, err = w.communicate(timeout=300)
        assert w.returncode == 0, err
        revisions += [int(x) for x in out.split()]
    # each change got a revision of its own: none was lost or applied twice
    assert len(revisions) == len(set(revisions)) == 2 * PER_WORKER

    view = json.loads(run_case(ws, database, "show", CASE, "--json").stdout)
    comments = [a for a in view["actions"] if a["kind"] == "comment"]
    assert sorted(a["number"] for a in comments) == list(range(1, len(comments) + 1))
    assert len(comments) == 2 * PER_WORKER * 4 // 5
    by = {a["by"] for a in comments}
    assert by == {"Reviewer A", "Reviewer B"}
    costs = [d for d in view["determinations"] if d["fact"] == "village.control_cost_usd"]
    assert len(costs) == 2 * PER_WORKER // 5
    assert sum(d["in_force"] for d in costs) == 1
    # each supersedes exactly one other: a chain, no fork
    superseded = [d["supersedes"] for d in costs if d["supersedes"] is not None]
    assert len(superseded) == len(set(superseded)) == len(costs) - 1
    events = view["audit"]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert len(events) == 1 + 2 * PER_WORKER  # opened, then every change
    assert view["revision"] == events[-1]["revision"] == 1 + 2 * PER_WORKER
    assert "audit trail intact" in run_case(ws, database, "audit", CASE).stdout

    stale = run_case(
        ws, database, "comment", CASE, "From a stale page.", "--revision", "5", ok=False
    )
    assert stale.returncode == 2
    assert "changed since you opened it" in stale.stderr
    assert "Reviewer" in stale.stderr
