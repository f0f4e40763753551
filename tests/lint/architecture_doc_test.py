#!/usr/bin/env python3
"""scripts/check-architecture-doc.py finds what it must: fixture trees whose module list
misses a folder, a file, or names a folder that is gone, run through the real script."""
import unittest

from fixture_tree import CheckerTest, run_on_tree

DOC = """# Architecture

```
src/main.cpp      the main
src/lock/         file_lock (the guard), lock_path
                  (opened one component at a time)
tests/            not checked
```
"""


def run(files, doc=DOC):
    return run_on_tree("check-architecture-doc.py", {**files, "docs/architecture.md": doc},
                       lambda root: [root])


LOCK = {"src/main.cpp": "", "src/lock/file_lock.cpp": "", "src/lock/file_lock.hpp": "",
        "src/lock/lock_path.hpp": ""}


class ArchitectureDocTest(CheckerTest):
    def test_a_list_that_names_every_file_passes(self):
        self.assertEqual(run(LOCK), (0, ""))

    def test_a_file_the_entry_does_not_name_is_found(self):
        self.assertFinds(run({**LOCK, "src/lock/holder_record.cpp": ""}),
                         "entry src/lock/ does not name holder_record")

    def test_a_folder_without_an_entry_is_found(self):
        self.assertFinds(run({**LOCK, "src/ceph/wire/encoding.hpp": ""}),
                         "no entry for src/ceph/wire/")

    def test_an_entry_of_a_folder_that_is_gone_is_found(self):
        self.assertFinds(run({"src/main.cpp": ""}),
                         "entry src/lock/ names no folder of source files")


if __name__ == "__main__":
    unittest.main()
