#!/usr/bin/env python3
"""scripts/check-module-includes.py finds what it must: a fixture tree with one
allowed and one forbidden include of each kind, run through the real script."""
import os
import unittest

from fixture_tree import CheckerTest, run_on_tree

GRAPH = "\n".join([
    "lib_common\tsrc/common/text.cpp\tThreads::Threads\tThreads::Threads",
    "lib_db\tsrc/db/store.cpp\tlib_common;PkgConfig::PQXX\tlib_common;$<LINK_ONLY:PkgConfig::PQXX>",
    "lib_ceph\tsrc/ceph/reader.cpp\tlib_common;/usr/lib/librados.so\tlib_common",
    "lib_app\tsrc/app/run.cpp\tlib_db\tlib_db",
    "PkgConfig::PQXX\t\t\t/usr/lib/libpqxx.so",
]) + "\n"


def run(files):
    return run_on_tree("check-module-includes.py", {**files, "graph.tsv": GRAPH},
                       lambda root: [os.path.join(root, "graph.tsv"), root])


BASE = {
    "src/common/text.hpp": "#pragma once\n",
    "src/common/text.cpp": '#include "common/text.hpp"\n',
    "src/db/store.hpp": "#pragma once\n",
    "src/db/store.cpp": '#include "db/store.hpp"\n#include "common/text.hpp"\n#include <pqxx/pqxx>\n',
    "src/ceph/reader.hpp": "#pragma once\n#include <rados/librados.hpp>\n",
    "src/ceph/reader.cpp": '#include "ceph/reader.hpp"\n',
    "src/app/run.cpp": '#include "db/store.hpp"\n#include "common/text.hpp"\n',
}


class ModuleIncludes(CheckerTest):
    def test_what_each_target_links_passes(self):
        code, out = run(BASE)
        self.assertEqual(code, 0, out)

    def test_a_header_of_a_module_not_linked_fails_naming_both(self):
        self.assertFinds(run({**BASE, "src/db/store.cpp": '#include "ceph/reader.hpp"\n'}),
                         "src/db/store.cpp:1: includes ceph/reader.hpp of lib_ceph, which lib_db does not link")

    def test_a_library_linked_privately_by_a_dependency_does_not_pass_on(self):
        self.assertFinds(run({**BASE, "src/app/run.cpp": "#include <pqxx/pqxx>\n"}),
                         "src/app/run.cpp:1: includes <pqxx/pqxx>, a library lib_app does not link")

    def test_a_library_not_linked_at_all_fails(self):
        self.assertFinds(run({**BASE, "src/db/store.hpp": "#include <rados/librados.hpp>\n"}),
                         "src/db/store.hpp:1: includes <rados/librados.hpp>")

    def test_a_file_of_no_target_fails(self):
        self.assertFinds(run({**BASE, "src/orphan/x.cpp": "\n"}),
                         "src/orphan/x.cpp: belongs to no CMake target")


if __name__ == "__main__":
    unittest.main()
