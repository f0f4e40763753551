-- rbd-sync's PostgreSQL roles, in the inventory's database (docs/install.md):
--
--   :owner   owns schema rbdsync and runs `rbd-sync migrate` (its tables, their changes)
--   :writer  what `rbd-sync run` connects as: reads and writes the rows, makes its
--            temporary staging tables, changes no table and grants nothing
--   :reader  the console's: reads the inventory, nothing else
--
--   psql -h DB_HOST -U postgres -d DB_NAME -v owner=rbdsync_owner -v writer=rbdsync \
--        -v reader=console_web -f /usr/share/rbd-sync/roles.sql
--
-- Run it as a superuser (or a role with CREATEROLE that owns the database), before the
-- first `rbd-sync migrate`. Idempotent: roles that exist keep their attributes and
-- passwords; what is granted is granted again. It sets no password: give each role its
-- own with psql's \password, which sends only a SCRAM verifier (never the password, so
-- it is in no log and on no command line).
\set ON_ERROR_STOP on

SELECT format('CREATE ROLE %I LOGIN', role) FROM (VALUES (:'owner'), (:'writer'), (:'reader'))
    AS wanted (role)
    WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = role) \gexec

-- The schema is the owner's from the start: `migrate` then needs no CREATE on the database.
SELECT format('CREATE SCHEMA IF NOT EXISTS rbdsync AUTHORIZATION %I', :'owner') \gexec
SELECT format('ALTER SCHEMA rbdsync OWNER TO %I', :'owner') \gexec
-- A database migrated before these roles (by the one role rbd-sync had): its tables and
-- views become the owner's too, or the writer could still change them and the owner
-- could not migrate them. Identity sequences follow their tables.
SELECT format('ALTER %s rbdsync.%I OWNER TO %I',
              CASE c.relkind WHEN 'v' THEN 'VIEW' ELSE 'TABLE' END, c.relname, :'owner')
    FROM pg_catalog.pg_class AS c
    JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
    WHERE n.nspname = 'rbdsync' AND c.relkind IN ('r', 'p', 'v')
      AND c.relowner <> (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = :'owner') \gexec

SELECT format('GRANT CONNECT ON DATABASE %I TO %I, %I, %I', current_database(), :'owner',
              :'writer', :'reader') \gexec
-- A sync stages its rows in temporary tables of its own transaction.
SELECT format('GRANT TEMPORARY ON DATABASE %I TO %I', current_database(), :'writer') \gexec
GRANT USAGE ON SCHEMA rbdsync TO :"writer", :"reader";

-- What exists now (a database migrated before these roles), and what migrations add.
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA rbdsync TO :"writer";
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA rbdsync TO :"writer";
GRANT SELECT ON ALL TABLES IN SCHEMA rbdsync TO :"reader";
ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA rbdsync
    GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO :"writer";
ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA rbdsync
    GRANT USAGE, SELECT ON SEQUENCES TO :"writer";
ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA rbdsync
    GRANT SELECT ON TABLES TO :"reader";
-- A sync ANALYZEs the tables it filled (a first sync's plans need the statistics); from
-- PostgreSQL 17 a role other than the owner may, with MAINTAIN. Before 17 only the owner
-- may, and the writer's ANALYZE is skipped with a warning.
SELECT pg_catalog.current_setting('server_version_num')::int >= 170000 AS has_maintain \gset
\if :has_maintain
GRANT MAINTAIN ON ALL TABLES IN SCHEMA rbdsync TO :"writer";
ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA rbdsync
    GRANT MAINTAIN ON TABLES TO :"writer";
\endif
-- The console's role reads and never writes, whatever it is later granted.
ALTER ROLE :"reader" SET default_transaction_read_only = on;
