# The module graph as CMake declares it, written for the include check
# (scripts/check-module-includes.py, CTest `module_includes`): a module may include only
# what its target links, so that the dependency directions of docs/architecture.md are
# enforced by the build files that already state them, not by a second list.
#
# One line per target with sources under src/:
#   target <TAB> sources (;-list) <TAB> linked targets (;-list) <TAB> what those pass on
# and one line per linked imported or interface target with what it passes on, so the
# check can follow links transitively. Included after every target is defined.
get_property(_rbdsync_targets DIRECTORY ${CMAKE_SOURCE_DIR} PROPERTY BUILDSYSTEM_TARGETS)
set(_rbdsync_graph "")
set(_rbdsync_seen "")
set(_rbdsync_queue "")
foreach(_t IN LISTS _rbdsync_targets)
  get_target_property(_type ${_t} TYPE)
  if(_type STREQUAL "INTERFACE_LIBRARY")
    get_target_property(_sources ${_t} RBDSYNC_HEADERS)
  else()
    get_target_property(_sources ${_t} SOURCES)
  endif()
  if(NOT _sources)
    continue()
  endif()
  list(FILTER _sources INCLUDE REGEX "^(${CMAKE_SOURCE_DIR}/)?src/")
  if(NOT _sources)
    continue()
  endif()
  list(TRANSFORM _sources REPLACE "^${CMAKE_SOURCE_DIR}/" "")
  if(_type STREQUAL "INTERFACE_LIBRARY")
    # An interface library's headers use what it passes on.
    get_target_property(_links ${_t} INTERFACE_LINK_LIBRARIES)
  else()
    get_target_property(_links ${_t} LINK_LIBRARIES)
  endif()
  get_target_property(_passes ${_t} INTERFACE_LINK_LIBRARIES)
  foreach(_v _links _passes)
    if(NOT ${_v})
      set(${_v} "")
    endif()
  endforeach()
  list(APPEND _rbdsync_queue ${_links} ${_passes})
  list(APPEND _rbdsync_seen ${_t})
  string(APPEND _rbdsync_graph "${_t}\t${_sources}\t${_links}\t${_passes}\n")
endforeach()
# Imported and interface targets reached by links: what each passes on.
while(_rbdsync_queue)
  list(POP_FRONT _rbdsync_queue _t)
  if(_t IN_LIST _rbdsync_seen OR NOT TARGET ${_t})
    continue()
  endif()
  list(APPEND _rbdsync_seen ${_t})
  get_target_property(_passes ${_t} INTERFACE_LINK_LIBRARIES)
  if(NOT _passes)
    set(_passes "")
  endif()
  list(APPEND _rbdsync_queue ${_passes})
  string(APPEND _rbdsync_graph "${_t}\t\t\t${_passes}\n")
endwhile()
file(WRITE ${CMAKE_BINARY_DIR}/generated/module_graph.tsv "${_rbdsync_graph}")
