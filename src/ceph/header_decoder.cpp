#include "ceph/header_decoder.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace rbdsync::ceph {

namespace {

// cls_rbd's key names (cls/rbd/cls_rbd.cc) and object map states
// (include/rbd/object_map_types.h).
constexpr const char* k_snapshot_prefix = "snapshot_";
constexpr const char* k_metadata_prefix = "metadata_";
constexpr const char* k_config_prefix = "metadata_conf_";
constexpr const char* k_snap_children_prefix = "snap_children_";
constexpr std::uint8_t k_object_nonexistent = 0;
constexpr std::uint8_t k_object_exists = 1;
constexpr std::uint8_t k_object_exists_clean = 3;
constexpr std::uint8_t k_lock_exclusive = 1;

bool starts_with(const std::string& text, const char* prefix) {
  return text.compare(0, std::strlen(prefix), prefix) == 0;
}

/// Reads Ceph's little-endian encoding (include/encoding.h); every read fails once the
/// bytes run out, and a failed cursor stays failed.
class Cursor {
 public:
  explicit Cursor(const std::string& bytes, std::size_t at = 0, std::size_t end = std::string::npos)
      : m_bytes(bytes), m_at(at), m_end(std::min(end, bytes.size())) {}

  template <typename T>
  T number() {
    if (!m_ok || m_end - m_at < sizeof(T)) {
      m_ok = false;
      return T{};
    }
    std::uint64_t result = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      result |= static_cast<std::uint64_t>(static_cast<unsigned char>(m_bytes[m_at + i]))
                << (8 * i);
    }
    m_at += sizeof(T);
    return static_cast<T>(result);
  }

  std::string text() {
    const auto length = number<std::uint32_t>();
    return raw(length);
  }

  std::string raw(std::size_t length) {
    if (!m_ok || m_end - m_at < length) {
      m_ok = false;
      return {};
    }
    std::string value = m_bytes.substr(m_at, length);
    m_at += length;
    return value;
  }

  /// utime_t: seconds and nanoseconds; zero (never set) is no timestamp, as librbd
  /// leaves it and `rbd info` hides it.
  std::optional<inventory::Timestamp> time() {
    const auto seconds = number<std::uint32_t>();
    const auto nanoseconds = number<std::uint32_t>();
    if (seconds == 0 && nanoseconds == 0) {
      return std::nullopt;
    }
    return static_cast<inventory::Timestamp>(seconds) * 1'000'000 + nanoseconds / 1000;
  }

  /// ENCODE_START's envelope: version, compat version and length. Returns the cursor
  /// over the body, or a failed one when compat is newer than `max_compat`.
  Cursor envelope(std::uint8_t max_compat, std::uint8_t* version = nullptr) {
    const auto struct_v = number<std::uint8_t>();
    const auto compat = number<std::uint8_t>();
    const auto length = number<std::uint32_t>();
    Cursor body(m_bytes, m_at, m_at + length);
    if (!m_ok || compat > max_compat || m_end - m_at < length) {
      body.m_ok = false;
    }
    m_at = m_ok ? m_at + length : m_at;
    if (version != nullptr) {
      *version = struct_v;
    }
    return body;
  }

  bool ok() const { return m_ok; }
  bool at_end() const { return m_ok && m_at == m_end; }
  std::size_t position() const { return m_at; }

 private:
  const std::string& m_bytes;
  std::size_t m_at;
  std::size_t m_end;
  bool m_ok = true;
};

std::optional<std::uint64_t> u64(const std::string& bytes) {
  Cursor in(bytes);
  const auto value = in.number<std::uint64_t>();
  return in.at_end() ? std::optional<std::uint64_t>(value) : std::nullopt;
}

std::optional<HeaderSnapshot> decode_snapshot(const std::string& bytes) {
  // Nautilus and later write the snapshot's parent overlap after child_count (an
  // optional<u64>); the inventory has no use for it, and the envelope skips it.
  Cursor outer(bytes);
  std::uint8_t version = 0;
  // Nautilus and later OSDs write version 8 with compat 8 (no parent, no features).
  Cursor in = outer.envelope(8, &version);
  if (!in.ok() || version < 8) {
    return std::nullopt;
  }
  HeaderSnapshot snap;
  snap.id = in.number<std::uint64_t>();
  snap.name = in.text();
  snap.size_bytes = in.number<std::uint64_t>();
  snap.protection_status = in.number<std::uint8_t>();
  snap.flags = in.number<std::uint64_t>();
  Cursor ns = in.envelope(1);
  snap.namespace_type = ns.number<std::uint32_t>();
  snap.timestamp = in.time();
  snap.child_count = in.number<std::uint32_t>();
  if (!in.ok() || !ns.ok() || !outer.at_end()) {
    return std::nullopt;
  }
  return snap;
}

/// cls_rbd_parent: version 1 (pre-Nautilus OSDs: no namespace, a plain overlap) or 2.
std::optional<HeaderParent> decode_parent(const std::string& bytes) {
  Cursor outer(bytes);
  std::uint8_t version = 0;
  Cursor in = outer.envelope(2, &version);
  HeaderParent parent;
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
  if (!in.at_end() || !outer.at_end() || version < 1) {
    return std::nullopt;
  }
  return parent;
}

/// cls::rbd::ChildImageSpecs: a set of {pool id, image id, (v2) namespace} envelopes.
std::optional<std::vector<ChildSpec>> decode_child_specs(const std::string& bytes) {
  Cursor in(bytes);
  const auto count = in.number<std::uint32_t>();
  std::vector<ChildSpec> children;
  for (std::uint32_t i = 0; i < count && in.ok(); ++i) {
    std::uint8_t version = 0;
    Cursor spec = in.envelope(2, &version);
    ChildSpec child;
    child.pool_id = spec.number<std::int64_t>();
    child.image_id = spec.text();
    if (version >= 2) {
      child.pool_namespace = spec.text();
    }
    if (!spec.ok()) {
      return std::nullopt;
    }
    children.push_back(std::move(child));
  }
  if (!in.at_end()) {
    return std::nullopt;
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

HeaderDecoding fall_back(std::string reason) {
  HeaderDecoding result;
  result.fallback_reason = std::move(reason);
  return result;
}

std::string entity_type_name(std::uint8_t type) {
  switch (type) {
    case 0x01:
      return "mon";
    case 0x02:
      return "mds";
    case 0x04:
      return "osd";
    case 0x08:
      return "client";
    case 0x10:
      return "mgr";
    default:
      return "unknown";
  }
}

/// entity_addr_t as encoded with the MSG_ADDR2 feature, printed as librbd's
/// list_lockers() prints it (entity_addr_t::get_legacy_str(): "ip:port/nonce").
std::optional<std::string> decode_address(Cursor& in) {
  if (in.number<std::uint8_t>() != 1) {
    return std::nullopt;  // the pre-Nautilus encoding
  }
  Cursor body = in.envelope(1);
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
  DecodedHeader header;
  bool have_size = false;
  bool have_order = false;
  bool have_features = false;
  bool have_prefix = false;
  for (const auto& [key, value] : omap) {
    std::optional<std::uint64_t> number;
    if (key == "size" || key == "features" || key == "op_features" || key == "flags" ||
        key == "snap_limit" || key == "stripe_unit" || key == "stripe_count" || key == "snap_seq" ||
        key == "data_pool_id") {
      number = u64(value);
      if (!number) {
        return fall_back("cannot decode header key '" + key + "'");
      }
    }
    if (key == "size") {
      header.size_bytes = *number;
      have_size = true;
    } else if (key == "order") {
      if (value.size() != 1) {
        return fall_back("cannot decode header key 'order'");
      }
      header.order = static_cast<unsigned char>(value[0]);
      have_order = true;
    } else if (key == "features") {
      header.features = *number;
      have_features = true;
    } else if (key == "op_features") {
      header.op_features = *number;
    } else if (key == "flags") {
      header.flags = *number;
    } else if (key == "snap_limit") {
      header.snapshot_limit = *number;
    } else if (key == "stripe_unit") {
      header.stripe_unit = *number;
    } else if (key == "stripe_count") {
      header.stripe_count = *number;
    } else if (key == "data_pool_id") {
      header.data_pool_id = static_cast<std::int64_t>(*number);
    } else if (key == "object_prefix") {
      Cursor in(value);
      header.object_prefix = in.text();
      if (!in.at_end()) {
        return fall_back("cannot decode header key 'object_prefix'");
      }
      have_prefix = true;
    } else if (key == "create_timestamp" || key == "modify_timestamp" ||
               key == "access_timestamp") {
      Cursor in(value);
      const auto time = in.time();
      if (!in.at_end()) {
        return fall_back("cannot decode header key '" + key + "'");
      }
      (key[0] == 'c'   ? header.create_timestamp
       : key[0] == 'm' ? header.modify_timestamp
                       : header.access_timestamp) = time;
    } else if (starts_with(key, k_snapshot_prefix)) {
      auto snap = decode_snapshot(value);
      if (!snap) {
        return fall_back("cannot decode snapshot record '" + key + "'");
      }
      header.snapshots.push_back(std::move(*snap));
    } else if (starts_with(key, k_config_prefix)) {
      header.config[key.substr(std::strlen(k_config_prefix))] = value;
    } else if (starts_with(key, k_snap_children_prefix)) {
      const auto snap_id = hex_snap_id(key, std::strlen(k_snap_children_prefix));
      auto children = decode_child_specs(value);
      if (!snap_id || !children) {
        return fall_back("cannot decode header key '" + key + "'");
      }
      header.snap_children[*snap_id] = std::move(*children);
    } else if (key == "snap_seq" || starts_with(key, k_metadata_prefix)) {
      // Not part of the inventory: the snapshot context's sequence, other image metadata.
    } else if (key == "parent") {
      header.parent = decode_parent(value);
      if (!header.parent) {
        return fall_back("cannot decode header key 'parent'");
      }
    } else if (key == "group") {
      return fall_back("group member");
    } else if (key == "migration") {
      return fall_back("migration");
    } else {
      return fall_back("unknown header key '" + key + "'");
    }
  }
  if (!have_size || !have_order || !have_features || !have_prefix) {
    return fall_back("header lacks size, order, features or object_prefix");
  }
  if (header.order < 12 || header.order > 26) {
    return fall_back("object order " + std::to_string(header.order) + " out of range");
  }
  if (header.stripe_unit == 0) {
    header.stripe_unit = std::uint64_t{1} << header.order;
  }
  std::sort(header.snapshots.begin(), header.snapshots.end(),
            [](const auto& a, const auto& b) { return a.id < b.id; });
  HeaderDecoding result;
  result.header = std::move(header);
  return result;
}

std::optional<HeaderSnapshot> decode_snapshot_record(const std::string& bytes) {
  return decode_snapshot(bytes);
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
  Cursor in(bytes);
  std::string name = in.text();
  return in.at_end() ? std::optional<std::string>(std::move(name)) : std::nullopt;
}

std::optional<std::string> decode_trash_name(const std::string& bytes) {
  // TrashImageSpec: ENCODE_START(2, 1) { u8 source, name, deletion and deferment end
  // times, (v2) u8 state }.
  Cursor outer(bytes);
  Cursor in = outer.envelope(1);
  in.number<std::uint8_t>();
  std::string name = in.text();
  if (!in.ok() || !outer.at_end()) {
    return std::nullopt;
  }
  return name;
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
  Cursor in(bytes);
  const auto count = in.number<std::uint32_t>();
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
  Cursor outer(bytes);
  Cursor in = outer.envelope(1);
  const auto count = in.number<std::uint32_t>();
  LockInfo info;
  for (std::uint32_t i = 0; i < count && in.ok(); ++i) {
    Cursor id = in.envelope(1);
    const auto type = id.number<std::uint8_t>();
    const auto number = id.number<std::int64_t>();
    inventory::Locker locker;
    locker.client = entity_type_name(type) + "." + std::to_string(number);
    locker.cookie = id.text();
    Cursor details = in.envelope(1);
    details.number<std::uint64_t>();  // expiration
    auto address = decode_address(details);
    if (!id.ok() || !details.ok() || !address) {
      return std::nullopt;
    }
    locker.address = std::move(*address);
    info.lockers.push_back(std::move(locker));
  }
  const auto type = in.number<std::uint8_t>();
  in.text();  // tag
  if (!in.ok() || !outer.at_end()) {
    return std::nullopt;
  }
  info.exclusive = type == k_lock_exclusive;
  return info;
}

std::optional<std::vector<std::uint8_t>> decode_object_map(const std::string& bytes) {
  // BitVector<2>::encode: a bufferlist holding ENCODE_START(1, 1) { u64 size }, the
  // packed data (4 objects a byte, the first in the high bits), a bufferlist footer.
  Cursor in(bytes);
  const auto header_length = in.number<std::uint32_t>();
  const std::size_t header_end = in.position() + header_length;
  Cursor header_bytes(bytes, in.position(), header_end);
  Cursor header = header_bytes.envelope(1);
  const auto size = header.number<std::uint64_t>();
  if (!in.ok() || !header.ok() || header_end > bytes.size() || size > bytes.size() * 4) {
    return std::nullopt;
  }
  Cursor data(bytes, header_end);
  const std::string packed = data.raw((size + 3) / 4);
  const auto footer_length = data.number<std::uint32_t>();
  data.raw(footer_length);
  if (!data.at_end()) {
    return std::nullopt;
  }
  std::vector<std::uint8_t> states(size);
  for (std::uint64_t i = 0; i < size; ++i) {
    const auto byte = static_cast<unsigned char>(packed[i / 4]);
    states[i] = static_cast<std::uint8_t>((byte >> ((3 - i % 4) * 2)) & 0x3);
  }
  return states;
}

std::uint64_t object_count(std::uint64_t size_bytes, std::uint64_t object_size,
                           std::uint64_t stripe_unit, std::uint64_t stripe_count) {
  if (stripe_count <= 1 || stripe_unit == object_size) {
    return (size_bytes + object_size - 1) / object_size;
  }
  const std::uint64_t period = object_size * stripe_count;
  const std::uint64_t periods = (size_bytes + period - 1) / period;
  const std::uint64_t remainder = size_bytes % period;
  std::uint64_t missing = 0;
  if (remainder > 0 && remainder < stripe_count * stripe_unit) {
    missing = stripe_count - (remainder + stripe_unit - 1) / stripe_unit;
  }
  return periods * stripe_count - missing;
}

std::optional<std::uint64_t> fast_diff_used_bytes(const std::vector<std::uint8_t>* from,
                                                  std::uint64_t from_size_bytes,
                                                  const std::vector<std::uint8_t>& end,
                                                  std::uint64_t size_bytes,
                                                  std::uint64_t object_size) {
  const std::uint64_t objects = (size_bytes + object_size - 1) / object_size;
  const std::uint64_t from_objects =
      from != nullptr ? (from_size_bytes + object_size - 1) / object_size : 0;
  if (end.size() < objects || (from != nullptr && from->size() < from_objects)) {
    return std::nullopt;
  }
  // librbd's object_map::DiffRequest: an object counts when it exists at the end and
  // did not exist (or was being written) at the start, or was written again since.
  std::uint64_t used = 0;
  for (std::uint64_t i = 0; i < objects; ++i) {
    const std::uint8_t state = end[i];
    if (state == k_object_nonexistent) {
      continue;
    }
    if (i < from_objects) {
      const std::uint8_t before = (*from)[i];
      const bool had_data = before == k_object_exists || before == k_object_exists_clean;
      if (had_data && state == k_object_exists_clean) {
        continue;  // unchanged since the start
      }
    }
    used += std::min(object_size, size_bytes - i * object_size);
  }
  return used;
}

}  // namespace rbdsync::ceph
