// Linked into every test binary: rbd-sync, librados and the rbd CLI all read CEPH_ARGS,
// so a developer's own (an --id, a -m, a --keyring) would change what a test connects
// as, or where. The tests give every Ceph option on the command lines they build.
#include <cstdlib>

namespace {

[[maybe_unused]] const bool k_ceph_args_cleared = ::unsetenv("CEPH_ARGS") == 0;

}  // namespace
