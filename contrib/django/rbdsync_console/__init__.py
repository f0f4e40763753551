"""rbdsync_console: the block-storage page of a Django storage console, over the
PostgreSQL inventory that rbd-sync writes. See contrib/django/README.md."""
