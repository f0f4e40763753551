#!/usr/bin/python3
"""Checks a cron.d file the way cron(8) reads it: every job line (and every commented-out
job line, which the package ships disabled) has five valid time fields, a user and a
command. Exits non-zero naming the first bad line."""
import re
import sys

RANGES = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)]
NAMES = [None, None, None,
         "jan feb mar apr may jun jul aug sep oct nov dec".split(),
         "sun mon tue wed thu fri sat".split()]


def valid_field(text, index):
    low, high = RANGES[index]
    for part in text.split(","):
        value, _, step = part.partition("/")
        if step and not step.isdigit():
            return False
        if value == "*":
            continue
        bounds = value.split("-")
        if len(bounds) > 2:
            return False
        for bound in bounds:
            if NAMES[index] and bound.lower() in NAMES[index]:
                continue
            if not bound.isdigit() or not low <= int(bound) <= high:
                return False
    return True


def main(path):
    jobs = 0
    for number, raw in enumerate(open(path, encoding="utf-8"), 1):
        line = raw.strip()
        candidate = line[1:].strip() if line.startswith("#") else line
        if not candidate or re.match(r"^[A-Z_]+=", candidate):
            continue
        fields = candidate.split(None, 6)
        looks_like_job = len(fields) >= 7 and fields[0][0] in "0123456789*"
        if line.startswith("#") and not looks_like_job:
            continue  # an ordinary comment
        if not looks_like_job or not all(valid_field(f, i) for i, f in enumerate(fields[:5])):
            print(f"{path}:{number}: not a valid cron.d job line: {line}", file=sys.stderr)
            return 1
        if not re.match(r"^[a-z_][a-z0-9_-]*$", fields[5]):
            print(f"{path}:{number}: bad user field '{fields[5]}'", file=sys.stderr)
            return 1
        jobs += 1
    if jobs == 0:
        print(f"{path}: no job line found", file=sys.stderr)
        return 1
    print(f"{path}: {jobs} job line(s) valid")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
