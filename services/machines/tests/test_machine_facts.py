"""The check's output read into facts: GPUs with "N/A" and "[Not Supported]", processes, a CPU
machine, a failing nvidia-smi."""

from __future__ import annotations

from platform_machines.machine_facts import Gpu, GpuProcess, parse_check_output, parse_gpus

CPU_MACHINE = """@@gpus
@@no-nvidia-smi
@@cpus
8
@@meminfo
MemTotal:       16303412 kB
MemAvailable:   12000000 kB
@@disk
Filesystem     1024-blocks     Used Available Capacity Mounted on
/dev/sda1        102400000 51200000  51200000      50% /
@@python
Python 3.11.2
@@git
git version 2.39.5
@@os
Linux 6.1.0 x86_64
"""


def test_gpus_with_unknown_values() -> None:
    text = ("0, NVIDIA A100-SXM4-40GB, 40960, GPU-aaaa, 535.104.05\n"
            "1, Tesla T4, [Not Supported], GPU-bbbb, [N/A]\n"
            "2, NVIDIA GeForce RTX 4090, N/A, GPU-cccc, 550.54.15\n")
    assert parse_gpus(text) == (
        Gpu(0, "NVIDIA A100-SXM4-40GB", 40960, "GPU-aaaa", "535.104.05"),
        Gpu(1, "Tesla T4", None, "GPU-bbbb", ""),
        Gpu(2, "NVIDIA GeForce RTX 4090", None, "GPU-cccc", "550.54.15"),
    )


def test_a_gpu_name_with_a_comma_keeps_it() -> None:
    assert parse_gpus("0, Odd, GPU Name, 1024, GPU-x, 1.0\n")[0].name == "Odd, GPU Name"


def test_a_machine_without_nvidia_smi_is_a_cpu_machine() -> None:
    facts = parse_check_output(CPU_MACHINE)
    assert facts.gpus == () and facts.gpu_error == ""
    assert facts.cpus == 8
    assert facts.memory_total_bytes == 16303412 * 1024
    assert facts.memory_available_bytes == 12000000 * 1024
    assert facts.disk_total_bytes == 102400000 * 1024 and facts.disk_free_bytes == 51200000 * 1024
    assert (facts.python, facts.git, facts.os) == ("Python 3.11.2", "git version 2.39.5", "Linux 6.1.0 x86_64")


def test_gpus_and_their_processes() -> None:
    output = CPU_MACHINE.replace("@@gpus\n@@no-nvidia-smi\n", "@@gpus\n0, NVIDIA H100, 81559, GPU-a, 550\n"
                                 "@@gpu_processes\nGPU-a, 4242, 1024\nGPU-a, 4243, [N/A]\n")
    facts = parse_check_output(output)
    assert [g.name for g in facts.gpus] == ["NVIDIA H100"]
    assert facts.gpu_processes == (GpuProcess("GPU-a", 4242, 1024), GpuProcess("GPU-a", 4243, None))


def test_a_failing_nvidia_smi_is_said_not_hidden() -> None:
    output = CPU_MACHINE.replace(
        "@@gpus\n@@no-nvidia-smi\n",
        "@@gpus\nNVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n@@failed 9\n")
    facts = parse_check_output(output)
    assert facts.gpus == ()
    assert "couldn't communicate with the NVIDIA driver" in facts.gpu_error


def test_missing_python_and_git_are_empty() -> None:
    output = CPU_MACHINE.replace("Python 3.11.2", "sh: 1: python3: not found").replace("git version 2.39.5", "")
    facts = parse_check_output(output)
    assert facts.python == "" and facts.git == ""
