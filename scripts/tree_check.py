"""What the tree checkers (check-limits.py, check-architecture-doc.py, check-env-vars.py)
share: which tree they read, and how they tell what they found."""

import os
import sys


def tree_root(argv):
    """The tree to check: argv[1] (a fixture tree in tests/lint), else this checkout.
    -h/--help prints the calling script's docstring; another option is a usage error (exit 64, as check-module-includes.py)."""
    if len(argv) > 1 and argv[1].startswith("-"):
        if argv[1] in ("-h", "--help"):
            print(sys.modules["__main__"].__doc__.strip())
            sys.exit(0)
        print(f"{os.path.basename(argv[0])}: unknown option {argv[1]}: it takes only paths "
              "(see --help)", file=sys.stderr)
        sys.exit(64)
    return argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def report(found):
    """Prints each finding on a line of its own; the exit status, 1 when there is any."""
    for line in found:
        print(line)
    return 1 if found else 0
