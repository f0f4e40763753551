#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "inventory/inventory.hpp"
#include "sync/source.hpp"

namespace rbdsync::ceph {

/// How to reach the cluster; the same knobs the `rbd` CLI has.
struct CephConfig {
  std::string conf_path;     ///< empty: $CEPH_CONF, then Ceph's default search path
  std::string client_name;   ///< full name, e.g. "client.admin"
  std::string keyring_path;  ///< empty: the `keyring` setting of ceph.conf
  int timeout_seconds = 30;  ///< mount, mon and OSD operation timeout
};

/// Reads the RBD inventory through librados/librbd. Connects in the constructor and
/// disconnects in the destructor. The librados types stay inside the .cpp file.
class CephSource : public sync::InventorySource {
 public:
  /// Connects to the cluster. Throws Error with ExitCode::config (no ceph.conf, no
  /// keyring), ExitCode::no_permission (cephx refused) or ExitCode::unavailable
  /// (no mon answered within the timeout).
  explicit CephSource(const CephConfig& config);
  ~CephSource() override;
  CephSource(const CephSource&) = delete;
  CephSource& operator=(const CephSource&) = delete;

  std::string cluster_fsid() override;
  std::vector<inventory::Pool> list_pools(const std::vector<std::string>& names) override;
  std::vector<inventory::ImageRef> list_images(const inventory::Pool& pool) override;
  std::optional<inventory::Image> read_image(const inventory::Pool& pool,
                                             const inventory::ImageRef& ref) override;

 private:
  struct Cluster;
  std::unique_ptr<Cluster> m_cluster;
};

}  // namespace rbdsync::ceph
