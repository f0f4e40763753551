"""Between libpq conninfo strings (what rbd-sync's --db and psql take) and Django's
DATABASES entries, so that a project and its tests configure one database one way."""
import configparser
import os

from django.core.exceptions import ImproperlyConfigured
from psycopg2.extensions import parse_dsn

# libpq keywords Django's DATABASES entry has fields for; every other one goes to
# OPTIONS, which Django hands to psycopg2.connect.
FIELDS = {"dbname": "NAME", "user": "USER", "host": "HOST", "port": "PORT"}


def database_from_conninfo(conninfo, **extra):
    """A DATABASES entry for a libpq conninfo (key=value or URI), e.g.
    "service=console" or "host=db1 dbname=console user=console_web".

    A password is refused: libpq reads it from PGPASSFILE/.pgpass or the service file.
    Django 3.2 needs the database name; a service that names it (dbname=) is read from
    the service file as libpq would (PGSERVICEFILE, ~/.pg_service.conf, then
    PGSYSCONFDIR/pg_service.conf)."""
    try:
        params = parse_dsn(conninfo)
    except Exception:  # psycopg2.ProgrammingError; its text may quote a password
        raise ImproperlyConfigured("the database conninfo does not parse: libpq takes "
                                   "key=value pairs or a postgresql:// URI") from None
    if "password" in params:
        raise ImproperlyConfigured("the database conninfo carries a password: put it in "
                                   "PGPASSFILE/.pgpass or a pg_service.conf entry")
    if "dbname" not in params and "service" in params:
        name = service_dbname(params["service"])
        if name:
            params["dbname"] = name
    if not params.get("dbname"):
        raise ImproperlyConfigured(f"no database name (dbname=) in {conninfo!r} or its service")
    entry = {"ENGINE": "django.db.backends.postgresql", "OPTIONS": {}, **extra}
    for key, value in params.items():
        if key in FIELDS:
            entry[FIELDS[key]] = value
        else:
            entry["OPTIONS"][key] = value
    return entry


def service_dbname(service):
    """The dbname a pg_service.conf entry gives, or None."""
    candidates = [os.environ.get("PGSERVICEFILE"), os.path.expanduser("~/.pg_service.conf")]
    sysconf = os.environ.get("PGSYSCONFDIR", "/etc/postgresql-common")
    candidates.append(os.path.join(sysconf, "pg_service.conf"))
    for path in candidates:
        if not path or not os.path.isfile(path):
            continue
        parser = configparser.ConfigParser(interpolation=None)
        parser.read(path)
        if parser.has_section(service):  # libpq takes the first file that has it
            return parser[service].get("dbname")
    return None


def conninfo_from_database(entry):
    """The libpq conninfo of a DATABASES entry (as Django's connection holds it, e.g. the
    test database once the test runner made it), without its PASSWORD."""
    params = {key: entry.get(field) for key, field in FIELDS.items()}
    params.update(entry.get("OPTIONS") or {})
    return " ".join(f"{key}={quote(value)}" for key, value in params.items()
                    if value not in (None, "") and key != "isolation_level")


def quote(value):
    """A conninfo value: quoted with backslash escapes when it needs it."""
    value = str(value)
    if value and not any(c in value for c in " '\\=\t\n"):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
