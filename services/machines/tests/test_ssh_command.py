"""The pasted SSH command parser, checked against OpenSSH's own reading (`ssh -G -F /dev/null`)."""

from __future__ import annotations

import getpass
import shlex
import shutil
import subprocess

import pytest
from platform_machines.ssh_command import SshHop, UnusableSshCommandError, parse_ssh_command

# What providers show, and the ways of writing the same thing ssh accepts.
PROVIDER_COMMANDS = [
    "ssh root@203.0.113.7 -p 22045 -i ~/.ssh/id_ed25519",  # RunPod's "SSH over exposed TCP", Vast.ai
    "ssh -p 41234 root@ssh4.vast.ai -L 8080:localhost:8080",  # Vast.ai with its forwarding
    'ssh -i "my key.pem" ubuntu@ec2-203-0-113-7.compute-1.amazonaws.com',  # AWS
    "ssh ubuntu@203.0.113.9",  # Lambda
    "ssh -l azureuser 203.0.113.10",
    "ssh -l bob alice@host.example",  # -l first: ssh takes bob
    "ssh alice@host.example -l bob",  # user@ first: ssh takes alice
    "ssh -o Port=2222 -o User=ops host.example",
    "ssh -oPort=2201 -oUser=ops host.example",
    'ssh -o "Port 2202" host.example',
    "ssh -p 1 -o Port=2 host.example",  # the first port wins
    "ssh -o Port=2 -p 1 host.example",
    "ssh -o Hostname=203.0.113.11 -o User=z u@alias",
    "ssh -NT -C -A -vvv -q -X -Y -t -D 1080 -R 9000:localhost:9000 root@203.0.113.12 -p 2022",
    "ssh -p2023 -iKEY root@203.0.113.13",
    "ssh root@203.0.113.14 nvidia-smi -L",  # a remote command after the destination
    "ssh root@[2001:db8::1]",
    "ssh root@2001:db8::1",
    "ssh -p 2200 -l root 2001:db8::2",
    "ssh -- root@host.example",
]
URLS = ["ssh://user@host.example:2200", "ssh://host.example",
        "ssh -p 5 ssh://u@host.example:33", "ssh ssh://u@host.example:33 -p 5"]


def openssh_reading(args: list[str]) -> dict[str, str]:
    """user, hostname, port as `ssh -G` resolves them with no config file."""
    if shutil.which("ssh") is None:
        pytest.fail("ssh (Debian's openssh-client) is missing: run scripts/install_system_deps.sh as root")
    out = subprocess.run(["ssh", "-G", "-F", "/dev/null", *args], capture_output=True, text=True, check=True,
                         timeout=10).stdout
    found = dict(line.split(" ", 1) for line in out.splitlines() if " " in line)
    return {"user": found["user"], "hostname": found["hostname"].strip("[]"), "port": found["port"]}


@pytest.mark.parametrize("command", PROVIDER_COMMANDS + URLS)
def test_reads_what_openssh_reads(command: str) -> None:
    words = shlex.split(command)
    if words[0] != "ssh":
        words = ["ssh", *words]
    expected = openssh_reading(words[1:])
    machine = parse_ssh_command(command, default_user=getpass.getuser()).machine
    assert {"user": machine.user, "hostname": machine.host, "port": str(machine.port)} == expected


@pytest.mark.parametrize("command", ["$ ssh root@203.0.113.7 -p 22045", "  $ ssh root@203.0.113.7 -p 22045\n",
                                     "ssh root@203.0.113.7 \\\n  -p 22045", "ssh://root@203.0.113.7:22045"])
def test_a_prompt_a_continued_line_and_a_url_read_alike(command: str) -> None:
    assert parse_ssh_command(command).machine == SshHop("root", "203.0.113.7", 22045)


def test_an_ssh_url_with_an_ipv6_address() -> None:
    # OpenSSH 9.2 refuses a bracketed address in an ssh:// URL; RFC 3986 writes it so.
    assert parse_ssh_command("ssh://root@[2001:db8::3]:2201").machine == SshHop("root", "2001:db8::3", 2201)


def test_a_command_without_a_user_uses_root() -> None:
    assert parse_ssh_command("ssh 203.0.113.7").machine == SshHop("root", "203.0.113.7", 22)


@pytest.mark.parametrize(("command", "jumps"), [
    ("ssh -J ops@bastion.example:2200 root@10.0.0.5",
     (SshHop("ops", "bastion.example", 2200),)),
    ("ssh -J ops@b1.example,b2.example:2201 root@10.0.0.5",
     (SshHop("ops", "b1.example", 22), SshHop("root", "b2.example", 2201))),
    ("ssh -o ProxyJump=ops@[2001:db8::9]:2202 root@10.0.0.5", (SshHop("ops", "2001:db8::9", 2202),)),
    ("ssh -J ssh://ops@bastion.example:2203 root@10.0.0.5", (SshHop("ops", "bastion.example", 2203),)),
    ("ssh -o ProxyJump=none root@10.0.0.5", ()),
])
def test_bastions(command: str, jumps: tuple[SshHop, ...]) -> None:
    target = parse_ssh_command(command)
    assert target.machine == SshHop("root", "10.0.0.5", 22)
    assert target.jumps == jumps
    # ssh reads the same option: bastions exactly when the parser found some
    assert (openssh_proxyjump(shlex.split(command)[1:]).lower() != "none") == bool(jumps)


def openssh_proxyjump(args: list[str]) -> str:
    out = subprocess.run(["ssh", "-G", "-F", "/dev/null", *args], capture_output=True, text=True, check=True,
                         timeout=10).stdout
    return next((line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("proxyjump ")), "none")


@pytest.mark.parametrize(("command", "says"), [
    ("gcloud compute ssh my-vm --zone us-central1-a", "--dry-run"),
    ("ssh root@ssh.runpod.io -i ~/.ssh/id_ed25519", "SSH over exposed TCP"),
    ("ssh abcdef-64410ab1@ssh.runpod.io -i ~/.ssh/id_ed25519", "SSH over exposed TCP"),
    ("scp file root@host.example:", "not an SSH command"),
    ("ssh -p 22", "names no machine"),
    ("ssh -p 70000 root@host.example", "bad port '70000'"),
    ("ssh -p twenty root@host.example", "bad port 'twenty'"),
    ("ssh 'root@host name'", "is not a host name"),
    ("ssh root@host.example -o ProxyCommand='nc %h %p'", "ProxyCommand"),
    ("ssh -Z root@host.example", "no option -Z"),
    ("ssh root@host.example -p", "needs a value"),
    ('ssh "root@host.example', "cannot read the SSH command"),
    ("", "not an SSH command"),
])
def test_what_the_platform_cannot_use_says_what_to_paste(command: str, says: str) -> None:
    with pytest.raises(UnusableSshCommandError) as caught:
        parse_ssh_command(command)
    assert says in str(caught.value)
