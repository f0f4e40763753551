#include "ceph/wire/header_decoder.hpp"

#include "ceph/librbd_rules.hpp"
#include "ceph/wire/encoding.hpp"
#include "ceph/wire/object_map.hpp"
#include "common/text.hpp"
#include "inventory/librbd_names.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include <rbd/features.h>

namespace rbdsync::ceph {

namespace {

/// A header key in a message: omap keys are bytes, messages are one line of text.
std::string quoted(const std::string& key) {
  return "'" + display_text(key, Controls::escape) + "'";
}

bool starts_with(const std::string& text, const char* prefix) {
  return text.compare(0, std::strlen(prefix), prefix) == 0;
}

std::optional<std::uint64_t> u64(const std::string& bytes) {
  Decoder in(bytes);
  const auto value = in.number<std::uint64_t>();
  return in.at_end() ? std::optional<std::uint64_t>(value) : std::nullopt;
}

/// cls::rbd::MirrorSnapshotNamespace after its type: the fields librbd's promotion state
/// reads, then the copy progress, which the namespace's envelope would skip, read so
/// that a truncated namespace is caught.
MirrorSnapshot decode_mirror_namespace(Decoder& in) {
  MirrorSnapshot mirror;
  mirror.state = in.number<std::uint8_t>();
  mirror.complete = in.number<std::uint8_t>() != 0;
  const auto peers = in.count(sizeof(std::uint32_t));
  for (std::uint32_t i = 0; i < peers && in.ok(); ++i) {
    mirror.peer_uuids.push_back(in.text());
  }
  mirror.primary_mirror_uuid = in.text();
  in.number<std::uint64_t>();  // primary snapshot id
  in.number<std::uint64_t>();  // last copied object number
  const auto snap_seqs = in.count(2 * sizeof(std::uint64_t));
  in.skip(std::size_t{snap_seqs} * 2 * sizeof(std::uint64_t));
  return mirror;
}

/// Reads the body of a group or trash snapshot namespace (cls::rbd::GroupSnapshotNamespace:
/// group pool, group id, group snapshot id; TrashSnapshotNamespace: original name and
/// namespace type) only to find it whole: the OSD decodes it for every snapshot read and
/// fails them all when it cannot. The inventory records the type alone. A longer body of
/// the same version is left to the envelope (a newer version never gets here).
void check_namespace_body(Decoder& ns, std::uint32_t type) {
  if (type == k_group_snapshot) {
    ns.number<std::int64_t>();
    ns.text();
    ns.text();
  } else if (type == k_trash_snapshot) {
    ns.text();
    ns.number<std::uint32_t>();
  }
}

/// cls_rbd_snap. Nautilus to Tentacle (20.2) OSDs write version 8 with compat 8 (no
/// parent, no features), and the snapshot's parent overlap after child_count (an
/// optional<u64>), which the inventory has no use for: the envelope skips it. Other
/// versions fail `in` as unsupported: an older one has another layout, and a newer one
/// may carry fields the inventory should show, so its image goes to librbd, counted
/// under its reason, rather than losing them silently.
HeaderSnapshot decode_snapshot(Decoder& outer) {
  std::uint8_t version = 0;
  Decoder in = outer.envelope(8, &version);
  HeaderSnapshot snap;
  if (version != 8) {
    in.fail_unsupported();
    return snap;
  }
  snap.id = in.number<std::uint64_t>();
  snap.name = in.text();
  snap.size_bytes = in.number<std::uint64_t>();
  snap.protection_status = in.number<std::uint8_t>();
  snap.flags = in.number<std::uint64_t>();
  // cls::rbd::SnapshotNamespace: version 1 up to Tentacle 20.2 (checked on 20.2.4 for
  // user, group and mirror snapshots). Ceph's sources after it bump the version and add
  // group fields to mirror snapshots: a version above 1 is read by librbd, counted.
  std::uint8_t namespace_version = 0;
  Decoder ns = in.envelope(1, &namespace_version);
  if (namespace_version != 1) {
    ns.fail_unsupported();
    return snap;
  }
  snap.namespace_type = ns.number<std::uint32_t>();
  if (snap.namespace_type == k_mirror_snapshot) {
    snap.mirror = decode_mirror_namespace(ns);
  } else {
    check_namespace_body(ns, snap.namespace_type);
  }
  snap.timestamp = in.time();
  snap.child_count = in.number<std::uint32_t>();
  return snap;
}

/// cls_rbd_parent: version 1 (pre-Nautilus OSDs: no namespace, a plain overlap) or 2.
HeaderParent decode_parent(Decoder& outer) {
  std::uint8_t version = 0;
  Decoder in = outer.envelope(2, &version);
  HeaderParent parent;
  if (in.ok() && version < 1) {
    in.fail();
    return parent;
  }
  parent.pool_id = in.number<std::int64_t>();
  if (version >= 2) {
    parent.pool_namespace = in.text();
  }
  parent.image_id = in.text();
  parent.snap_id = in.number<std::uint64_t>();
  // Version 1 always holds an overlap; version 2 an optional one (a presence byte).
  const bool has_overlap = version == 1 || in.number<std::uint8_t>() != 0;
  if (has_overlap) {
    parent.head_overlap = in.number<std::uint64_t>();
  }
  // Versions 1 and 2 end here; a later one may add fields, which the envelope skips.
  if (version <= 2 && !in.at_end()) {
    in.fail();
  }
  return parent;
}

/// cls::rbd::GroupSpec: ENCODE_START(1, 1) { s64 pool id, string group id }; a later
/// version may add fields after these, which the envelope skips.
GroupSpec decode_group(Decoder& outer) {
  Decoder in = outer.envelope(1);
  GroupSpec spec;
  spec.pool_id = in.number<std::int64_t>();
  spec.group_id = in.text();
  return spec;
}

/// cls::rbd::ChildImageSpecs: a set of {pool id, image id, (v2) namespace} envelopes.
std::vector<ChildSpec> decode_child_specs(Decoder& in) {
  const auto count = in.count(k_envelope_bytes);
  std::vector<ChildSpec> children;
  for (std::uint32_t i = 0; i < count && in.ok(); ++i) {
    std::uint8_t version = 0;
    Decoder spec = in.envelope(2, &version);
    ChildSpec child;
    child.pool_id = spec.number<std::int64_t>();
    child.image_id = spec.text();
    if (version >= 2) {
      child.pool_namespace = spec.text();
    }
    children.push_back(std::move(child));
  }
  return children;
}

std::optional<std::uint64_t> hex_snap_id(const std::string& key, std::size_t prefix_length) {
  const std::string digits = key.substr(prefix_length);
  if (digits.size() != 16 || digits.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return std::nullopt;
  }
  return std::stoull(digits, nullptr, 16);
}

/// Decodes the value of header key `key` with `decode`, which reads a Decoder over it
/// to its end. nullopt when that worked; else what to do with the image: a newer
/// encoding goes to librbd, anything else is damage.
template <typename Decode>
std::optional<HeaderDecoding> decode_value(const std::string& key, const std::string& value,
                                           Decode&& decode) {
  Decoder in(value);
  decode(in);
  if (in.at_end()) {
    return std::nullopt;
  }
  if (in.unsupported()) {
    return HeaderDecoding::fall_back(Fallback::header_key_encoding_unknown, quoted(key));
  }
  return HeaderDecoding::damaged("header key " + quoted(key) + " is damaged (" +
                                 std::to_string(value.size()) + " bytes)");
}

constexpr int k_min_order = 12;  // 4 KiB objects
constexpr int k_max_order = 26;  // 64 MiB objects

/// The keys of format 2 header fields that are plain u64 values.
bool is_u64_key(const std::string& key) {
  return key == "size" || key == "features" || key == "op_features" || key == "flags" ||
         key == "snap_limit" || key == "stripe_unit" || key == "stripe_count" ||
         key == "snap_seq" || key == "data_pool_id";
}

/// What decode_header() has found so far.
class HeaderBuilder {
 public:
  /// Takes one key; the verdict when the image cannot be decoded here.
  std::optional<HeaderDecoding> take(const std::string& key, const std::string& value) {
    if (is_u64_key(key)) {
      return take_number(key, value);
    }
    if (key == "order") {
      return decode_value(key, value, [this](Decoder& in) {
        m_header.order = in.number<std::uint8_t>();
        m_have_order = true;
      });
    }
    if (key == "object_prefix") {
      return decode_value(key, value, [this](Decoder& in) {
        m_header.object_prefix = in.text();
        m_have_prefix = true;
      });
    }
    if (key == "create_timestamp" || key == "modify_timestamp" || key == "access_timestamp") {
      auto& field = key[0] == 'c'   ? m_header.create_timestamp
                    : key[0] == 'm' ? m_header.modify_timestamp
                                    : m_header.access_timestamp;
      return decode_value(key, value, [&field](Decoder& in) { field = in.time(); });
    }
    if (starts_with(key, k_snapshot_prefix)) {
      return take_snapshot(key, value);
    }
    if (starts_with(key, k_config_prefix)) {
      m_header.config[key.substr(std::strlen(k_config_prefix))] = value;
      return std::nullopt;
    }
    if (starts_with(key, k_snap_children_prefix)) {
      const auto snap_id = hex_snap_id(key, std::strlen(k_snap_children_prefix));
      if (!snap_id) {
        return HeaderDecoding::damaged("header key " + quoted(key) + " names no snapshot id");
      }
      return decode_value(key, value, [&](Decoder& in) {
        m_header.snap_children[*snap_id] = decode_child_specs(in);
      });
    }
    if (key == "parent") {
      return decode_value(key, value, [this](Decoder& in) { m_header.parent = decode_parent(in); });
    }
    if (key == "snap_seq" || starts_with(key, k_metadata_prefix)) {
      return std::nullopt;  // not in the inventory: the snapshot context, other metadata
    }
    if (key == k_group_key) {
      return decode_value(key, value, [this](Decoder& in) { m_header.group = decode_group(in); });
    }
    if (key == "migration") {
      return HeaderDecoding::fall_back(Fallback::migration);
    }
    return HeaderDecoding::fall_back(Fallback::header_key_unknown, quoted(key));
  }

  /// The header, once every key was taken.
  HeaderDecoding finish() {
    if (!m_have_size || !m_have_order || !m_have_features || !m_have_prefix) {
      return HeaderDecoding::fall_back(Fallback::header_incomplete);
    }
    // layout_damage() checked the order, stripe unit and stripe count: 0 means unset.
    if (m_header.stripe_unit == 0 || m_header.stripe_count == 0) {
      m_header.stripe_unit = std::uint64_t{1} << m_header.order;
      m_header.stripe_count = 1;
    }
    // Keys are unique and each snapshot key names its id, so ids are unique too.
    std::sort(m_header.snapshots.begin(), m_header.snapshots.end(),
              [](const auto& a, const auto& b) { return a.id < b.id; });
    return HeaderDecoding::of(std::move(m_header));
  }

 private:
  std::optional<HeaderDecoding> take_number(const std::string& key, const std::string& value) {
    const auto number = u64(value);
    if (!number) {
      return HeaderDecoding::damaged("header key " + quoted(key) + " is damaged (" +
                                     std::to_string(value.size()) + " bytes, not 8)");
    }
    if (key == "size") {
      m_header.size_bytes = *number;
      m_have_size = true;
    } else if (key == "features") {
      m_header.features = *number;
      m_have_features = true;
    } else if (key == "op_features") {
      m_header.op_features = *number;
    } else if (key == "flags") {
      m_header.flags = *number;
    } else if (key == "snap_limit") {
      m_header.snapshot_limit = *number;
    } else if (key == "stripe_unit") {
      m_header.stripe_unit = *number;
    } else if (key == "stripe_count") {
      m_header.stripe_count = *number;
    } else if (key == "data_pool_id") {
      m_header.data_pool_id = static_cast<std::int64_t>(*number);
    }
    return std::nullopt;
  }

  std::optional<HeaderDecoding> take_snapshot(const std::string& key, const std::string& value) {
    HeaderSnapshot snap;
    if (auto verdict =
            decode_value(key, value, [&snap](Decoder& in) { snap = decode_snapshot(in); })) {
      return verdict;
    }
    // cls_rbd finds a snapshot by its key: a record under another id's key would be
    // listed twice, or under the wrong id.
    if (key != snapshot_key(snap.id)) {
      return HeaderDecoding::damaged("snapshot record " + quoted(key) + " holds snapshot id " +
                                     std::to_string(snap.id));
    }
    m_header.snapshots.push_back(std::move(snap));
    return std::nullopt;
  }

  DecodedHeader m_header;
  bool m_have_size = false;
  bool m_have_order = false;
  bool m_have_features = false;
  bool m_have_prefix = false;
};

}  // namespace

HeaderDecoding decode_header(const std::map<std::string, std::string>& omap) {
  if (auto damage = layout_damage(omap)) {
    return HeaderDecoding::damaged(*damage);
  }
  HeaderBuilder builder;
  for (const auto& [key, value] : omap) {
    if (auto verdict = builder.take(key, value)) {
      return std::move(*verdict);
    }
  }
  return builder.finish();
}

const std::vector<std::string>& layout_keys() {
  static const std::vector<std::string> keys{"order", "size", "stripe_unit", "stripe_count"};
  return keys;
}

std::optional<std::string> layout_damage(const std::map<std::string, std::string>& omap) {
  const auto value = [&omap](const char* key) -> const std::string* {
    const auto found = omap.find(key);
    return found == omap.end() ? nullptr : &found->second;
  };
  const std::string* order_value = value("order");
  if (order_value == nullptr) {
    return std::nullopt;  // librbd refuses such a header by itself
  }
  if (order_value->size() != 1) {
    return "header key 'order' is damaged (" + std::to_string(order_value->size()) +
           " bytes, not 1)";
  }
  const int order = static_cast<unsigned char>((*order_value)[0]);
  if (order < k_min_order || order > k_max_order) {
    return "object order " + std::to_string(order) + " is out of range (" +
           std::to_string(k_min_order) + " to " + std::to_string(k_max_order) + ")";
  }
  const std::uint64_t object_size = std::uint64_t{1} << order;
  std::uint64_t numbers[3] = {0, 0, 0};
  const char* const number_keys[3] = {"size", "stripe_unit", "stripe_count"};
  for (int i = 0; i < 3; ++i) {
    if (const std::string* bytes = value(number_keys[i])) {
      const auto number = u64(*bytes);
      if (!number) {
        return "header key '" + std::string(number_keys[i]) + "' is damaged (" +
               std::to_string(bytes->size()) + " bytes, not 8)";
      }
      numbers[i] = *number;
    }
  }
  const auto [size, stripe_unit, stripe_count] = numbers;
  // librbd keeps the layout in a file_layout_t (32-bit fields) and divides by the
  // stripe unit, the objects per stripe and object size x stripe count: a header that
  // breaks one of those crashes every client that opens the image (SIGFPE).
  if (stripe_unit == 0 || stripe_count == 0) {
    return std::nullopt;  // unset: one stripe of whole objects
  }
  if (stripe_unit > object_size || object_size % stripe_unit != 0) {
    return "stripe unit " + std::to_string(stripe_unit) + " does not divide the object size " +
           std::to_string(object_size);
  }
  if (stripe_count > UINT32_MAX) {
    return "stripe count " + std::to_string(stripe_count) + " is out of range (at most " +
           std::to_string(UINT32_MAX) + ")";
  }
  if (!object_count(size, object_size, stripe_unit, stripe_count)) {
    return "size " + std::to_string(size) + " is out of range for its layout";
  }
  return std::nullopt;
}

std::optional<HeaderSnapshot> decode_snapshot_record(const std::string& bytes) {
  Decoder in(bytes);
  HeaderSnapshot snap = decode_snapshot(in);
  return in.at_end() ? std::optional<HeaderSnapshot>(std::move(snap)) : std::nullopt;
}

std::string snapshot_key(std::uint64_t snap_id) {
  return k_snapshot_prefix + hex_u64(snap_id);
}

std::optional<GroupSpec> decode_group_spec(const std::string& bytes) {
  Decoder in(bytes);
  GroupSpec spec = decode_group(in);
  return in.at_end() ? std::optional<GroupSpec>(std::move(spec)) : std::nullopt;
}

}  // namespace rbdsync::ceph
