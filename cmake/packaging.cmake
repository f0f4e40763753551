# Installation layout, used by the Debian package (debian/, built by scripts/build-deb.sh:
# dh's cmake build system runs `make install` into the package tree). Nothing is
# enabled by installing: the timer is not enabled and the cron job reads
# RBDSYNC_CRON=no from /etc/default/rbd-sync until an admin says otherwise.

if(RBDSYNC_TEST_HOOKS)
  install(CODE "message(FATAL_ERROR \"this build has the test-only fault hooks \
(RBDSYNC_TEST_HOOKS, on with RBDSYNC_TESTS): configure another build directory with \
-DRBDSYNC_TESTS=OFF to install\")")
endif()
install(TARGETS rbd-sync RUNTIME DESTINATION bin)
# Private to rbd-sync: no SONAME, nothing links it; the front dlopens it by this path.
install(TARGETS rbdsync_core LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/rbd-sync)
install(FILES ${RBDSYNC_MIGRATIONS} DESTINATION share/rbd-sync/sql)
# The roles docs/install.md creates: the schema owner, the writer, the console's reader.
install(FILES sql/roles.sql DESTINATION share/rbd-sync)

install(FILES cron/rbd-sync.cron DESTINATION /etc/cron.d RENAME rbd-sync)
install(PROGRAMS cron/rbd-sync-cron-job DESTINATION libexec/rbd-sync RENAME cron-job)
install(FILES cron/rbd-sync.default DESTINATION /etc/default RENAME rbd-sync)
install(FILES cron/rbd-sync.logrotate DESTINATION /etc/logrotate.d RENAME rbd-sync)
# Where this release's systemd wants units: /lib/systemd/system on Debian 12,
# /usr/lib/systemd/system from 13 (merged /usr; lintian's aliased-location otherwise).
# systemd.pc is in systemd on 12 and in systemd-dev from 13 (debian/control).
pkg_get_variable(RBDSYNC_SYSTEMD_UNIT_DIR systemd systemdsystemunitdir)
if(NOT RBDSYNC_SYSTEMD_UNIT_DIR)
  set(RBDSYNC_SYSTEMD_UNIT_DIR /lib/systemd/system)
endif()
# The sandbox every unit that runs a sync shares, written once.
file(READ cron/rbd-sync-sandbox.inc RBDSYNC_SANDBOX)
string(STRIP "${RBDSYNC_SANDBOX}" RBDSYNC_SANDBOX)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS cron/rbd-sync-sandbox.inc)
# One source for the units of the default cluster and the template of any other
# (rbd-sync@NAME: --cluster NAME, settings from /etc/default/rbd-sync and then
# /etc/default/rbd-sync@NAME): the sandboxing is written once.
set(RBDSYNC_UNIT_NOTE "Made by cmake/packaging.cmake from cron/: the unit of the cluster ceph")
set(RBDSYNC_UNIT_OF_CLUSTER "")
set(RBDSYNC_UNIT_ENVIRONMENT "")
set(RBDSYNC_UNIT_CLUSTER "")
set(RBDSYNC_TIMER_ALTERNATIVE " (alternative to /etc/cron.d/rbd-sync)")
configure_file(cron/rbd-sync.service.in units/rbd-sync.service @ONLY)
configure_file(cron/rbd-sync.timer.in units/rbd-sync.timer @ONLY)
set(RBDSYNC_UNIT_NOTE
    "Made by cmake/packaging.cmake from cron/: the template of any other, rbd-sync@NAME")
set(RBDSYNC_UNIT_OF_CLUSTER " of Ceph cluster %i")
set(RBDSYNC_UNIT_ENVIRONMENT "\nEnvironmentFile=-/etc/default/rbd-sync@%i")
set(RBDSYNC_UNIT_CLUSTER " --cluster %i")
set(RBDSYNC_TIMER_ALTERNATIVE "")
configure_file(cron/rbd-sync.service.in units/rbd-sync@.service @ONLY)
configure_file(cron/rbd-sync.timer.in units/rbd-sync@.timer @ONLY)
# "Sync now" for a web tier without secrets: a socket the group rbd-sync-web may connect
# to, and one instance of the template per connection, running as rbd-sync.
configure_file(cron/rbd-sync-trigger@.service.in units/rbd-sync-trigger@.service @ONLY)
configure_file(cron/rbd-sync-trigger.socket units/rbd-sync-trigger.socket COPYONLY)
install(FILES ${CMAKE_BINARY_DIR}/units/rbd-sync.service ${CMAKE_BINARY_DIR}/units/rbd-sync.timer
              ${CMAKE_BINARY_DIR}/units/rbd-sync@.service ${CMAKE_BINARY_DIR}/units/rbd-sync@.timer
              ${CMAKE_BINARY_DIR}/units/rbd-sync-trigger.socket
              ${CMAKE_BINARY_DIR}/units/rbd-sync-trigger@.service
        DESTINATION ${RBDSYNC_SYSTEMD_UNIT_DIR})
# The shared lock directory (root:rbd-sync, 3770), made at boot; the package's postinst
# creates the group and applies it at installation.
install(FILES cron/rbd-sync.tmpfiles DESTINATION lib/tmpfiles.d RENAME rbd-sync.conf)
