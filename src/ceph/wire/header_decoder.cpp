#include "ceph/wire/header_decoder.hpp"

#include "ceph/librbd_rules.hpp"
#include "ceph/wire/encoding.hpp"
#include "common/text.hpp"
#include "inventory/librbd_names.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include <rbd/features.h>

namespace rbdsync::ceph {

namespace {

// Object map states (include/rbd/object_map_types.h).
constexpr std::uint8_t k_object_nonexistent = 0;
constexpr std::uint8_t k_object_exists = 1;
constexpr std::uint8_t k_object_exists_clean = 3;
constexpr std::uint8_t k_lock_exclusive = 1;

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

/// The smallest ENCODE_START envelope: version, compat, length.
constexpr std::size_t k_envelope_bytes = 6;

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
    return HeaderDecoding::fall_back("unknown encoding of header key " + quoted(key));
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
      return HeaderDecoding::fall_back("migration");
    }
    return HeaderDecoding::fall_back("unknown header key " + quoted(key));
  }

  /// The header, once every key was taken.
  HeaderDecoding finish() {
    if (!m_have_size || !m_have_order || !m_have_features || !m_have_prefix) {
      return HeaderDecoding::fall_back("header lacks size, order, features or object_prefix");
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

/// entity_addr_t as encoded with the MSG_ADDR2 feature, printed as librbd's
/// list_lockers() prints it (entity_addr_t::get_legacy_str(): "ip:port/nonce").
std::optional<std::string> decode_address(Decoder& in) {
  if (in.number<std::uint8_t>() != 1) {
    return std::nullopt;  // the pre-Nautilus encoding
  }
  Decoder body = in.envelope(1);
  body.number<std::uint32_t>();  // type: legacy, msgr2, any
  const auto nonce = body.number<std::uint32_t>();
  const auto length = body.number<std::uint32_t>();
  const std::string address = body.raw(length);
  if (!body.ok() || length < 8) {
    return std::nullopt;
  }
  const auto family = static_cast<std::uint16_t>(static_cast<unsigned char>(address[0]) |
                                                 static_cast<unsigned char>(address[1]) << 8);
  if (family != 2) {  // AF_INET; IPv6 lockers go to librbd
    return std::nullopt;
  }
  const auto byte = [&address](std::size_t i) {
    return static_cast<unsigned>(static_cast<unsigned char>(address[i]));
  };
  const unsigned port = byte(2) << 8 | byte(3);
  return std::to_string(byte(4)) + "." + std::to_string(byte(5)) + "." + std::to_string(byte(6)) +
         "." + std::to_string(byte(7)) + ":" + std::to_string(port) + "/" + std::to_string(nonce);
}

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
  static constexpr char k_digits[] = "0123456789abcdef";
  std::string key = k_snapshot_prefix;
  for (int shift = 60; shift >= 0; shift -= 4) {
    key.push_back(k_digits[(snap_id >> shift) & 0xf]);
  }
  return key;
}

std::optional<std::string> decode_directory_name(const std::string& bytes) {
  Decoder in(bytes);
  std::string name = in.text();
  return in.at_end() ? std::optional<std::string>(std::move(name)) : std::nullopt;
}

std::optional<TrashSpecHead> decode_trash_spec(const std::string& bytes) {
  // TrashImageSpec: ENCODE_START(2, 1) { u8 source, name, deletion and deferment end
  // times, (v2) u8 state }.
  Decoder outer(bytes);
  Decoder in = outer.envelope(1);
  TrashSpecHead head;
  head.source = in.number<std::uint8_t>();
  head.name = in.text();
  if (!in.ok() || !outer.at_end()) {
    return std::nullopt;
  }
  return head;
}

std::optional<std::string> decode_trash_name(const std::string& bytes) {
  auto head = decode_trash_spec(bytes);
  return head ? std::optional<std::string>(std::move(head->name)) : std::nullopt;
}

std::optional<std::vector<std::string>> decode_format1_directory(const std::string& bytes) {
  std::vector<std::string> names;
  if (bytes.empty()) {
    return names;
  }
  Decoder in(bytes);
  in.skip(in.number<std::uint32_t>());
  // count() bounds the count by what the bytes left can hold (two u32 lengths an entry),
  // so a damaged count cannot make the vector reserve or loop beyond the input.
  const std::uint32_t count = in.count(2 * sizeof(std::uint32_t));
  for (std::uint32_t i = 0; i < count && in.ok(); ++i) {
    std::string name = in.text();
    in.skip(in.number<std::uint32_t>());
    names.push_back(std::move(name));
  }
  if (!in.at_end()) {
    return std::nullopt;
  }
  return names;
}

std::optional<GroupSpec> decode_group_spec(const std::string& bytes) {
  Decoder in(bytes);
  GroupSpec spec = decode_group(in);
  return in.at_end() ? std::optional<GroupSpec>(std::move(spec)) : std::nullopt;
}

std::string encode_dir_get_name_request(const std::string& id) {
  std::string request;
  for (int i = 0; i < 4; ++i) {
    request.push_back(static_cast<char>((id.size() >> (8 * i)) & 0xff));
  }
  return request + id;
}

std::string clone_v1_children_key(std::int64_t pool_id, const std::string& image_id,
                                  std::uint64_t snap_id) {
  // cls_rbd's parent_key(): pool id, image id, snapshot id, as encode() writes them.
  std::string key;
  const auto put = [&key](std::uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) {
      key.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
    }
  };
  put(static_cast<std::uint64_t>(pool_id), 8);
  put(image_id.size(), 4);
  key += image_id;
  put(snap_id, 8);
  return key;
}

std::optional<std::vector<std::string>> decode_child_ids(const std::string& bytes) {
  Decoder in(bytes);
  const auto count = in.count(sizeof(std::uint32_t));
  std::vector<std::string> ids;
  for (std::uint32_t i = 0; i < count && in.ok(); ++i) {
    ids.push_back(in.text());
  }
  if (!in.at_end()) {
    return std::nullopt;
  }
  return ids;
}

std::string encode_lock_info_request(const std::string& name) {
  // cls_lock_get_info_op: ENCODE_START(1, 1) { string name }.
  std::string body;
  const auto put32 = [](std::string& out, std::uint32_t value) {
    for (int i = 0; i < 4; ++i) {
      out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
    }
  };
  put32(body, static_cast<std::uint32_t>(name.size()));
  body += name;
  std::string out{'\x01', '\x01'};
  put32(out, static_cast<std::uint32_t>(body.size()));
  return out + body;
}

std::optional<LockInfo> decode_lock_info(const std::string& bytes) {
  Decoder outer(bytes);
  Decoder in = outer.envelope(1);
  const auto count = in.count(2 * k_envelope_bytes);
  LockInfo info;
  for (std::uint32_t i = 0; i < count && in.ok(); ++i) {
    Decoder id = in.envelope(1);
    const auto type = id.number<std::uint8_t>();
    const auto number = id.number<std::int64_t>();
    inventory::Locker locker;
    locker.client = inventory::entity_type_name(type) + "." + std::to_string(number);
    locker.cookie = id.text();
    Decoder details = in.envelope(1);
    details.number<std::uint64_t>();  // expiration
    auto address = decode_address(details);
    if (!in.ok() || !address) {
      return std::nullopt;
    }
    locker.address = std::move(*address);
    info.lockers.push_back(std::move(locker));
  }
  const auto type = in.number<std::uint8_t>();
  in.text();  // tag
  if (!outer.at_end()) {
    return std::nullopt;
  }
  info.exclusive = type == k_lock_exclusive;
  return info;
}

ObjectStates::ObjectStates(std::initializer_list<std::uint8_t> states) {
  resize(states.size(), 0);
  std::uint64_t at = 0;
  for (const std::uint8_t state : states) {
    set(at++, state);
  }
}

ObjectStates ObjectStates::from_packed(std::string packed, std::uint64_t count) {
  ObjectStates states;
  states.m_packed = std::move(packed);
  states.m_count = count;
  states.clear_tail();
  return states;
}

void ObjectStates::set(std::uint64_t at, std::uint8_t state) {
  auto& byte = reinterpret_cast<unsigned char&>(m_packed[at / 4]);
  byte = static_cast<unsigned char>((byte & ~(0x3U << shift(at))) | ((state & 0x3U) << shift(at)));
}

void ObjectStates::resize(std::uint64_t count, std::uint8_t state) {
  const std::uint64_t old_count = m_count;
  // Whole new bytes take the state four times over; the old last byte's free bits
  // are set one by one.
  const auto repeated = static_cast<char>((state & 0x3U) * 0x55U);
  m_packed.resize(count / 4 + (count % 4 != 0 ? 1 : 0), repeated);
  m_count = count;
  for (std::uint64_t at = old_count; at < count && at % 4 != 0; ++at) {
    set(at, state);
  }
  clear_tail();
}

void ObjectStates::clear_tail() {
  m_packed.resize(m_count / 4 + (m_count % 4 != 0 ? 1 : 0));
  if (m_count % 4 != 0) {
    auto& last = reinterpret_cast<unsigned char&>(m_packed.back());
    last = static_cast<unsigned char>(last & (0xFFU << (8 - 2 * (m_count % 4))));
  }
}

std::optional<ObjectStates> decode_object_map(const std::string& bytes) {
  // BitVector<2>::encode: a bufferlist holding ENCODE_START(1, 1) { u64 size }, the
  // packed data (4 objects a byte, the first in the high bits), a bufferlist footer.
  Decoder in(bytes);
  const std::string header_bytes = in.text();
  Decoder header(header_bytes);
  const auto size = header.envelope(1).number<std::uint64_t>();
  if (!header.at_end() || size / 4 > in.remaining()) {
    return std::nullopt;
  }
  std::string packed = in.raw(size / 4 + (size % 4 != 0 ? 1 : 0));
  in.text();  // footer: CRCs
  if (!in.at_end()) {
    return std::nullopt;
  }
  return ObjectStates::from_packed(std::move(packed), size);
}

std::optional<ObjectStates> decode_object_map_head(const std::string& bytes,
                                                   std::uint64_t objects) {
  Decoder in(bytes);
  const std::string header_bytes = in.text();
  Decoder header(header_bytes);
  const auto size = header.envelope(1).number<std::uint64_t>();
  const std::uint64_t kept = std::min(size, objects);
  const std::uint64_t packed_bytes = kept / 4 + (kept % 4 != 0 ? 1 : 0);
  if (!in.ok() || !header.at_end() || packed_bytes > in.remaining()) {
    return std::nullopt;
  }
  return ObjectStates::from_packed(in.raw(packed_bytes), kept);
}

std::uint64_t object_map_object_bytes(std::uint64_t objects) {
  // The header: a u32 length, then ENCODE_START's u8 version, u8 compat and u32 length
  // around a u64 size. The footer: a u32 length, then a u32 header CRC and a u32 count
  // of u32 data CRCs, one for each block of 4 KiB (BitVector's BLOCK_SIZE; a larger
  // page size only makes fewer). Each sum is far from overflowing: objects / 4 bytes.
  constexpr std::uint64_t k_header = 4 + 1 + 1 + 4 + 8;
  constexpr std::uint64_t k_block = 4096;
  const std::uint64_t data = objects / 4 + (objects % 4 != 0 ? 1 : 0);
  const std::uint64_t crcs = data / k_block + (data % k_block != 0 ? 1 : 0);
  return k_header + data + 4 + 4 + 4 + 4 * crcs;
}

namespace {

/// ceil(a / b), without the overflow of (a + b - 1) / b; b > 0.
std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

}  // namespace

std::optional<std::uint64_t> object_count(std::uint64_t size_bytes, std::uint64_t object_size,
                                          std::uint64_t stripe_unit, std::uint64_t stripe_count) {
  if (object_size == 0 || stripe_unit == 0 || stripe_count == 0) {
    return std::nullopt;
  }
  if (stripe_count == 1 || stripe_unit == object_size) {
    return ceil_div(size_bytes, object_size);
  }
  const auto period = checked_mul(object_size, stripe_count);
  const auto stripe = checked_mul(stripe_unit, stripe_count);
  if (!period || !stripe) {
    return std::nullopt;
  }
  const std::uint64_t periods = ceil_div(size_bytes, *period);
  const std::uint64_t remainder = size_bytes % *period;
  std::uint64_t missing = 0;
  if (remainder > 0 && remainder < *stripe) {
    missing = stripe_count - ceil_div(remainder, stripe_unit);
  }
  const auto objects = checked_mul(periods, stripe_count);
  if (!objects) {
    return std::nullopt;
  }
  return *objects - missing;
}

std::optional<std::uint64_t> object_map_bytes(const DecodedHeader& header,
                                              std::uint64_t size_bytes) {
  const std::optional<std::uint64_t> objects = object_count(
      size_bytes, std::uint64_t{1} << header.order, header.stripe_unit, header.stripe_count);
  if (!objects) {
    return std::nullopt;
  }
  return ceil_div(*objects, 4);
}

MapReadAhead snapshot_maps_read_ahead(const DecodedHeader& header, std::uint64_t budget_bytes) {
  MapReadAhead read_ahead;
  if ((header.features & RBD_FEATURE_FAST_DIFF) == 0) {
    return read_ahead;  // no map is read: the usage is unknown
  }
  for (const HeaderSnapshot& snap : header.snapshots) {
    const std::optional<std::uint64_t> map_bytes = object_map_bytes(header, snap.size_bytes);
    if (!map_bytes || *map_bytes > budget_bytes - read_ahead.bytes) {
      break;
    }
    read_ahead.bytes += *map_bytes;
    read_ahead.snapshot_ids.push_back(snap.id);
  }
  return read_ahead;
}

namespace {

/// What librbd's object_map::DiffRequest has found of one object so far (DIFF_STATE_*).
enum class DiffState : std::uint8_t { none, hole, updated };

/// One step of DiffRequest: the map `next` against the one before it, into `diff`.
/// Objects past the end of `previous` (the image grew, or the diff starts from nothing)
/// count as written when they exist.
void diff_step(const ObjectStates& previous, const ObjectStates& next, ObjectStates& diff) {
  const auto hole = static_cast<std::uint8_t>(DiffState::hole);
  const auto updated = static_cast<std::uint8_t>(DiffState::updated);
  const std::uint64_t overlap = std::min(previous.size(), next.size());
  for (std::uint64_t i = 0; i < overlap; ++i) {
    const std::uint8_t before = previous[i];
    const std::uint8_t now = next[i];
    if (now == k_object_nonexistent) {
      if (before != k_object_nonexistent) {
        diff.set(i, hole);
      }
    } else if (now == k_object_exists ||
               (before != now && !(before == k_object_exists && now == k_object_exists_clean))) {
      diff.set(i, updated);
    }
  }
  for (std::uint64_t i = overlap; i < next.size(); ++i) {
    diff.set(
        i, next[i] == k_object_nonexistent ? static_cast<std::uint8_t>(DiffState::none) : updated);
  }
}

}  // namespace

std::optional<std::uint64_t> fast_diff_used_bytes(const SizedObjectMap* from,
                                                  const std::vector<SizedObjectMap>& chain,
                                                  std::uint64_t object_size) {
  if (object_size == 0 || chain.empty()) {
    return std::nullopt;
  }
  std::vector<SizedObjectMap> maps;
  maps.reserve(chain.size() + 1);
  if (from != nullptr) {
    maps.push_back(*from);
  }
  maps.insert(maps.end(), chain.begin(), chain.end());
  // The diff's states are packed as the maps' are (DiffState fits in 2 bits).
  ObjectStates diff;
  ObjectStates previous;
  // From a snapshot, its map is only what the next is diffed against; from nothing,
  // the first map is diffed against an empty one, so all it holds is new.
  bool diff_this_map = from == nullptr;
  for (const SizedObjectMap& map : maps) {
    const std::uint64_t objects = ceil_div(map.size_bytes, object_size);
    if (map.states == nullptr || map.states->size() < objects) {
      return std::nullopt;  // librbd: "object map too small"
    }
    // As DiffRequest: each map cut to its snapshot's objects, then padded with
    // nonexistent objects to the largest size so far (a shrink removes objects).
    ObjectStates current = *map.states;
    current.resize(objects, k_object_nonexistent);
    diff.resize(std::max(diff.size(), objects), static_cast<std::uint8_t>(DiffState::none));
    current.resize(diff.size(), k_object_nonexistent);
    if (diff_this_map) {
      diff_step(previous, current, diff);
    }
    diff_this_map = true;
    previous = std::move(current);
  }
  // The sum never exceeds size_bytes: each object adds at most what is left of it.
  const std::uint64_t size_bytes = chain.back().size_bytes;
  std::uint64_t used = 0;
  for (std::uint64_t i = 0; i < ceil_div(size_bytes, object_size); ++i) {
    if (diff[i] == static_cast<std::uint8_t>(DiffState::updated)) {
      used += std::min(object_size, size_bytes - i * object_size);
    }
  }
  return used;
}

std::optional<std::uint64_t> fast_diff_used_bytes(const ObjectStates* from,
                                                  std::uint64_t from_size_bytes,
                                                  const ObjectStates& end, std::uint64_t size_bytes,
                                                  std::uint64_t object_size) {
  const SizedObjectMap start{from, from_size_bytes};
  return fast_diff_used_bytes(from != nullptr ? &start : nullptr, {{&end, size_bytes}},
                              object_size);
}

}  // namespace rbdsync::ceph
