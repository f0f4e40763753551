#!/usr/bin/env python3
"""scripts/check-architecture-doc.py finds what it must: fixture trees whose module list
misses a folder, a file, or names a folder that is gone, run through the real script."""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "check-architecture-doc.py")

DOC = """# Architecture

```
src/main.cpp      the main
src/lock/         file_lock (the guard), lock_path
                  (opened one component at a time)
tests/            not checked
```
"""


def run(files, doc=DOC):
    with tempfile.TemporaryDirectory() as root:
        files = {**files, "docs/architecture.md": doc}
        for path, text in files.items():
            full = os.path.join(root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as f:
                f.write(text)
        done = subprocess.run([sys.executable, SCRIPT, root], capture_output=True, text=True)
        return done.returncode, done.stdout


LOCK = {"src/main.cpp": "", "src/lock/file_lock.cpp": "", "src/lock/file_lock.hpp": "",
        "src/lock/lock_path.hpp": ""}


class ArchitectureDocTest(unittest.TestCase):
    def test_a_list_that_names_every_file_passes(self):
        self.assertEqual(run(LOCK), (0, ""))

    def test_a_file_the_entry_does_not_name_is_found(self):
        code, out = run({**LOCK, "src/lock/holder_record.cpp": ""})
        self.assertEqual(code, 1)
        self.assertIn("entry src/lock/ does not name holder_record", out)

    def test_a_folder_without_an_entry_is_found(self):
        code, out = run({**LOCK, "src/ceph/wire/encoding.hpp": ""})
        self.assertEqual(code, 1)
        self.assertIn("no entry for src/ceph/wire/", out)

    def test_an_entry_of_a_folder_that_is_gone_is_found(self):
        code, out = run({"src/main.cpp": ""})
        self.assertEqual(code, 1)
        self.assertIn("entry src/lock/ names no folder of source files", out)


if __name__ == "__main__":
    unittest.main()
