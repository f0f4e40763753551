"""Between libpq conninfo strings and Django's DATABASES entries."""
import os
import tempfile

from django.core.exceptions import ImproperlyConfigured
from django.test import SimpleTestCase

from ..dbsettings import conninfo_from_database, database_from_conninfo


class DatabaseSettings(SimpleTestCase):
    def test_a_conninfo_becomes_a_databases_entry_and_back(self):
        entry = database_from_conninfo("host=db1 port=5433 dbname=console user=web sslmode=require")
        self.assertEqual((entry["HOST"], entry["PORT"], entry["NAME"], entry["USER"]),
                         ("db1", "5433", "console", "web"))
        self.assertEqual(entry["OPTIONS"], {"sslmode": "require"})
        self.assertEqual(conninfo_from_database(entry),
                         "dbname=console user=web host=db1 port=5433 sslmode=require")

    def test_values_that_need_it_are_quoted(self):
        self.assertEqual(conninfo_from_database({"NAME": "it's here", "OPTIONS": {}}),
                         r"dbname='it\'s here'")

    def test_a_password_is_refused(self):
        for conninfo in ("host=db1 dbname=x password=secret", "postgresql://u:secret@db1/x"):
            with self.subTest(conninfo=conninfo), self.assertRaises(ImproperlyConfigured) as raised:
                database_from_conninfo(conninfo)
            self.assertNotIn("secret", str(raised.exception))

    def test_a_service_gives_its_database_name(self):
        with tempfile.NamedTemporaryFile("w", suffix=".conf") as services:
            services.write("[console]\nhost=db1\ndbname=console_db\n")
            services.flush()
            old = os.environ.get("PGSERVICEFILE")
            os.environ["PGSERVICEFILE"] = services.name
            try:
                entry = database_from_conninfo("service=console")
                with self.assertRaises(ImproperlyConfigured):
                    database_from_conninfo("service=elsewhere")
            finally:
                if old is None:
                    del os.environ["PGSERVICEFILE"]
                else:
                    os.environ["PGSERVICEFILE"] = old
        self.assertEqual(entry["NAME"], "console_db")
        self.assertEqual(entry["OPTIONS"], {"service": "console"})
