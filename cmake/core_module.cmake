# The front/core split (docs/architecture.md, front/core_abi.hpp): the `rbd-sync`
# executable links neither Ceph nor PostgreSQL; it dlopens librbdsync-core.so, installed
# privately (no SONAME) into ${CMAKE_INSTALL_LIBDIR}/rbd-sync, once the guard is held.
include(GNUInstallDirs)
set(RBDSYNC_CORE_PATH ${CMAKE_INSTALL_FULL_LIBDIR}/rbd-sync/librbdsync-core.so)

# The files whose types cross the boundary. Their hash, with the compiler's, is the ABI
# both sides must share: a front and a core of different builds refuse each other
# instead of misreading a struct. Editing one re-runs the configuration.
set(RBDSYNC_CORE_BOUNDARY
    src/front/core_abi.hpp src/front/commands.hpp src/cli/options.hpp src/common/error.hpp
    src/common/exit_code.hpp src/common/interrupts.hpp src/common/interrupts.cpp
    src/lock/file_lock.hpp src/lock/lock_path.hpp src/common/fd.hpp)
# With the flags that change the standard library's layout (a sanitizer build's front
# must not take a plain build's core).
set(_rbdsync_abi_text
    "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION} ${CMAKE_CXX_FLAGS} sanitize=${RBDSYNC_SANITIZE}")
foreach(_file IN LISTS RBDSYNC_CORE_BOUNDARY)
  file(READ ${CMAKE_SOURCE_DIR}/${_file} _text)
  string(APPEND _rbdsync_abi_text "${_text}")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${_file})
endforeach()
string(SHA256 _rbdsync_abi_hash "${_rbdsync_abi_text}")
string(SUBSTRING ${_rbdsync_abi_hash} 0 16 RBDSYNC_CORE_ABI_HASH)
