"""Stored evals and their samples as messages of simulusion.evals.v1."""

from __future__ import annotations

import json
from typing import Any

from simulusion.evals.v1 import evals_pb2 as pb

from platform_evals.eval_store import StoredEval

PHASES = {"queued": "waiting", "importing": "importing"}


def eval_message(stored: StoredEval, samples_total: int = 0) -> pb.Eval:
    runner = stored.runner
    phase = "done" if stored.ended_at else PHASES.get(stored.status, runner.phase)
    message = pb.Eval(
        id=stored.id, team=stored.team, task=stored.task, task_args_json=json.dumps(stored.task_args),
        model=stored.model, model_args_json=json.dumps(stored.model_args), machine_id=stored.machine_id,
        machine_name=stored.machine_name, limit=stored.limit, epochs=stored.epochs,
        secret_names=stored.secret_names, packages=stored.packages, gpus=stored.gpus,
        experiment_id=stored.experiment_id, status=stored.status, status_reason=stored.status_reason,
        progress=pb.EvalProgress(phase=phase, total=runner.total, done=runner.done, errors=runner.errors,
                                 tokens=runner.tokens),
        created_at=stored.created_at, started_at=stored.started_at, ended_at=stored.ended_at,
        logs=[pb.EvalLogFile(name=entry["name"], size=entry["size"], status=entry["status"]) for entry in stored.logs],
        samples_total=samples_total, requirements="\n".join(stored.requirements), notes=stored.notes)
    for score in stored.scores:
        added = message.scores.add(name=score["name"], scorer=score["scorer"], reducer=score["reducer"],
                                   scored_samples=score["scored_samples"],
                                   unscored_samples=score["unscored_samples"])
        for metric in score["metrics"]:
            entry = added.metrics.add(name=metric["name"], value=metric["value"])
            if "stderr" in metric:
                entry.stderr = metric["stderr"]
    return message


def sample_message(row: dict[str, Any]) -> pb.EvalSample:
    return pb.EvalSample(**row)
