#!/usr/bin/env python3
"""scripts/check-limits.py finds what it must: fixture trees over and within each limit,
with and without a line in the allow-list, run through the real script."""
import os
import unittest

from fixture_tree import CheckerTest, run_on_tree


def run(files, allowed=""):
    return run_on_tree("check-limits.py", {**files, "allowed.txt": allowed},
                       lambda root: [root, os.path.join(root, "allowed.txt")])


def lines(n):
    return "int x;\n" * n


def folder(count):
    return {f"src/big/f{i}.cpp": lines(1) for i in range(count)}


OPT_OUT = "// NOLINTNEXTLINE(readability-function-size): named\nvoid f() {}\n"


class CheckLimitsTest(CheckerTest):
    def test_a_tree_within_every_limit_passes(self):
        self.assertEqual(run({**folder(20), "src/a/long.cpp": lines(600)}), (0, ""))

    def test_a_folder_of_21_files_fails_naming_it(self):
        self.assertFinds(run(folder(21)), "src/big: 21 files in the folder, over the limit of 20")

    def test_headers_count_apart_from_sources(self):
        tree = {**folder(11), **{f"src/big/f{i}.hpp": lines(1) for i in range(10)}}
        self.assertEqual(run(tree)[0], 1)

    def test_a_file_of_601_lines_fails_naming_it(self):
        self.assertFinds(run({"src/a/long.cpp": lines(601)}),
                         "src/a/long.cpp: 601 lines, over the limit of 600: split the file")

    def test_an_opt_out_fails_unless_allowed(self):
        self.assertEqual(run({"src/a/f.cpp": OPT_OUT})[0], 1)
        self.assertEqual(run({"src/a/f.cpp": OPT_OUT}, "src opt-outs 1\n"), (0, ""))

    def test_an_allowed_file_may_not_grow(self):
        self.assertFinds(run({"src/a/long.cpp": lines(701)}, "src/a/long.cpp lines 700\n"),
                         "more than the 700")
        self.assertEqual(run({"src/a/long.cpp": lines(700)}, "src/a/long.cpp lines 700\n"), (0, ""))

    def test_an_allowed_file_that_shrank_must_lower_its_number(self):
        self.assertFinds(run({"src/a/long.cpp": lines(650)}, "src/a/long.cpp lines 700  # why\n"),
                         "lower its number in scripts/limits-allowed.txt to 650")

    def test_an_allowed_path_within_the_limit_must_leave_the_list(self):
        self.assertFinds(run(folder(20), "src/big files 25\n"), "remove its line")

    def test_an_allowed_path_no_longer_in_the_tree_must_leave_the_list(self):
        self.assertFinds(run(folder(1), "src/gone.cpp lines 900\n"),
                         "src/gone.cpp: named in scripts/limits-allowed.txt but not in the tree")

    def test_a_malformed_allow_list_line_is_named(self):
        self.assertFinds(run(folder(1), "src/big files\n"),
                         "expected 'PATH files|lines|opt-outs NUMBER', got 'src/big files'")

    # The option handling is tree_check.tree_root()'s, which every tree checker shares.
    def test_help_prints_the_usage(self):
        code, out = run_on_tree("check-limits.py", {}, lambda root: ["--help"])
        self.assertEqual(code, 0, out)
        self.assertIn("usage: check-limits.py [SOURCE_ROOT [ALLOW_LIST]]", out)

    def test_an_unknown_option_is_a_usage_error_not_a_path(self):
        code, out = run_on_tree("check-limits.py", {}, lambda root: ["--tree"])
        self.assertEqual(code, 64, out)
        self.assertIn("unknown option --tree", out)


if __name__ == "__main__":
    unittest.main()
