#!/usr/bin/env python3
"""The size limits of src/ hold by themselves (CONTRIBUTING.md, "Limits").

  - a folder of src/ holds at most 20 files (a .cpp and its .hpp are two files);
  - a file holds at most 600 lines;
  - a function holds at most 60 lines and 8 parameters: clang-tidy checks that
    (readability-function-size in .clang-tidy); this script counts the functions that
    opt out with NOLINT(readability-function-size), which only the allow-list may do.

What is over a limit today is named in scripts/limits-allowed.txt with its size now.
The list only shrinks: a named path that grows fails, one that shrank must have its
number lowered (so it cannot grow back unseen), and one within the limit must go.

usage: check-limits.py [SOURCE_ROOT [ALLOW_LIST]]
Prints one line per finding (what, how big, the limit, the fix); exit 1 if any, else 0.
"""
import os
import re
import sys

from tree_check import report, tree_root

FOLDER_FILES = 20
FILE_LINES = 600
FUNCTION_OPT_OUT = re.compile(r"NOLINT(NEXTLINE)?\(readability-function-size\)")
SOURCE_SUFFIXES = (".cpp", ".hpp")


def read_allowed(path):
    """path -> (kind, number), from lines 'PATH KIND NUMBER  # why'."""
    allowed = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            text = line.split("#", 1)[0].split()
            if not text:
                continue
            if len(text) != 3 or text[1] not in ("files", "lines", "opt-outs") or not text[2].isdigit():
                sys.exit(f"{path}:{number}: expected 'PATH files|lines|opt-outs NUMBER', got {line.strip()!r}")
            allowed[text[0]] = (text[1], int(text[2]))
    return allowed


def measure(root):
    """(kind, path) -> size, for every folder and source file under root/src."""
    sizes = {}
    opt_outs = 0
    for folder, _, names in os.walk(os.path.join(root, "src")):
        sources = sorted(n for n in names if n.endswith(SOURCE_SUFFIXES))
        relative = os.path.relpath(folder, root)
        sizes[("files", relative)] = len(sources)
        for name in sources:
            with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
                text = f.read()
            sizes[("lines", os.path.join(relative, name))] = text.count("\n")
            opt_outs += len(FUNCTION_OPT_OUT.findall(text))
    sizes[("opt-outs", "src")] = opt_outs
    return sizes


LIMITS = {"files": FOLDER_FILES, "lines": FILE_LINES, "opt-outs": 0}
WHAT = {
    "files": "files in the folder",
    "lines": "lines",
    "opt-outs": "functions opting out of readability-function-size",
}
FIX = {
    "files": "split the folder by job (docs/architecture.md)",
    "lines": "split the file by job",
    "opt-outs": "split the function",
}


def findings(sizes, allowed):
    found = []
    for (kind, path), size in sorted(sizes.items()):
        limit = LIMITS[kind]
        named = allowed.get(path)
        if named and named[0] != kind:
            named = None
        if named is None:
            if size > limit:
                found.append(f"{path}: {size} {WHAT[kind]}, over the limit of {limit}: {FIX[kind]}")
            continue
        ceiling = named[1]
        if size > ceiling:
            found.append(f"{path}: {size} {WHAT[kind]}, more than the {ceiling} scripts/limits-allowed.txt "
                         f"allows (limit {limit}): {FIX[kind]}")
        elif size <= limit:
            found.append(f"{path}: {size} {WHAT[kind]}, within the limit of {limit}: "
                         "remove its line from scripts/limits-allowed.txt")
        elif size < ceiling:
            found.append(f"{path}: {size} {WHAT[kind]}, fewer than the {ceiling} allowed: "
                         f"lower its number in scripts/limits-allowed.txt to {size}")
    measured = {path for _, path in sizes}
    for path in sorted(set(allowed) - measured):
        found.append(f"{path}: named in scripts/limits-allowed.txt but not in the tree: remove its line")
    return found


def main():
    root = tree_root(sys.argv)
    allow_list = sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, "scripts", "limits-allowed.txt")
    return report(findings(measure(root), read_allowed(allow_list)))


if __name__ == "__main__":
    sys.exit(main())
