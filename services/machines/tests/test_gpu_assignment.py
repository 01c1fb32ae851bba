"""Which GPUs an experiment gets (`gpu_assignment`): alone by default, the least-loaded when it
shares, never one held by an experiment that did not ask to share."""

from __future__ import annotations

from platform_machines.experiment_store import StoredExperiment
from platform_machines.gpu_assignment import Gpu, assign_gpus, holders_text, machine_gpus

FOUR = [Gpu(i, f"GPU-{i}") for i in range(4)]


def holder(id: str, indices: tuple[int, ...], share: bool = False) -> StoredExperiment:
    return StoredExperiment(id=id, team="t", machine_id="m", machine_name="box", repository="r", ref="",
                            command="c", gpus=len(indices), status="running", gpu_indices=indices, share_gpus=share)


def test_alone_takes_free_gpus_lowest_first_or_waits() -> None:
    held = [holder("x-a", (0,)), holder("x-b", (2,), share=True)]
    got = assign_gpus(FOUR, held, 2, share=False)
    assert got is not None and got.indices == (1, 3) and got.uuids == ("GPU-1", "GPU-3")
    assert assign_gpus(FOUR, held, 3, share=False) is None  # a GPU shared by others is not free either
    assert assign_gpus(FOUR, held, 0, share=False) is not None


def test_sharing_takes_the_least_loaded_and_never_an_exclusive_gpu() -> None:
    held = [holder("x-alone", (0,)), holder("x-s1", (1, 2), share=True), holder("x-s2", (1,), share=True)]
    one = assign_gpus(FOUR, held, 1, share=True)
    assert one is not None and one.indices == (3,)  # free: load 0
    two = assign_gpus(FOUR, held, 2, share=True)
    assert two is not None and two.indices == (2, 3)  # GPU 2 (one sharer) before GPU 1 (two)
    three = assign_gpus(FOUR, held, 3, share=True)
    assert three is not None and three.indices == (1, 2, 3)
    assert assign_gpus(FOUR, held, 4, share=True) is None  # GPU 0 is x-alone's alone


def test_the_machines_gpus_and_who_holds_them() -> None:
    facts = {"gpus": [{"index": 0, "uuid": "GPU-a"}, {"index": 1, "uuid": None}]}
    assert machine_gpus(facts) == [Gpu(0, "GPU-a"), Gpu(1, "1")]
    assert machine_gpus({}) == []
    text = holders_text([holder("x-b", (1,), share=True), holder("x-a", (0,))])
    assert text == "GPU 0 by x-a, GPU 1 by x-b (shared)"
