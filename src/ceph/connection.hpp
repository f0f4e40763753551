#pragma once

#include <rados/librados.hpp>

#include "ceph/ceph_source.hpp"

namespace rbdsync::ceph {

/// Initialises `rados` as client `config.client_name` and connects it to the cluster,
/// configured as `rbd` is: the conf file, then CEPH_ARGS, then `config`'s settings, with
/// its timeouts on every mon and OSD operation. Throws Error with ExitCode::config (no
/// ceph.conf and no mon address, no keyring, a key this library cannot read),
/// ExitCode::no_permission (cephx refused) or ExitCode::unavailable (no mon answered
/// within the timeout).
void connect(librados::Rados& rados, const CephConfig& config);

}  // namespace rbdsync::ceph
