"""The system check that names the Django releases the app is tested with."""
from unittest import mock

import django
from django.test import SimpleTestCase

from .. import checks


class TestedDjango(SimpleTestCase):
    def test_the_releases_ci_runs_pass_and_others_are_named(self):
        for version, tested in (((3, 2, 19, "final", 0), True), ((4, 2, 20, "final", 0), True),
                                ((4, 1, 0, "final", 0), True), ((3, 1, 0, "final", 0), False),
                                ((5, 2, 1, "final", 0), False)):
            with self.subTest(version=version), mock.patch.object(django, "VERSION", version):
                warnings = checks.tested_django(None)
                self.assertEqual(warnings == [], tested, warnings)
                if not tested:
                    self.assertEqual(warnings[0].id, "rbdsync_console.W002")
                    self.assertIn("3.2 to 4.2", warnings[0].msg)

    def test_this_django_is_one_of_them(self):
        # Run on Debian 12 (3.2) and, by scripts/test.sh --all, on Debian 13 (4.2).
        self.assertEqual(checks.tested_django(None), [], django.VERSION)
