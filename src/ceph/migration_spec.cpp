#include "ceph/migration_spec.hpp"

#include <cstdint>
#include <cstring>

namespace rbdsync::ceph {

namespace {

// cls::rbd::MigrationHeaderType (cls/rbd/cls_rbd_types.h).
constexpr std::uint8_t k_header_source = 1;
constexpr std::uint8_t k_header_destination = 2;

/// Reads Ceph's little-endian encoding; every read fails once the bytes run out.
class Decoder {
 public:
  explicit Decoder(const std::string& bytes) : m_bytes(bytes) {}

  template <typename T>
  bool number(T& value) {
    if (m_bytes.size() - m_at < sizeof(T)) {
      return false;
    }
    std::uint64_t result = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      result |= static_cast<std::uint64_t>(static_cast<unsigned char>(m_bytes[m_at + i]))
                << (8 * i);
    }
    m_at += sizeof(T);
    value = static_cast<T>(result);
    return true;
  }

  bool text(std::string& value) {
    std::uint32_t length = 0;
    if (!number(length) || m_bytes.size() - m_at < length) {
      return false;
    }
    value = m_bytes.substr(m_at, length);
    m_at += length;
    return true;
  }

  bool skip(std::size_t count) {
    if (m_bytes.size() - m_at < count) {
      return false;
    }
    m_at += count;
    return true;
  }

 private:
  const std::string& m_bytes;
  std::size_t m_at = 0;
};

// The words `rbd status` prints for cls::rbd::MigrationState.
std::string state_name(std::uint8_t state) {
  switch (state) {
    case 0:
      return "error";
    case 1:
      return "preparing";
    case 2:
      return "prepared";
    case 3:
      return "executing";
    case 4:
      return "executed";
    case 5:
      return "aborting";
    default:
      return "unknown";
  }
}

}  // namespace

std::optional<inventory::Migration> decode_migration_spec(const std::string& bytes,
                                                          const MigrationSelf& self) {
  Decoder in(bytes);
  std::uint8_t version = 0;
  std::uint8_t compat = 0;
  std::uint32_t length = 0;
  if (!in.number(version) || !in.number(compat) || !in.number(length) || compat > 3) {
    return std::nullopt;
  }
  std::uint8_t header_type = 0;
  MigrationSelf other;
  std::uint32_t snap_seqs = 0;
  std::uint64_t overlap = 0;
  std::uint8_t flatten = 0;
  std::uint8_t mirroring = 0;
  std::uint8_t state = 0;
  inventory::Migration migration;
  // snap_seqs is a map<uint64, uint64>: 16 bytes an entry, not needed here.
  if (!in.number(header_type) || !in.number(other.pool_id) || !in.text(other.pool_namespace) ||
      !in.text(other.image_name) || !in.text(other.image_id) || !in.number(snap_seqs) ||
      !in.skip(static_cast<std::size_t>(snap_seqs) * 16) || !in.number(overlap) ||
      !in.number(flatten) || !in.number(mirroring) || !in.number(state) ||
      !in.text(migration.state_description)) {
    return std::nullopt;
  }
  migration.state = state_name(state);

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
