"""What the tree checkers (check-limits.py, check-architecture-doc.py, check-env-vars.py)
share: which tree they read, and how they tell what they found."""

import os


def tree_root(argv):
    """The tree to check: argv[1] (a fixture tree in tests/lint), else this checkout."""
    return argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def report(found):
    """Prints each finding on a line of its own; the exit status, 1 when there is any."""
    for line in found:
        print(line)
    return 1 if found else 0
