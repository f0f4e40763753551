"""contrib/django/grant-select.sql: a role it is run for reads every table and view the
models read, and can write none of the inventory."""
import os
import re
import secrets
import subprocess
import tempfile

import psycopg2
import psycopg2.errors
from django.apps import apps
from django.db import connections
from django.test import TransactionTestCase

from .. import conf
from ..dbsettings import conninfo_from_database
from .support import required_env, source_path

GRANT_SQL = source_path("contrib", "django", "grant-select.sql")


def admin_execute(conninfo, statement, params=None):
    connection = psycopg2.connect(conninfo)
    connection.autocommit = True
    try:
        with connection.cursor() as cursor:
            # A password must not reach the server log, even if the statement fails.
            cursor.execute("SET log_min_error_statement = panic; SET log_statement = 'none'")
            cursor.execute(statement, params)
    finally:
        connection.close()


class GrantSelect(TransactionTestCase):
    def test_the_granted_role_reads_every_model_and_writes_nothing(self):
        admin = required_env("RBDSYNC_TEST_DB_ADMIN")
        database = conninfo_from_database(connections[conf.get("DATABASE")].settings_dict)
        role = f"console_web_{os.getpid()}"
        password = secrets.token_hex(16)
        admin_execute(admin, f'CREATE ROLE "{role}" LOGIN PASSWORD %s', (password,))
        self.addCleanup(admin_execute, admin, f'DROP ROLE "{role}"')
        # The grants live in the test database: they go before the role.
        self.addCleanup(admin_execute, f"{admin} {dbname(database)}", f'DROP OWNED BY "{role}"')
        owner = re.search(r"user=(\S+)", database).group(1)
        subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-v", f"role={role}",
                        "-v", f"owner={owner}", "-d", f"{admin} {dbname(database)}",
                        "-f", str(GRANT_SQL)], check=True, capture_output=True)

        with tempfile.NamedTemporaryFile("w", prefix="pgpass.") as pgpass:
            port = re.search(r"port=(\d+)", database).group(1)
            pgpass.write(f"127.0.0.1:{port}:*:{role}:{password}\n")
            pgpass.flush()
            os.chmod(pgpass.name, 0o600)
            reader = psycopg2.connect(re.sub(r"user=\S+", f"user={role}", database),
                                      passfile=pgpass.name)
        reader.autocommit = True
        self.addCleanup(reader.close)
        with reader.cursor() as cursor:
            for model in apps.get_app_config("rbdsync_console").get_models():
                with self.subTest(model=model.__name__):
                    cursor.execute(f'SELECT * FROM "{model._meta.db_table}" LIMIT 0')
            with self.assertRaises(psycopg2.errors.InsufficientPrivilege):
                cursor.execute("DELETE FROM rbdsync.runs")


def dbname(conninfo):
    return re.search(r"dbname=\S+", conninfo).group(0)
