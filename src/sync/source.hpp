#pragma once

#include <optional>
#include <string>
#include <vector>

#include "inventory/inventory.hpp"

namespace rbdsync::sync {

/// Where an inventory is read from. The real one is ceph::CephSource; tests use a fake.
/// Every method reports failure by throwing rbdsync::Error.
class InventorySource {
 public:
  virtual ~InventorySource() = default;

  /// The fsid of the cluster being read.
  virtual std::string cluster_fsid() = 0;

  /// The pools to sync: those named, or, when `names` is empty, every pool with the
  /// "rbd" application enabled. An unknown name throws Error(ExitCode::config).
  virtual std::vector<inventory::Pool> list_pools(const std::vector<std::string>& names) = 0;

  /// The images of `pool`, in every namespace of it.
  virtual std::vector<inventory::ImageRef> list_images(const inventory::Pool& pool) = 0;

  /// Reads one listed image. Returns std::nullopt when it no longer exists (deleted
  /// between listing and reading, which is normal on a live cluster).
  virtual std::optional<inventory::Image> read_image(const inventory::Pool& pool,
                                                     const inventory::ImageRef& ref) = 0;
};

}  // namespace rbdsync::sync
