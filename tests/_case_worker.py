"""A reviewer in a process of its own, for the concurrency test (tests/test_cases_concurrency.py).

    python tests/_case_worker.py WORKSPACE DATABASE|- CASE NAME N GO_FILE

Opens the workspace, waits for GO_FILE (so both workers start together), then records N
changes on the case as fast as it can: comments, and every fifth a determination of
village.control_cost_usd. Prints the revision each of its changes made, one per line.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    ws_dir, database, case, name, n, go = argv
    from georeview.cases import service
    from georeview.cases.store import open_workspace

    ws = open_workspace(Path(ws_dir), None if database == "-" else database)
    from georeview.cases.models import AuditEvent

    while not Path(go).exists():
        time.sleep(0.01)
    for i in range(int(n)):
        if i % 5 == 4:
            service.determine(
                case, "control_cost_usd", 1000.0 + i, by=name, reason=f"{name} estimate {i}"
            )
        else:
            service.add_action(ws, case, "comment", f"{name} comment {i}", by=name)
        # the revision this change made: its own audit event (read after it, the case's
        # revision may already be the other worker's next change)
        mine = AuditEvent.objects.filter(case__number=case, actor=name).order_by("-seq").first()
        print(mine.revision, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
