-- The console's own read-only role: SELECT on schema rbdsync, nothing else.
--
--   psql -d 'host=db1 dbname=console user=postgres' -v role=rbdsync_console \
--        -v owner=rbdsync -f examples/console/readonly-role.sql
--
-- Run it as a superuser (or a role with CREATEROLE that owns the schema), after
-- `rbd-sync migrate`, in the inventory's database; :owner is the role rbd-sync
-- migrates as. Idempotent. It sets no password: give one with psql's \password ROLE
-- (it never shows in the command line or the server log) and put it in the console's
-- .pgpass or pg_service.conf.

SELECT format('CREATE ROLE %I LOGIN', :'role')
WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'role') \gexec

-- Even a mistaken GRANT elsewhere cannot make its sessions write.
ALTER ROLE :"role" SET default_transaction_read_only = on;

SELECT format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), :'role') \gexec
GRANT USAGE ON SCHEMA rbdsync TO :"role";
GRANT SELECT ON ALL TABLES IN SCHEMA rbdsync TO :"role";
-- Tables that later migrations add (they run as :owner) are readable too.
ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA rbdsync GRANT SELECT ON TABLES TO :"role";
