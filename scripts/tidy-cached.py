#!/usr/bin/env python3
"""clang-tidy over the project's C++ sources (src/*.cpp), a file's clean verdict reused.

Usage: scripts/tidy-cached.py BUILD_DIR

A file is checked again unless a clean verdict was recorded under the same key: a hash of
what clang-tidy would see (the file preprocessed with its own compile command, so every
header it includes counts), that command's flags, .clang-tidy and clang-tidy's version.
Only clean verdicts are kept: a file with findings is always checked again. The cache
lives outside the clone (RBDSYNC_TIDY_CACHE, default ~/.cache/rbd-sync/clang-tidy), so a
fresh clone of an unchanged tree reuses it; RBDSYNC_TIDY_CACHE=off checks every file.

Prints clang-tidy's findings and writes them to BUILD_DIR/clang-tidy.log; exits 1 when
there are any. Preprocessing uses the compile command's own compiler (GCC): a change
inside an `#ifdef __clang__` branch of a header alone would not be seen. Headers of the
system change with their packages, which changes their preprocessed text.
"""
import concurrent.futures
import hashlib
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path


def tracked_sources(root):
    out = subprocess.run(["git", "ls-files", "src/*.cpp"], cwd=root, check=True,
                         capture_output=True, text=True).stdout
    return [root / line for line in out.splitlines() if line]


def preprocess_command(entry):
    """The compile command with -E -P -C for -c, and output to stdout."""
    args = entry.get("arguments") or shlex.split(entry["command"])
    result = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg == "-o":
            skip = True
            continue
        if arg == "-c":
            continue
        result.append(arg)
    # -C: comments stay, NOLINT among them.
    return result + ["-E", "-P", "-C"]


def flags_for_key(entry, root, build):
    """The flags that shape what tidy sees, with the clone's and build's paths replaced:
    another clone of the same tree has the same key."""
    return [a.replace(str(build), "<build>").replace(str(root), "<source>")
            for a in preprocess_command(entry) if a != entry["file"]]


def main():
    if len(sys.argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    root = Path(__file__).resolve().parent.parent
    build = Path(sys.argv[1]).resolve()
    commands = {Path(e["file"]).resolve(): e
                for e in json.loads((build / "compile_commands.json").read_text())}
    cache_setting = os.environ.get("RBDSYNC_TIDY_CACHE", "")
    cache = None if cache_setting == "off" else Path(
        cache_setting or Path.home() / ".cache" / "rbd-sync" / "clang-tidy")
    version = subprocess.run(["clang-tidy", "--version"], check=True, capture_output=True,
                             text=True).stdout
    config = (root / ".clang-tidy").read_bytes()

    def key_of(source):
        entry = commands.get(source)
        if entry is None:
            return None
        text = subprocess.run(preprocess_command(entry), cwd=entry["directory"], check=True,
                              capture_output=True).stdout
        digest = hashlib.sha256()
        for part in (version.encode(), config, " ".join(flags_for_key(entry, root, build)).encode(), text):
            digest.update(hashlib.sha256(part).digest())
        return digest.hexdigest()

    def check(source):
        """(source, findings text, reused?)"""
        key = key_of(source) if cache else None
        if key and (cache / key).exists():
            return source, "", True
        run = subprocess.run(["clang-tidy", "-p", str(build), "--quiet", str(source)],
                             capture_output=True, text=True)
        findings = run.stdout if ("warning:" in run.stdout or "error:" in run.stdout or
                                  run.returncode != 0) else ""
        if run.returncode != 0 and not findings:
            findings = f"{source}: clang-tidy exited {run.returncode}\n{run.stderr}"
        if key and not findings:
            cache.mkdir(parents=True, exist_ok=True)
            (cache / key).write_text(str(source.relative_to(root)) + "\n")
        return source, findings, False

    sources = tracked_sources(root)
    missing = [s for s in sources if s not in commands]
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(check, sources))
    findings = "".join(text for _, text, _ in results)
    reused = sum(1 for _, _, hit in results if hit)
    (build / "clang-tidy.log").write_text(findings)
    if findings:
        sys.stdout.write(findings)
    print(f"clang-tidy: {len(sources)} files, {reused} clean verdicts reused"
          f"{', cache off' if cache is None else ''}"
          f"{f', not in the compile commands: {len(missing)}' if missing else ''}")
    if findings:
        print(f"clang-tidy found problems (above; log {build / 'clang-tidy.log'})",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
