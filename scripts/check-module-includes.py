#!/usr/bin/env python3
"""A module may include only what its CMake target links.

Every target compiles with `src` on its include path, so the compiler would let db/
include a ceph/ header; the build files, though, say which module links which. This
check reads the graph CMake wrote (cmake/module_graph.cmake) and fails on any #include in
src/ of a project header, or of a library's header, that the including file's target
does not link, directly or through what its links pass on.

usage: check-module-includes.py GRAPH_TSV SOURCE_ROOT
Prints one line per finding (file:line, what, why, the fix); exit 1 if any, else 0.
"""
import os
import re
import sys

# Headers of linked libraries, by the start of their include path: the pattern a link
# item (a target name or a library file) must match for the include to be allowed.
LIBRARY_HEADERS = {
    "rados/": r"librados|rados",
    "rbd/": r"librbd",
    "pqxx/": r"PQXX|pqxx",
    "nlohmann/": r"nlohmann_json",
    "spdlog/": r"spdlog",
    "fmt/": r"fmt",
    "cxxopts.hpp": r"cxxopts",
}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
LINK_ONLY = re.compile(r"^\$<LINK_ONLY:(.*)>$")


def split(field):
    return [item for item in field.split(";") if item]


def read_graph(path):
    """target -> (sources, links, passes on)"""
    graph = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            target, sources, links, passes = (line.rstrip("\n").split("\t") + [""] * 4)[:4]
            graph[target] = (split(sources), split(links), split(passes))
    return graph


def reachable(graph, target):
    """Everything target may use: its own links, then what each passes on (a
    $<LINK_ONLY:...> item is linked but passes no headers on)."""
    seen = set()
    todo = list(graph[target][1])
    while todo:
        item = todo.pop()
        if LINK_ONLY.match(item) or item in seen:
            continue
        seen.add(item)
        if item in graph:
            todo.extend(graph[item][2])
    return seen


def owners(graph):
    """file path below src/ -> target; a header not named by a target belongs to the
    target compiling its .cpp, else to the library compiling files in its folder."""
    by_file = {}
    by_stem = {}
    by_folder = {}
    for target, (sources, links, _) in graph.items():
        for source in sources:
            path = source[len("src/"):]
            by_file[path] = target
            stem, ext = os.path.splitext(path)
            if ext == ".cpp":
                by_stem[stem] = target
                # An executable's own main file does not make it the folder's owner.
                if target.startswith("rbdsync_"):
                    by_folder.setdefault(os.path.dirname(path), target)

    def owner(path):
        if path in by_file:
            return by_file[path]
        stem = os.path.splitext(path)[0]
        return by_stem.get(stem) or by_folder.get(os.path.dirname(path))

    return owner


def check(graph_path, root):
    graph = read_graph(graph_path)
    owner = owners(graph)
    findings = []
    src = os.path.join(root, "src")
    for folder, _, files in sorted(os.walk(src)):
        for name in sorted(files):
            if not name.endswith((".cpp", ".hpp", ".hpp.in")):
                continue
            full = os.path.join(folder, name)
            path = os.path.relpath(full, src)
            target = owner(path.removesuffix(".in"))
            if target is None:
                findings.append(f"src/{path}: belongs to no CMake target (add it to one in CMakeLists.txt)")
                continue
            allowed = reachable(graph, target) | {target}
            with open(full, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    kind, included = m.groups()
                    if kind == '"':
                        theirs = owner(included)
                        if theirs is None or theirs in allowed:
                            continue
                        findings.append(
                            f"src/{path}:{number}: includes {included} of {theirs}, which {target} does not link"
                            f" (link {theirs} in CMakeLists.txt if the dependency is meant, or move the code)")
                        continue
                    for prefix, link in LIBRARY_HEADERS.items():
                        if included.startswith(prefix) and not any(re.search(link, a) for a in allowed):
                            findings.append(
                                f"src/{path}:{number}: includes <{included}>, a library {target} does not link"
                                f" (link it in CMakeLists.txt if the dependency is meant, or move the code)")
    return findings


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        return 64
    findings = check(argv[1], argv[2])
    for finding in findings:
        print(finding)
    if not findings:
        print("module includes: every include is one the including target links")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
