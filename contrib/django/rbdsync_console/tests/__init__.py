"""The app's tests, run by Django's test runner against the real PostgreSQL (and, for
some, the real Ceph cluster) that scripts/test.sh starts: CTest labels django and
browser (tests/CMakeLists.txt). docs: contrib/django/README.md, "Tests"."""
