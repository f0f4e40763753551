#include "db/inventory_rows.hpp"

#include <ctime>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/text.hpp"
#include "inventory/librbd_names.hpp"

namespace rbdsync::db {

using inventory::Image;

namespace {

/// Text from Ceph, as display text (common/text.hpp): always valid UTF-8 without NUL.
Field text(const std::string& value) {
  return display_text(value);
}

/// The exact bytes of a name (bytea hex input) when its display text had to escape
/// them; NULL when the name is plain text.
Field name_bytes(const std::string& value) {
  if (is_plain_text(value)) {
    return std::nullopt;
  }
  return "\\x" + hex_bytes(value);
}

/// A JSON object's text member `key`, as display text, with the exact bytes beside it
/// as `<key>_bytes` (hex) when the text had to be escaped.
void put_text(nlohmann::json& object, const char* key, const std::string& value) {
  object[key] = display_text(value);
  if (!is_plain_text(value)) {
    object[std::string(key) + "_bytes"] = hex_bytes(value);
  }
}

Field number(std::int64_t value) {
  return std::to_string(value);
}

/// Ceph's counters are unsigned; PostgreSQL has no unsigned bigint. A value beyond
/// 2^63 is not a real size, so it is refused rather than stored wrapped.
Field bigint(std::uint64_t value, const std::string& what) {
  if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    throw Error(ExitCode::data, what + " (" + std::to_string(value) + ") does not fit a bigint",
                "report this to the Ceph administrators; it cannot be stored");
  }
  return std::to_string(value);
}

/// Bit masks are stored as the signed bigint with the same 64 bits.
Field mask(std::uint64_t value) {
  return std::to_string(static_cast<std::int64_t>(value));
}

Field boolean(bool value) {
  return std::string(value ? "t" : "f");
}

Field timestamp(const std::optional<inventory::Timestamp>& value) {
  if (!value) {
    return std::nullopt;
  }
  return timestamp_text(*value);
}

Field optional_text(const std::string& value) {
  if (value.empty()) {
    return std::nullopt;
  }
  return text(value);
}

Field json(const nlohmann::json& value) {
  return value.dump();
}

void add_usage(Row& row, const inventory::Usage& usage, const std::string& what) {
  if (usage.used_bytes) {
    row.push_back(bigint(*usage.used_bytes, what + " used bytes"));
    row.push_back(std::nullopt);
  } else {
    row.push_back(std::nullopt);
    row.push_back(usage.unknown_reason.empty() ? std::string("unknown") : usage.unknown_reason);
  }
}

Row image_key_row(const std::string& fsid, const inventory::ImageKey& key) {
  return Row{text(fsid), number(key.pool_id), text(key.pool_namespace), text(key.image_id)};
}

nlohmann::json watchers_json(const Image& image) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& watcher : image.watchers) {
    nlohmann::json entry{{"client", watcher.client_id}, {"cookie", watcher.cookie}};
    put_text(entry, "address", watcher.address);
    list.push_back(std::move(entry));
  }
  return list;
}

nlohmann::json lockers_json(const Image& image) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& locker : image.lockers) {
    nlohmann::json entry = nlohmann::json::object();
    put_text(entry, "locker", locker.client);
    put_text(entry, "id", locker.cookie);
    put_text(entry, "address", locker.address);
    list.push_back(std::move(entry));
  }
  return list;
}

nlohmann::json config_json(const Image& image) {
  nlohmann::json object = nlohmann::json::object();
  // Keys and values as display text; the console shows them, nothing addresses them.
  for (const auto& option : image.config_overrides) {
    object[display_text(option.name)] = display_text(option.value);
  }
  return object;
}

Field migration_json(const Image& image) {
  if (!image.migration) {
    return std::nullopt;
  }
  const inventory::Migration& m = *image.migration;
  return json({{"state", m.state},
               {"state_description", display_text(m.state_description)},
               {"source",
                {{"pool_id", m.source_pool_id},
                 {"namespace", display_text(m.source_namespace)},
                 {"image_name", display_text(m.source_image_name)},
                 {"image_id", display_text(m.source_image_id)}}},
               {"destination",
                {{"pool_id", m.destination_pool_id},
                 {"namespace", display_text(m.destination_namespace)},
                 {"image_name", display_text(m.destination_image_name)},
                 {"image_id", display_text(m.destination_image_id)}}}});
}

}  // namespace

std::string timestamp_text(inventory::Timestamp micros) {
  // Floor division, so that times before 1970 still come out right.
  std::int64_t seconds = micros / 1000000;
  std::int64_t fraction = micros % 1000000;
  if (fraction < 0) {
    fraction += 1000000;
    --seconds;
  }
  const auto as_time = static_cast<std::time_t>(seconds);
  std::tm utc{};
  gmtime_r(&as_time, &utc);
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:06}+00", utc.tm_year + 1900,
                     utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, fraction);
}

std::string text_array(const std::vector<std::string>& elements) {
  std::string literal = "{";
  for (const std::string& element : elements) {
    if (literal.size() > 1) {
      literal += ',';
    }
    literal += '"';
    for (const char c : element) {
      if (c == '"' || c == '\\') {
        literal += '\\';
      }
      literal += c;
    }
    literal += '"';
  }
  return literal + "}";
}

const Table& pools_table() {
  static const Table table{
      "pools",
      {"pool_id"},
      {"name", "pool_type", "replica_size", "min_size", "pg_num", "stored_bytes", "objects",
       "used_bytes", "max_avail_bytes", "mirror_mode", "name_bytes"},
      false};
  return table;
}

const Table& namespaces_table() {
  static const Table table{"namespaces", {"pool_id", "name"}, {"name_bytes"}, false};
  return table;
}

const Table& images_table() {
  static const Table table{"images",
                           {"pool_id", "namespace", "image_id"},
                           {"name",
                            "format",
                            "size_bytes",
                            "object_size",
                            "object_order",
                            "object_count",
                            "features",
                            "feature_names",
                            "op_features",
                            "op_feature_names",
                            "flags",
                            "flag_names",
                            "data_pool_id",
                            "stripe_unit",
                            "stripe_count",
                            "block_name_prefix",
                            "snapshot_limit",
                            "snapshot_count",
                            "create_timestamp",
                            "modify_timestamp",
                            "access_timestamp",
                            "parent_pool_id",
                            "parent_pool_name",
                            "parent_namespace",
                            "parent_image_id",
                            "parent_image_name",
                            "parent_snap_id",
                            "parent_snap_name",
                            "parent_in_trash",
                            "parent_overlap_bytes",
                            "group_pool_id",
                            "group_name",
                            "migration_state",
                            "migration",
                            "mirror_mode",
                            "mirror_state",
                            "mirror_global_id",
                            "mirror_primary",
                            "config_overrides",
                            "used_bytes",
                            "used_unknown_reason",
                            "watchers",
                            "lockers",
                            "lock_type",
                            "stale_error",
                            "stale_since",
                            "name_bytes",
                            "group_name_bytes",
                            "parent_unknown_reason",
                            "group_unknown_reason"},
                           true};
  return table;
}

const Table& snapshots_table() {
  static const Table table{
      "snapshots",
      {"pool_id", "namespace", "image_id", "snap_id"},
      {"name", "size_bytes", "namespace_type", "timestamp", "protected", "children", "used_bytes",
       "used_unknown_reason", "name_bytes", "children_unknown_reason"},
      true};
  return table;
}

const Table& trash_table() {
  static const Table table{"trash",
                           {"pool_id", "namespace", "image_id"},
                           {"name", "source", "deletion_time", "deferment_end_time", "name_bytes"},
                           false};
  return table;
}

Row pool_row(const std::string& fsid, const inventory::Pool& pool) {
  const std::string what = "pool " + display_text(pool.name, Controls::escape);
  return Row{text(fsid),
             number(pool.id),
             text(pool.name),
             text(pool.type),
             number(pool.replica_size),
             number(pool.min_size),
             number(pool.pg_num),
             bigint(pool.stored_bytes, what + " stored bytes"),
             bigint(pool.objects, what + " objects"),
             bigint(pool.used_bytes, what + " used bytes"),
             bigint(pool.max_avail_bytes, what + " max available bytes"),
             text(pool.mirror_mode),
             name_bytes(pool.name)};
}

Row namespace_row(const std::string& fsid, const inventory::Namespace& ns) {
  return Row{text(fsid), number(ns.pool_id), text(ns.name), name_bytes(ns.name)};
}

Row image_row(const std::string& fsid, const Image& image) {
  const std::string what = "image id " + display_text(image.key.image_id, Controls::escape);
  Row row = image_key_row(fsid, image.key);
  row.reserve(images_table().keys.size() + images_table().values.size() + 1);
  row.push_back(text(image.name));
  row.push_back(number(image.format));
  row.push_back(bigint(image.size_bytes, what + " size"));
  row.push_back(bigint(image.object_size, what + " object size"));
  row.push_back(number(image.order));
  row.push_back(bigint(image.object_count, what + " object count"));
  row.push_back(mask(image.features));
  row.push_back(text_array(inventory::feature_names(image.features)));
  row.push_back(mask(image.op_features));
  row.push_back(text_array(inventory::op_feature_names(image.op_features)));
  row.push_back(mask(image.flags));
  row.push_back(text_array(inventory::flag_names(image.flags)));
  row.push_back(image.data_pool_id ? number(*image.data_pool_id) : std::nullopt);
  row.push_back(bigint(image.stripe_unit, what + " stripe unit"));
  row.push_back(bigint(image.stripe_count, what + " stripe count"));
  row.push_back(text(image.block_name_prefix));
  row.push_back(image.snapshot_limit ? bigint(*image.snapshot_limit, what + " snapshot limit")
                                     : std::nullopt);
  row.push_back(number(static_cast<std::int64_t>(image.snapshots.size())));
  row.push_back(timestamp(image.create_timestamp));
  row.push_back(timestamp(image.modify_timestamp));
  row.push_back(timestamp(image.access_timestamp));
  if (image.parent) {
    const inventory::Parent& parent = *image.parent;
    row.push_back(number(parent.pool_id));
    row.push_back(text(parent.pool_name));
    row.push_back(text(parent.pool_namespace));
    row.push_back(text(parent.image_id));
    // Names this client may not read are NULL, not the empty text.
    const bool names_known = parent.unknown_reason.empty();
    row.push_back(names_known ? text(parent.image_name) : std::nullopt);
    row.push_back(bigint(parent.snap_id, what + " parent snapshot id"));
    row.push_back(names_known ? text(parent.snap_name) : std::nullopt);
    row.push_back(names_known ? boolean(parent.in_trash) : std::nullopt);
    row.push_back(bigint(parent.overlap_bytes, what + " parent overlap"));
  } else {
    row.insert(row.end(), 9, std::nullopt);
  }
  const bool group_name_known = image.group && image.group->unknown_reason.empty();
  if (image.group) {
    row.push_back(number(image.group->pool_id));
    row.push_back(group_name_known ? text(image.group->name) : std::nullopt);
  } else {
    row.insert(row.end(), 2, std::nullopt);
  }
  row.push_back(image.migration ? text(image.migration->state) : std::nullopt);
  row.push_back(migration_json(image));
  if (image.mirroring) {
    row.push_back(text(image.mirroring->mode));
    row.push_back(text(image.mirroring->state));
    row.push_back(text(image.mirroring->global_id));
    row.push_back(boolean(image.mirroring->primary));
  } else {
    row.insert(row.end(), 4, std::nullopt);
  }
  row.push_back(json(config_json(image)));
  add_usage(row, image.usage, what);
  row.push_back(json(watchers_json(image)));
  row.push_back(json(lockers_json(image)));
  row.push_back(optional_text(image.lock_type));
  // Read just now, so not stale: a stored stale mark is cleared by the update.
  row.push_back(std::nullopt);
  row.push_back(std::nullopt);
  row.push_back(name_bytes(image.name));
  row.push_back(group_name_known ? name_bytes(image.group->name) : std::nullopt);
  row.push_back(image.parent ? optional_text(image.parent->unknown_reason) : std::nullopt);
  row.push_back(image.group ? optional_text(image.group->unknown_reason) : std::nullopt);
  return row;
}

std::vector<Row> snapshot_rows(const std::string& fsid, const Image& image) {
  std::vector<Row> rows;
  rows.reserve(image.snapshots.size());
  for (const inventory::Snapshot& snap : image.snapshots) {
    const std::string what = "image id " + display_text(image.key.image_id, Controls::escape) +
                             " snapshot " + display_text(snap.name, Controls::escape);
    Row row = image_key_row(fsid, image.key);
    row.push_back(bigint(snap.id, what + " id"));
    row.push_back(text(snap.name));
    row.push_back(bigint(snap.size_bytes, what + " size"));
    row.push_back(text(snap.namespace_type));
    row.push_back(timestamp(snap.timestamp));
    row.push_back(boolean(snap.is_protected));
    if (snap.children) {
      row.push_back(bigint(*snap.children, what + " children"));
    } else {
      row.push_back(std::nullopt);
    }
    add_usage(row, snap.usage, what);
    row.push_back(name_bytes(snap.name));
    if (snap.children) {
      row.push_back(std::nullopt);
    } else {
      row.push_back(snap.children_unknown_reason.empty() ? std::string("unknown")
                                                         : text(snap.children_unknown_reason));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

Row trash_row(const std::string& fsid, const inventory::TrashEntry& entry) {
  return Row{text(fsid),
             number(entry.pool_id),
             text(entry.pool_namespace),
             text(entry.image_id),
             text(entry.name),
             text(entry.source),
             timestamp_text(entry.deletion_time),
             timestamp_text(entry.deferment_end_time),
             name_bytes(entry.name)};
}

Row stale_row(const sync::StaleImage& image) {
  return Row{number(image.key.pool_id), text(image.key.pool_namespace), text(image.key.image_id),
             text(image.name),          name_bytes(image.name),         text(image.error)};
}

}  // namespace rbdsync::db
