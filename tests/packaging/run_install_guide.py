#!/usr/bin/env python3
"""Runs docs/install.md as written: its `install-test: run` blocks in order, as root,
in a clean environment, with the values of its `install-test: values` block replaced by
the ones given here; its `install-test: systemd` blocks are checked with
`systemd-analyze verify` on the units they enable.

    run_install_guide.py GUIDE WORKDIR NAME=VALUE...

Every value of the guide's values block must be given (a value the guide does not have
is an error too), so that no command meets a host or role of the guide's example.
WORKDIR is the current directory of every block (it holds the .deb) and the home of
the root shell the blocks run in (HOME=WORKDIR/root: its .pgpass and .ceph/ceph.conf
stand in for the admin's own). The password every prompt asks for is made here and
typed at each prompt on the block's own terminal (a pty), never given in an argument. Prints each block's time, and the time from the
package's installation to the end of the first sync.
"""
import fcntl
import os
import pty
import re
import secrets
import signal
import subprocess
import sys
import termios
import threading
import time

MARK = re.compile(r"<!-- install-test: (values|run|systemd) -->\n```sh\n(.*?)```", re.S)
ENABLED_UNIT = re.compile(r"systemctl enable (?:--now )?(\S+)")
UNIT_DIR = "/lib/systemd/system"


def blocks(guide):
    with open(guide, encoding="utf-8") as f:
        return [(kind, body) for kind, body in MARK.findall(f.read())]


def substituted(values_block, given):
    """The values block with each NAME=... line's value replaced by the given one."""
    names = re.findall(r"^([A-Z_]+)=", values_block, re.M)
    missing = sorted(set(names) - set(given))
    unknown = sorted(set(given) - set(names))
    if missing or unknown:
        sys.exit(f"install guide: values missing {missing}, not in the guide {unknown}")
    return "".join(f"{name}={given[name]}\n" for name in names)


def verify_units(body):
    for unit in ENABLED_UNIT.findall(body):
        units = [f"{UNIT_DIR}/{unit}"]
        if unit.endswith(".timer"):
            units.append(f"{UNIT_DIR}/{unit[:-len('.timer')]}.service")
        subprocess.run(["systemd-analyze", "verify", "--man=no", *units], check=True)
        print(f"install guide: verified {' '.join(units)}")


BLOCK_SECONDS = 600
# What psql's \\password and the guide's `read -p` ask: answered with the password.
PROMPT = re.compile(r"(password[^\n]*|enter it again): $", re.I)


def run_at_a_terminal(script, workdir, env, password):
    """Runs `script` with a terminal of its own (a pty) as its stdin, stderr and
    controlling terminal, and types the password at each prompt for one, as an admin
    would: psql's \\password reads /dev/tty and flushes what was typed ahead, and a pipe
    would be swallowed whole by the first reader. stdout is a pipe. The terminal's text
    is returned as stderr, the password blotted out."""
    master, slave = pty.openpty()

    def take_terminal():
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    try:
        process = subprocess.Popen(["bash", "-c", script], cwd=workdir, env=env, stdin=slave,
                                   stdout=subprocess.PIPE, stderr=slave, text=True,
                                   start_new_session=True, preexec_fn=take_terminal)
    finally:
        os.close(slave)
    shown = []
    conversation = threading.Thread(target=converse, args=(master, password, shown))
    conversation.start()
    # A question nobody answers (a prompt PROMPT does not know) must fail, not hang.
    deadline = threading.Timer(BLOCK_SECONDS, os.killpg, args=(process.pid, signal.SIGKILL))
    deadline.start()
    try:
        stdout = process.stdout.read()
        process.wait()
    finally:
        deadline.cancel()
    conversation.join()
    os.close(master)
    terminal = "".join(shown).replace(password, "***")
    if process.returncode == -signal.SIGKILL:
        terminal += f"\n[killed after {BLOCK_SECONDS} s: waiting for an answer?]"
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, terminal)


def converse(master, password, shown):
    """Reads the terminal until its last user is gone, answering each prompt."""
    recent = ""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: every process that had the terminal open has ended
            return
        if not chunk:
            return
        text = chunk.decode(errors="replace")
        shown.append(text)
        recent = (recent + text)[-300:]
        if PROMPT.search(recent):
            os.write(master, (password + "\n").encode())
            recent = ""


def main():
    guide, workdir = sys.argv[1], sys.argv[2]
    given = dict(arg.split("=", 1) for arg in sys.argv[3:])
    found = blocks(guide)
    values = [body for kind, body in found if kind == "values"]
    if len(values) != 1:
        sys.exit(f"install guide: {len(values)} values blocks, not 1")
    preamble = "set -euo pipefail\n" + substituted(values[0], given)
    home = os.path.join(workdir, "root")
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": home, "LANG": "C.UTF-8"}
    password = secrets.token_urlsafe(24)
    started = time.monotonic()
    ran = 0
    first_sync = None
    for kind, body in found:
        if kind == "systemd":
            verify_units(body)
            continue
        if kind != "run":
            continue
        ran += 1
        block_started = time.monotonic()
        result = run_at_a_terminal(preamble + body, workdir, env, password)
        first_line = body.strip().splitlines()[0]
        if result.returncode != 0:
            sys.exit(f"install guide: block {ran} ({first_line}) failed, exit "
                     f"{result.returncode}:\n{result.stdout}{result.stderr}")
        print(f"install guide: block {ran} ({first_line}): "
              f"{time.monotonic() - block_started:.1f} s")
        if result.stdout.strip():
            print("  " + result.stdout.strip().replace("\n", "\n  "))
        if "rbd-sync run" in body and first_sync is None:
            first_sync = time.monotonic() - started
    if first_sync is None:
        sys.exit("install guide: no block runs `rbd-sync run`")
    print(f"install guide: {ran} blocks in {time.monotonic() - started:.1f} s; from the "
          f"package install to the end of the first sync {first_sync:.1f} s")


if __name__ == "__main__":
    main()
