#!/usr/bin/env python3
"""scripts/check-env-vars.py finds what it must: fixture trees whose scripts and tests
read a variable the table of docs/testing.md lacks, or whose table has a row read
nowhere, run through the real script."""
import unittest

from fixture_tree import run_on_tree

DOC = """# Testing

## Environment variables

| Variable | Set by | Read by | Default | Meaning |
|---|---|---|---|---|
| `RBDSYNC_KNOB` | you | `scripts/a.sh` | 1 | a knob |
| `RBDSYNC_TEST_DB` | `env.sh` | the tests | | the database |

## Next section

| `RBDSYNC_NOT_A_ROW` | a table of another section |
"""

TREE = {
    "scripts/a.sh": "#!/usr/bin/env bash\nknob=${RBDSYNC_KNOB:-1}\nlocal=${TMPDIR:-/tmp}\n",
    "tests/integration/db_test.cpp": 'const auto db = required_env("RBDSYNC_TEST_DB");\n',
}


def run(files, doc=DOC):
    return run_on_tree("check-env-vars.py", {**files, "docs/testing.md": doc},
                       lambda root: [root])


class EnvVarsTest(unittest.TestCase):
    def test_a_table_that_lists_every_read_passes(self):
        self.assertEqual(run(TREE), (0, ""))

    def test_a_defaulted_shell_variable_not_in_the_table_is_found(self):
        code, out = run({**TREE, ".ci/run": "#!/bin/sh\nport=${CLUSTER_PORT-auto}\n"})
        self.assertEqual(code, 1)
        self.assertIn("CLUSTER_PORT (read in .ci/run) is not in the table", out)

    def test_a_prefixed_shell_variable_not_in_the_table_is_found(self):
        code, out = run({**TREE, "bench/b.sh": 'echo "$RBDSYNC_BENCH_NEW"\n'})
        self.assertEqual(code, 1)
        self.assertIn("RBDSYNC_BENCH_NEW (read in bench/b.sh)", out)

    def test_a_python_read_not_in_the_table_is_found_and_a_write_is_not(self):
        code, out = run({**TREE, "tests/c.py": 'os.environ["RBDSYNC_SET"] = "x"\n'
                                               'os.environ.get("RBDSYNC_GOT")\n'})
        self.assertEqual(code, 1)
        self.assertIn("RBDSYNC_GOT (read in tests/c.py)", out)
        self.assertNotIn("RBDSYNC_SET", out)

    def test_a_row_read_nowhere_is_found(self):
        code, out = run({"scripts/a.sh": TREE["scripts/a.sh"]})
        self.assertEqual(code, 1)
        self.assertIn("the row RBDSYNC_TEST_DB is read nowhere", out)
        self.assertNotIn("RBDSYNC_NOT_A_ROW", out)

    def test_a_setting_nothing_reads_is_found_and_one_the_product_reads_is_not(self):
        code, out = run({**TREE,
                         "scripts/d.sh": "#!/bin/sh\nRBDSYNC_OLD_KNOB=1 ./scripts/a.sh\n"
                                         "export RBDSYNC_CRON=1\ncmake -DRBDSYNC_TESTS=ON .\n",
                         "cron/rbd-sync-cron-job": 'args="$RBDSYNC_CRON"\n'})
        self.assertEqual(code, 1)
        self.assertIn("scripts/d.sh: sets RBDSYNC_OLD_KNOB, which neither", out)
        self.assertNotIn("RBDSYNC_CRON", out)
        self.assertNotIn("RBDSYNC_TESTS", out)

    def test_a_doc_without_the_section_is_found(self):
        code, out = run(TREE, doc="# Testing\n")
        self.assertEqual(code, 1)
        self.assertIn("no section '## Environment variables'", out)


if __name__ == "__main__":
    unittest.main()
