#include "ceph/wire/migration_spec.hpp"

#include <cstdint>
#include <cstring>

#include "ceph/wire/encoding.hpp"
#include "inventory/librbd_names.hpp"

namespace rbdsync::ceph {

namespace {

// cls::rbd::MigrationHeaderType (cls/rbd/cls_rbd_types.h).
constexpr std::uint8_t k_header_source = 1;
constexpr std::uint8_t k_header_destination = 2;

}  // namespace

std::optional<inventory::Migration> decode_migration_spec(const std::string& bytes,
                                                          const MigrationSelf& self) {
  Decoder outer(bytes);
  Decoder in = outer.envelope(3);
  const auto header_type = in.number<std::uint8_t>();
  MigrationSelf other;
  other.pool_id = in.number<std::int64_t>();
  other.pool_namespace = in.text();
  other.image_name = in.text();
  other.image_id = in.text();
  // snap_seqs is a map<uint64, uint64>: 16 bytes an entry, not needed here.
  const auto snap_seqs = in.count(16);
  in.skip(static_cast<std::size_t>(snap_seqs) * 16);
  in.number<std::uint64_t>();  // overlap
  in.number<std::uint8_t>();   // flatten
  in.number<std::uint8_t>();   // mirroring
  const auto state = in.number<std::uint8_t>();
  inventory::Migration migration;
  migration.state_description = in.text();
  // Later versions add fields (mirror image mode, source spec) that the envelope skips.
  if (!outer.at_end()) {
    return std::nullopt;
  }
  migration.state = inventory::migration_state_name(state);

  const MigrationSelf* source = nullptr;
  const MigrationSelf* destination = nullptr;
  if (header_type == k_header_destination) {
    source = &other;
    destination = &self;
  } else if (header_type == k_header_source) {
    source = &self;
    destination = &other;
  } else {
    return std::nullopt;
  }
  migration.source_pool_id = source->pool_id;
  migration.source_namespace = source->pool_namespace;
  migration.source_image_name = source->image_name;
  migration.source_image_id = source->image_id;
  migration.destination_pool_id = destination->pool_id;
  migration.destination_namespace = destination->pool_namespace;
  migration.destination_image_name = destination->image_name;
  migration.destination_image_id = destination->image_id;
  return migration;
}

}  // namespace rbdsync::ceph
