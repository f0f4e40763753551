#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include <rados/librados.hpp>

#include "ceph/ceph_source.hpp"
#include "inventory/inventory.hpp"

namespace rbdsync::ceph {

/// Initialises `rados` as client `config.client_name` and connects it to the cluster,
/// configured as `rbd` is: the conf file, then CEPH_ARGS, then `config`'s settings, with
/// its timeouts on every mon and OSD operation. Throws Error with ExitCode::config (no
/// ceph.conf and no mon address, no keyring, a key this library cannot read),
/// ExitCode::no_permission (cephx refused) or ExitCode::unavailable (no mon answered
/// within the timeout).
void connect(librados::Rados& rados, const CephConfig& config);

/// One IoCtx per pool and namespace, opened on first use and kept for the sync. A
/// reader takes the context of its image's namespace and never switches the namespace
/// of one: an operation takes the namespace its IoCtx has when it is submitted, and
/// librbd's open copies it, so a switch under a reader with reads in flight would send
/// them to the wrong namespace. Destroy it before the Rados handle it was made with.
class IoContexts {
 public:
  explicit IoContexts(librados::Rados& rados) : m_rados(rados) {}
  IoContexts(const IoContexts&) = delete;
  IoContexts& operator=(const IoContexts&) = delete;
  IoContexts(IoContexts&&) = delete;
  IoContexts& operator=(IoContexts&&) = delete;
  ~IoContexts() = default;

  /// Pool `pool_id`'s context in namespace `pool_namespace`; nullptr when the pool cannot
  /// be opened (a pool deleted since it was listed: open_error() says why).
  librados::IoCtx* find(std::int64_t pool_id, const std::string& pool_namespace);

  /// The negative errno of opening pool `pool_id`; 0 when it opened or was not tried.
  int open_error(std::int64_t pool_id) const;

  /// find() for a pool of the inventory, which must open: throws Error as
  /// throw_ceph_error() does when it cannot.
  librados::IoCtx& at(const inventory::Pool& pool, const std::string& pool_namespace);

 private:
  librados::Rados& m_rados;
  std::map<std::pair<std::int64_t, std::string>, librados::IoCtx> m_contexts;
  std::map<std::int64_t, int> m_open_errors;
};

}  // namespace rbdsync::ceph
