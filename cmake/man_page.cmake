# rbd-sync(1), made at build time from the prose in docs/rbd-sync.1.in and the option,
# command and exit-code tables (src/cli/option_table.cpp, src/common/exit_code.hpp), so
# that the man page says what --help says. rbd-sync-manpage is a build tool only.
add_executable(rbd-sync-manpage src/cli/man_page_main.cpp)
target_link_libraries(rbd-sync-manpage PRIVATE rbdsync_cli)

set(RBDSYNC_MAN ${CMAKE_BINARY_DIR}/rbd-sync.1)
set(RBDSYNC_MAN_GZ ${CMAKE_BINARY_DIR}/rbd-sync.1.gz)
add_custom_command(
  OUTPUT ${RBDSYNC_MAN}
  COMMAND rbd-sync-manpage ${CMAKE_SOURCE_DIR}/docs/rbd-sync.1.in ${RBDSYNC_MAN}
  DEPENDS rbd-sync-manpage ${CMAKE_SOURCE_DIR}/docs/rbd-sync.1.in
  COMMENT "Writing the man page rbd-sync.1"
  VERBATIM)
# Debian wants man pages compressed; -n leaves out the name and time, so the package
# is reproducible.
add_custom_command(
  OUTPUT ${RBDSYNC_MAN_GZ}
  COMMAND gzip -9n -c ${RBDSYNC_MAN} > ${RBDSYNC_MAN_GZ}
  DEPENDS ${RBDSYNC_MAN}
  VERBATIM)
add_custom_target(rbdsync_man ALL DEPENDS ${RBDSYNC_MAN} ${RBDSYNC_MAN_GZ})
install(FILES ${RBDSYNC_MAN_GZ} DESTINATION share/man/man1)
