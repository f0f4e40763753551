// libFuzzer harness: decode_header() and layout_damage() over an omap made from the
// input, then what the direct reader derives from a decoded header (object_count()).
//
// Input framing, repeated to the end: one tag byte; tag < 0x80 is a key of that many
// bytes that follow, tag >= 0x80 picks a real cls_rbd key from k_keys (so mutations
// reach the value decoders without having to spell the key); then the value's length
// (u16, little-endian) and the value. A later record replaces an earlier one's key.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "ceph/wire/header_decoder.hpp"
#include "ceph/wire/object_map.hpp"
#include "fuzz_input.hpp"

namespace {

const char* const k_keys[] = {
    "size",
    "order",
    "features",
    "op_features",
    "flags",
    "snap_limit",
    "stripe_unit",
    "stripe_count",
    "snap_seq",
    "data_pool_id",
    "object_prefix",
    "create_timestamp",
    "modify_timestamp",
    "access_timestamp",
    "snapshot_0000000000000004",
    "snapshot_0000000000000005",
    "parent",
    "snap_children_0000000000000004",
    "snap_children_000000000000000g",
    "metadata_conf_rbd_qos_iops_limit",
    "metadata_owner",
    "rbd_group_ref",
    "migration",
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using rbdsync::fuzz::keep;
  rbdsync::fuzz::FuzzInput in(data, size);
  std::map<std::string, std::string> omap;
  while (!in.empty()) {
    const auto tag = in.number<std::uint8_t>();
    std::string key =
        tag < 0x80 ? in.bytes(tag) : k_keys[(tag & 0x7fU) % (sizeof(k_keys) / sizeof(k_keys[0]))];
    const auto length = in.number<std::uint16_t>();
    omap.insert_or_assign(std::move(key), in.bytes(length));
  }

  const rbdsync::ceph::HeaderDecoding decoded = rbdsync::ceph::decode_header(omap);
  keep(decoded.fallback_reason.size() + decoded.damage.size());
  const auto layout_damage = rbdsync::ceph::layout_damage(omap);
  keep(layout_damage ? layout_damage->size() : 0);
  if (!decoded.value) {
    return 0;
  }
  const rbdsync::ceph::DecodedHeader& header = *decoded.value;
  keep(header.object_prefix.size() + header.config.size() + header.snapshots.size());
  for (const auto& snap : header.snapshots) {
    keep(snap.name.size() + snap.child_count);
  }
  for (const auto& [snap_id, children] : header.snap_children) {
    keep(snap_id + children.size());
  }
  if (header.parent) {
    keep(header.parent->image_id.size() + header.parent->pool_namespace.size());
  }
  // As the direct reader does: objects are 1 << order apart, order being one that
  // decode_header() accepted.
  const std::uint64_t object_size = std::uint64_t{1} << header.order;
  keep(rbdsync::ceph::object_count(header.size_bytes, object_size, header.stripe_unit,
                                   header.stripe_count));
  return 0;
}
