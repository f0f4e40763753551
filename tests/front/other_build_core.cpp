// A core module from another build of rbd-sync, as the front meets one after a partial
// upgrade (a new front, an old librbdsync-core.so): its entry point refuses the front's
// ABI string, as core/core_entry.cpp refuses any string but its own. Used by
// tests/front/front_without_core.sh.
#include "front/core_abi.hpp"

extern "C" __attribute__((visibility("default"))) int rbdsync_core_main(
    const rbdsync::front::CoreCall* /*call*/) {
  return rbdsync::front::k_core_abi_mismatch;
}
