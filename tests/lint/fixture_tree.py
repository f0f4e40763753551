"""The lint checkers' tests run the real script of scripts/ on a fixture tree: files
written to a temporary directory, the script's exit code and output returned."""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts")


def run_on_tree(script, files, arguments):
    """Writes `files` ({relative path: text}) below a temporary root and runs
    scripts/`script` with `arguments(root)`; returns (exit code, stdout and stderr)."""
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            full = os.path.join(root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as f:
                f.write(text)
        done = subprocess.run([sys.executable, os.path.join(SCRIPTS, script), *arguments(root)],
                              capture_output=True, text=True)
        # A checker says what it found on stdout and why it cannot check on stderr
        # (sys.exit with a message): both are what a test may look for.
        return done.returncode, done.stdout + done.stderr


class CheckerTest(unittest.TestCase):
    """A checker's tests: assertFinds checks what a run of it on a fixture tree found."""

    def assertFinds(self, result, message):
        """`result` (exit code, output) is a failure whose output says `message`."""
        code, out = result
        self.assertEqual(code, 1, out)
        self.assertIn(message, out)
