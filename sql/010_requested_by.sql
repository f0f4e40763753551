-- Who asked for a run (issue #35). See docs/schema.md, runs.
--
-- requested_by is what the run's --requested-by said: the console sends the name of its
-- signed-in user who pressed "Sync now" (through the trigger socket or, in development,
-- on the command line). NULL when nobody said (the schedule, an admin by hand). rbd-sync
-- takes only one printable line of at most 256 bytes; the check keeps any other writer of
-- the table to a length the page can show.
ALTER TABLE rbdsync.runs ADD COLUMN requested_by text
    CHECK (octet_length(requested_by) BETWEEN 1 AND 256);
