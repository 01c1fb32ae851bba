"""What a check reads on a machine, in one shell script over one SSH channel, and its parse.

The script prints sections (`@@name` then the output of one command); every command may be
missing (no `nvidia-smi`: a CPU machine, not an error; no git: an empty `git`; no docker, or a
docker the user may not use: an empty `docker`). It runs in `sh`
whatever the user's login shell is. The parse takes "N/A" and "[Not Supported]", which
nvidia-smi prints for what a GPU does not report, as unknown.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

GPU_QUERY = "nvidia-smi --query-gpu=index,name,memory.total,uuid,driver_version --format=csv,noheader,nounits"
GPU_PROCESS_QUERY = "nvidia-smi --query-compute-apps=gpu_uuid,pid,used_memory --format=csv,noheader,nounits"
_UNKNOWN = {"n/a", "[not supported]", "[n/a]", "[unknown error]", ""}
_NO_NVIDIA_SMI = "@@no-nvidia-smi"
_FAILED = "@@failed "

_SCRIPT = f"""
section() {{ echo "@@$1"; shift; "$@" 2>&1 || echo "{_FAILED}$?"; }}
if command -v nvidia-smi >/dev/null 2>&1; then
  section gpus {GPU_QUERY}
  section gpu_processes {GPU_PROCESS_QUERY}
else
  echo "@@gpus"; echo "{_NO_NVIDIA_SMI}"
fi
section cpus nproc
echo "@@meminfo"; grep -E '^(MemTotal|MemAvailable):' /proc/meminfo 2>/dev/null
section disk df -Pk "$HOME"
echo "@@python"; python3 --version 2>&1 || true
echo "@@git"; git --version 2>/dev/null || true
echo "@@os"; uname -srm 2>/dev/null || true
echo "@@docker"; docker info >/dev/null 2>&1 && docker --version 2>/dev/null || true
"""
CHECK_COMMAND = "exec sh -c " + shlex.quote(_SCRIPT)
"""The command a check runs (through the user's login shell, which `exec sh -c` leaves at once)."""


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    memory_total_mib: int | None
    uuid: str
    driver_version: str


@dataclass(frozen=True)
class GpuProcess:
    gpu_uuid: str
    pid: int
    used_memory_mib: int | None


@dataclass(frozen=True)
class MachineFacts:
    gpus: tuple[Gpu, ...] = ()
    gpu_processes: tuple[GpuProcess, ...] = ()
    gpu_error: str = ""
    cpus: int = 0
    memory_total_bytes: int = 0
    memory_available_bytes: int = 0
    disk_total_bytes: int = 0
    disk_free_bytes: int = 0
    python: str = ""
    git: str = ""
    os: str = ""
    docker: str = ""  # `docker --version` when the user may run docker (`docker info` answers)
    sections: dict[str, str] = field(default_factory=dict, compare=False, repr=False)


def _number(value: str) -> int | None:
    text = value.strip()
    if text.lower() in _UNKNOWN:
        return None
    try:
        return int(float(text))
    except ValueError:
        return None


def _csv_rows(text: str, columns: int) -> list[list[str]]:
    rows = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("@@"):
            continue
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) > columns:  # a name with a comma in it: the extra cells are the name's
            extra = len(cells) - columns
            cells = [cells[0], ", ".join(cells[1:2 + extra]), *cells[2 + extra:]]
        if len(cells) == columns:
            rows.append(cells)
    return rows


def parse_gpus(text: str) -> tuple[Gpu, ...]:
    """The rows of GPU_QUERY's output."""
    gpus: list[Gpu] = []
    for index, name, memory, uuid, driver in _csv_rows(text, 5):
        number = _number(index)
        gpus.append(Gpu(number if number is not None else len(gpus), name, _number(memory), uuid,
                        "" if driver.lower() in _UNKNOWN else driver))
    return tuple(gpus)


def parse_gpu_processes(text: str) -> tuple[GpuProcess, ...]:
    """The rows of GPU_PROCESS_QUERY's output (none when no process runs on a GPU)."""
    found: list[GpuProcess] = []
    for uuid, pid, memory in _csv_rows(text, 3):
        number = _number(pid)
        if number is not None:
            found.append(GpuProcess(uuid, number, _number(memory)))
    return tuple(found)


def _sections(output: str) -> dict[str, str]:
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in output.splitlines():
        if line.startswith("@@") and not line.startswith((_FAILED, _NO_NVIDIA_SMI)):
            current = sections.setdefault(line[2:].strip(), [])
        elif current is not None:
            current.append(line)
    return {name: "\n".join(lines).strip() for name, lines in sections.items()}


def _failure(text: str) -> str:
    """The message of a section whose command failed, else ""."""
    if _FAILED not in text:
        return ""
    message = "\n".join(line for line in text.splitlines() if not line.startswith(_FAILED)).strip()
    return message or "failed with exit status " + text.split(_FAILED, 1)[1].split()[0]


def parse_check_output(output: str) -> MachineFacts:
    """The facts in CHECK_COMMAND's output."""
    sections = _sections(output)
    gpus_text = sections.get("gpus", "")
    gpu_error = _failure(gpus_text)
    no_nvidia = _NO_NVIDIA_SMI in output
    meminfo = {line.split(":")[0]: _number(line.split(":")[1].replace("kB", "")) or 0
               for line in sections.get("meminfo", "").splitlines() if ":" in line}
    disk_total = disk_free = 0
    disk_lines = [line.split() for line in sections.get("disk", "").splitlines()[1:]]
    if disk_lines and len(disk_lines[-1]) >= 4:
        disk_total = (_number(disk_lines[-1][1]) or 0) * 1024
        disk_free = (_number(disk_lines[-1][3]) or 0) * 1024
    python = sections.get("python", "")
    return MachineFacts(
        gpus=() if gpu_error or no_nvidia else parse_gpus(gpus_text),
        gpu_processes=() if gpu_error or no_nvidia else parse_gpu_processes(sections.get("gpu_processes", "")),
        gpu_error=gpu_error[:500],
        cpus=_number(sections.get("cpus", "")) or 0,
        memory_total_bytes=meminfo.get("MemTotal", 0) * 1024,
        memory_available_bytes=meminfo.get("MemAvailable", 0) * 1024,
        disk_total_bytes=disk_total,
        disk_free_bytes=disk_free,
        python=python if python.startswith("Python") else "",
        git=sections.get("git", "")[:200],
        os=sections.get("os", "")[:200],
        docker=sections.get("docker", "")[:200],
        sections=sections,
    )
