#!/usr/bin/python3
"""The console's Django tests, against the app as a user installs it (CTest labels
django and browser): not the source tree, but the wheel built from
contrib/django/pyproject.toml and installed into a temporary directory.

  1. builds the wheel offline (python3 -m build --wheel --no-isolation) from a copy of the
     sources, so the checkout gets no build/ or egg-info;
  2. checks its version is the package's (debian/changelog);
  3. installs it with python3-installer into a temporary root;
  4. runs `python3 -P -m django test rbdsync_console` with that root's site directory
     and the demo site (contrib/django/demo_site) on the path, and nothing else of the
     checkout: -P keeps the working directory off sys.path, and the import is checked
     to come from the installed copy before any test runs.

Arguments are passed on to Django's test command (e.g. --tag=browser).
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
APP_SOURCE = os.path.join(SOURCE, "contrib", "django")
PYTHON = "/usr/bin/python3"


def fail(message):
    print(f"run_django_tests.py: {message}", file=sys.stderr)
    sys.exit(1)


def package_version():
    with open(os.path.join(SOURCE, "debian", "changelog"), encoding="utf-8") as stream:
        match = re.match(r"rbd-sync \(([^)-]+)", stream.readline())
    return match.group(1)


def build_and_install(work):
    sources = os.path.join(work, "src")
    os.makedirs(sources)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(os.path.join(APP_SOURCE, name), sources)
    shutil.copytree(os.path.join(APP_SOURCE, "rbdsync_console"),
                    os.path.join(sources, "rbdsync_console"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    dist = os.path.join(work, "dist")
    subprocess.run([PYTHON, "-m", "build", "--wheel", "--no-isolation", "--outdir", dist, sources],
                   check=True, stdout=subprocess.DEVNULL)
    wheels = glob.glob(os.path.join(dist, "*.whl"))
    if len(wheels) != 1:
        fail(f"expected one wheel in {dist}, found {wheels}")
    wheel_version = os.path.basename(wheels[0]).split("-")[1]
    if wheel_version != package_version():
        fail(f"contrib/django/pyproject.toml says version {wheel_version}, debian/changelog "
             f"{package_version()}: make them the same")
    root = os.path.join(work, "root")
    subprocess.run([PYTHON, "-m", "installer", "--destdir", root, wheels[0]], check=True)
    found = glob.glob(os.path.join(root, "**", "rbdsync_console", "__init__.py"), recursive=True)
    if len(found) != 1:
        fail(f"the installed wheel has {len(found)} copies of rbdsync_console in {root}")
    return os.path.dirname(os.path.dirname(found[0]))


def main():
    work = tempfile.mkdtemp(prefix="rbd-sync-console.")
    try:
        site_packages = build_and_install(work)
        # The demo site alone, beside (not inside) the checkout's app.
        site = os.path.join(work, "site")
        os.makedirs(site)
        os.symlink(os.path.join(APP_SOURCE, "demo_site"), os.path.join(site, "demo_site"))
        env = dict(os.environ, PYTHONPATH=f"{site_packages}:{site}", RBDSYNC_TEST_SOURCE_DIR=SOURCE,
                   PYTHONDONTWRITEBYTECODE="1")
        imported = subprocess.run([PYTHON, "-P", "-c",
                                   "import rbdsync_console; print(rbdsync_console.__file__)"],
                                  cwd=site, env=env, capture_output=True, text=True, check=True)
        if not imported.stdout.startswith(site_packages + os.sep):
            fail(f"rbdsync_console is imported from {imported.stdout.strip()}, not the "
                 f"installed copy in {site_packages}")
        print(f"run_django_tests.py: testing the installed {imported.stdout.strip()}", flush=True)
        tested = subprocess.run([PYTHON, "-P", "-m", "django", "test", "rbdsync_console",
                                 "--settings=demo_site.test_settings", "--noinput", "-v", "2",
                                 *sys.argv[1:]], cwd=site, env=env, check=False)
        return tested.returncode
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
