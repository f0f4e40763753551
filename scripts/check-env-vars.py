#!/usr/bin/env python3
"""docs/testing.md's table of environment variables holds to the tree.

The table is the rows `| `NAME` | ...` under the heading "## Environment variables".
Every variable read in scripts/, tests/, bench/, .ci/ and the console's tests must be a
row, and every row must be read there (or by the core: a test hook).

What counts as a read:
  shell (*.sh, or a file whose #! line names a shell)
        ${NAME:-...} ${NAME-...} ${NAME:?...} ${NAME:+...} ${NAME:=...} of any NAME, and
        $RBDSYNC_X or ${RBDSYNC_X...} of the project's prefix;
  any file
        getenv("NAME"), required_env("NAME"), required("NAME"), environ.get("NAME"),
        environ["NAME"] (not an assignment to it).
A row is also read when a shell file expands it ($NAME): CEPH_CONF, PGPASSFILE.
And every RBDSYNC_ variable a shell file there sets (NAME=... or export NAME) must be
read: a row of the table, or the product's (named in src/, cron/ or the console's
settings), so that a script setting a name nothing reads any more is found too.
tests/lint/ and this script are skipped: they hold made-up names.

usage: check-env-vars.py [SOURCE_ROOT]
Prints one line per finding (what is missing, where, the fix); exit 1 if any, else 0.
"""
import os
import re
import sys

from tree_check import report, tree_root

SCANNED = ["scripts", "tests", "bench", ".ci", "contrib/django/rbdsync_console/tests",
           "contrib/django/demo_site/test_settings.py"]
SKIPPED = ["tests/lint/", "scripts/check-env-vars.py"]
# Read by the tests, set in the core: only its getenv calls count, for the rows check.
READ_ONLY = ["src"]
# The product's own files: a variable named there is the product's, which the scripts
# and tests may set (RBDSYNC_CRON, RBDSYNC_CONSOLE_DB, ...).
PRODUCT = ["src", "cron", "contrib/django/demo_site/settings.py"]
# Read in those folders, but not the suite's to list: the system's and /etc/os-release's,
# libpq's and Debian's own, the product's (docs/operations.md), a script's own variable.
NOT_THE_SUITES = {"TMPDIR", "VERSION_ID", "VERSION_CODENAME", "DEB_BUILD_OPTIONS",
                  "PGSERVICEFILE", "RBDSYNC_ARGS", "PG_BIN"}

HEADING = "## Environment variables"
ROW = re.compile(r"^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|")
DEFAULTED = re.compile(r"\$\{([A-Z][A-Z0-9_]*):?[-?+=]")
PREFIXED = re.compile(r"\$\{?(RBDSYNC_[A-Z0-9_]*[A-Z0-9])")
EXPANDED = re.compile(r"\$\{?([A-Z][A-Z0-9_]*)")
CALL = re.compile(r"""\b(?:getenv|required_env|required|environ\.get|environ\[)\(?\s*["']([A-Z][A-Z0-9_]*)["']""")
ASSIGNED = re.compile(r"\s*\]\s*=[^=]")
# A shell setting of a variable: NAME=value (alone, or before a command) or export NAME;
# not cmake's -DNAME=.
WRITTEN = re.compile(r"(?<![\w-])(?:export\s+)?(RBDSYNC_[A-Z0-9_]*[A-Z0-9])=")


def rows(doc):
    """The names of the table's rows, or None when the doc has no such section."""
    found = None
    with open(doc, encoding="utf-8") as f:
        for line in f:
            if line.rstrip() == HEADING:
                found = set()
            elif found is not None and line.startswith("#"):
                break
            elif found is not None:
                match = ROW.match(line)
                if match:
                    found.add(match.group(1))
    return found


def files(root, tops):
    for top in tops:
        path = os.path.join(root, top)
        if os.path.isfile(path):
            yield top, path
        for folder, subfolders, names in os.walk(path):
            subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
            for name in sorted(names):
                full = os.path.join(folder, name)
                relative = os.path.relpath(full, root).replace(os.sep, "/")
                if not any(relative.startswith(s) for s in SKIPPED):
                    yield relative, full


def is_shell(name, text):
    first = text.split("\n", 1)[0]
    return name.endswith(".sh") or (first.startswith("#!") and first.rstrip().endswith("sh"))


def texts(root, tops):
    """(relative path, text) of each readable text file below `tops`."""
    for relative, full in files(root, tops):
        try:
            with open(full, encoding="utf-8") as f:
                yield relative, f.read()
        except (UnicodeDecodeError, OSError):
            continue


def reads(root):
    """(name -> first file that reads it, as a knob of the suite; names expanded at all)"""
    listed, expanded = {}, set()
    for relative, text in texts(root, SCANNED):
        names = [m.group(1) for m in CALL.finditer(text) if not ASSIGNED.match(text, m.end())]
        if is_shell(relative, text):
            names += DEFAULTED.findall(text) + PREFIXED.findall(text)
            expanded.update(EXPANDED.findall(text))
        for name in names:
            listed.setdefault(name, relative)
    for relative, text in texts(root, READ_ONLY):
        if relative.endswith((".cpp", ".hpp")):
            expanded.update(CALL.findall(text))
    return listed, expanded | set(listed)


def written(root):
    """RBDSYNC_ name -> the first shell file of SCANNED that sets it."""
    found = {}
    for relative, text in texts(root, SCANNED):
        if is_shell(relative, text):
            for name in WRITTEN.findall(text):
                found.setdefault(name, relative)
    return found


def product_names(root):
    """Every RBDSYNC_ name the product's files mention."""
    return {name for _, text in texts(root, PRODUCT)
            for name in re.findall(r"RBDSYNC_[A-Z0-9_]*[A-Z0-9]", text)}


def findings(root):
    doc = os.path.join(root, "docs", "testing.md")
    table = rows(doc)
    if table is None:
        return [f"docs/testing.md: no section '{HEADING}': add it, with the table of variables"]
    listed, read = reads(root)
    found = []
    for name in sorted(set(listed) - table - NOT_THE_SUITES):
        found.append(f"docs/testing.md: {name} (read in {listed[name]}) is not in the table "
                     f"under '{HEADING}': add a row (set by, read by, default, meaning); "
                     "a new variable takes the prefix RBDSYNC_")
    for name in sorted(table - read):
        found.append(f"docs/testing.md: the row {name} is read nowhere in "
                     f"{', '.join(SCANNED[:4])}: remove the row, or correct its name")
    sets = written(root)
    for name in sorted(set(sets) - table - NOT_THE_SUITES - product_names(root)):
        found.append(f"{sets[name]}: sets {name}, which neither the suite (docs/testing.md's "
                     "table) nor the product reads: correct the name, or remove the setting")
    return found


def main():
    return report(findings(tree_root(sys.argv)))


if __name__ == "__main__":
    sys.exit(main())
