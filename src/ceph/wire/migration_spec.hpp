#pragma once

#include <optional>
#include <string>

#include "inventory/inventory.hpp"

namespace rbdsync::ceph {

/// The end of a migration that an image header describes.
struct MigrationSelf {
  std::int64_t pool_id = 0;
  std::string pool_namespace;
  std::string image_name;
  std::string image_id;
};

/// Decodes the "migration" omap value of an image header (cls::rbd::MigrationSpec, Ceph
/// encoding versions 1 to 3) into both ends of the migration, `self` being the image
/// whose header it is. Returns nullopt when the bytes are not such a value.
///
/// librbd's own RBD::migration_status() opens the image read-write (a watch), which a
/// client with 'osd profile rbd-read-only' may not do; the header's value is plain data.
std::optional<inventory::Migration> decode_migration_spec(const std::string& bytes,
                                                          const MigrationSelf& self);

}  // namespace rbdsync::ceph
