#!/usr/bin/env python3
"""docs/architecture.md's module list holds to the tree.

The list is the code block of lines `src/<folder>/  what it holds`, each continued by
indented lines. Every folder of src/ with source files must have its entry, every entry
must name a folder that exists, and every source file of the folder must be named in
its entry by its stem (session for session.cpp and session.hpp; a .hpp.in counts as its
.hpp).

usage: check-architecture-doc.py [SOURCE_ROOT]
Prints one line per finding (what is missing, where, the fix); exit 1 if any, else 0.
"""
import os
import re
import sys

from tree_check import report, tree_root

ENTRY = re.compile(r"^(src/\S*/)\s")
SOURCE = re.compile(r"^(.+?)\.(cpp|hpp|hpp\.in)$")


def entries(doc):
    """folder (src/x/) -> its text, from the doc's module list."""
    found = {}
    current = None
    with open(doc, encoding="utf-8") as f:
        for line in f:
            match = ENTRY.match(line)
            if match:
                current = match.group(1)
                found[current] = line[match.end():]
            elif current and line.startswith(" " * 8):
                found[current] += line
            else:
                current = None
    return found


def stems(root):
    """folder (src/x/) -> stems of its source files."""
    by_folder = {}
    for folder, _, names in os.walk(os.path.join(root, "src")):
        relative = os.path.relpath(folder, root).replace(os.sep, "/") + "/"
        found = {m.group(1) for m in map(SOURCE.match, names) if m}
        if found and relative != "src/":
            by_folder[relative] = found
    return by_folder


def findings(root):
    doc = os.path.join(root, "docs", "architecture.md")
    listed = entries(doc)
    tree = stems(root)
    found = []
    for folder in sorted(set(tree) - set(listed)):
        found.append(f"docs/architecture.md: no entry for {folder}: add a line '{folder}  what it holds'")
    for folder in sorted(set(listed) - set(tree)):
        found.append(f"docs/architecture.md: entry {folder} names no folder of source files: remove or rename it")
    for folder in sorted(set(tree) & set(listed)):
        words = set(re.findall(r"[A-Za-z0-9_]+", listed[folder]))
        for stem in sorted(tree[folder] - words):
            found.append(f"docs/architecture.md: entry {folder} does not name {stem} "
                         f"({folder}{stem}.*): say in a few words what it holds")
    return found


def main():
    return report(findings(tree_root(sys.argv)))


if __name__ == "__main__":
    sys.exit(main())
