# Installation layout and the Debian package (`cpack -G DEB` in the build directory).
# The schedules are installed but not enabled: the cron.d job line is commented out and
# no systemd unit is enabled by the package.

install(TARGETS rbd-sync RUNTIME DESTINATION bin)
install(FILES ${RBDSYNC_MIGRATIONS} DESTINATION share/rbd-sync/sql)

install(FILES cron/rbd-sync.cron DESTINATION /etc/cron.d RENAME rbd-sync)
install(FILES cron/rbd-sync.logrotate DESTINATION /etc/logrotate.d RENAME rbd-sync)
install(FILES cron/rbd-sync.service cron/rbd-sync.timer DESTINATION /lib/systemd/system)
install(DIRECTORY DESTINATION /var/log/rbd-sync)
# The shared lock directory (root:rbd-sync, 2770), made at boot; packaging/postinst
# creates the group and applies it at installation.
install(FILES cron/rbd-sync.tmpfiles DESTINATION lib/tmpfiles.d RENAME rbd-sync.conf)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME rbd-sync)
set(CPACK_PACKAGE_VENDOR "rbd-sync maintainers")
set(CPACK_PACKAGE_CONTACT "rbd-sync maintainers <maintainers@rbd-sync.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "keep a PostgreSQL inventory of Ceph RBD images up to date")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "ceph-common, postgresql-client")
# Files under /etc are the admin's once installed.
file(WRITE ${CMAKE_BINARY_DIR}/debian/conffiles "/etc/cron.d/rbd-sync\n/etc/logrotate.d/rbd-sync\n")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_BINARY_DIR}/debian/conffiles
                                       ${CMAKE_SOURCE_DIR}/packaging/postinst)
# Maintainer scripts 0755 and control files 0644, whatever the checkout's modes.
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
