-- Lets the console's database role read the inventory: USAGE on schema rbdsync and
-- SELECT on its tables and views, also those later migrations add. Nothing else.
--
--   psql -d 'host=db1 dbname=console user=postgres' -v role=console_web \
--        -v owner=rbdsync -f contrib/django/grant-select.sql
--
-- Run it as a superuser (or as :owner), after `rbd-sync migrate`, in the inventory's
-- database; :role is the role Django connects as (it must exist), :owner the role
-- rbd-sync migrates as. Idempotent. A role that should read nothing but the inventory
-- (a separate RBDSYNC_CONSOLE["DATABASE"] alias) may also get
--   ALTER ROLE :"role" SET default_transaction_read_only = on;

SELECT format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), :'role') \gexec
GRANT USAGE ON SCHEMA rbdsync TO :"role";
GRANT SELECT ON ALL TABLES IN SCHEMA rbdsync TO :"role";
-- Tables and views that later migrations add (they run as :owner) are readable too.
ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA rbdsync GRANT SELECT ON TABLES TO :"role";
