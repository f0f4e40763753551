#pragma once

/// What a least-privilege client may not read. Ceph's usual per-service caps
/// (`osd 'profile rbd pool=volumes'`, `osd 'profile rbd-read-only pool=P'`) cover the
/// client's own pools; a few facts about an image live in other pools: the names of a
/// clone's parent, the clones of a snapshot, the name of an image's group, the data
/// objects of an image with a separate data pool. Reading those gets EPERM (the OSD
/// refuses the op) where a client with caps on every pool gets an answer. rbd-sync stores
/// such a value as unknown with one of the reasons below (all starting with
/// inventory::k_not_permitted), and the run goes on; an EPERM anywhere else still means
/// the client's access to the cluster or to a pool it syncs is refused (exit 77).

#include <string>

namespace rbdsync::ceph {

/// EPERM (what an OSD answers to an op the caps do not allow) or EACCES (what a mon
/// answers to a command they do not allow); positive errno values.
bool is_permission_errno(int error_number);

/// The facts that live in a pool this client may not read.
enum class NotPermitted {
  /// Parent::unknown_reason: the clone's parent lives in a pool this client cannot read.
  parent,
  /// Snapshot::children_unknown_reason: list_children3() looks for clones in every pool
  /// (clone v1: each pool's `rbd_children`; both: the directory of each child's pool),
  /// and this client cannot read one of them.
  children,
  /// GroupMembership::unknown_reason: the group lives in a pool this client cannot read.
  group,
  /// Usage::unknown_reason: computing usage object by object (--exact-usage) reads the
  /// image's data pool, which this client cannot read.
  data_pool,
};

/// The unknown reason stored for `what`.
const std::string& not_permitted_reason(NotPermitted what);

}  // namespace rbdsync::ceph
