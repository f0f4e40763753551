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
given on stdin, never in an argument. Prints each block's time, and the time from the
package's installation to the end of the first sync.
"""
import os
import re
import secrets
import subprocess
import sys
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
        # No controlling terminal (a new session): psql's \password then reads stdin.
        result = subprocess.run(["bash", "-c", preamble + body], cwd=workdir, env=env,
                                input=(password + "\n") * 16, text=True,
                                capture_output=True, start_new_session=True)
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
