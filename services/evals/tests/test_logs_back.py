"""An eval's logs brought back: Inspect's reader is imported off the event loop, so the service
keeps answering while a log comes back (on the loop, that import kept it silent for over 10 s
on a busy machine)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

BRING_BACK_IN_A_FRESH_INTERPRETER = textwrap.dedent('''
    import asyncio, json, sys, threading
    from pathlib import Path
    from types import SimpleNamespace

    imported_on = []

    class WatchImports:
        def find_spec(self, name, path=None, target=None):
            if name == "platform_evals.results_import":
                imported_on.append(threading.current_thread().name)
            return None

    sys.meta_path.insert(0, WatchImports())

    from platform_evals.eval_store import StoredEval
    from platform_evals.log_storage import FolderLogs
    from platform_evals.logs_back import bring_back
    from platform_evals.progress import RunnerState

    assert "inspect_ai" not in sys.modules, "Inspect is not imported before a log comes back"
    LOG = b"not an Inspect log: cut before its header"

    class OneLogMachine:
        async def fetch(self, experiment_id, path, offset):
            return SimpleNamespace(data=LOG[offset:], size=len(LOG))

    async def main():
        stored = StoredEval(id="e-1", team="t", task="x", model="m", machine_id="m-1", machine_name="box",
                            status="running", experiment_id="x-1", runner=RunnerState(logs=("logs/a.eval",)))
        found = await bring_back(stored, OneLogMachine(), FolderLogs(Path(sys.argv[1])))
        return {"loop_thread": threading.current_thread().name, "imported_on": imported_on,
                "logs": found.logs, "notes": found.notes}

    print(json.dumps(asyncio.run(main())))
''')


def test_inspects_reader_is_imported_off_the_event_loop(tmp_path: Path) -> None:
    ran = subprocess.run([sys.executable, "-c", BRING_BACK_IN_A_FRESH_INTERPRETER, str(tmp_path)],
                         capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr[-3000:]
    seen = json.loads(ran.stdout.strip().splitlines()[-1])
    assert seen["imported_on"] and seen["loop_thread"] not in seen["imported_on"], seen
    assert seen["logs"] == [{"name": "a.eval", "size": 41, "status": "unreadable"}]
    assert seen["notes"][0].startswith("a.eval: kept, but unreadable:"), seen["notes"]
    assert [p.read_bytes() for p in tmp_path.rglob("a.eval")] == [b"not an Inspect log: cut before its header"]
