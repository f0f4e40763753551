#include "db/rows/inventory_rows.hpp"

#include <ctime>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/text.hpp"
#include "db/rows/columns.hpp"
#include "db/rows/fields.hpp"
#include "inventory/librbd_names.hpp"

namespace rbdsync::db {

using inventory::Image;

namespace {

Field used_bytes(const inventory::Usage& usage, const std::string& what) {
  return usage.used_bytes ? bigint(*usage.used_bytes, what, " used bytes") : std::nullopt;
}

/// Why used_bytes is NULL; NULL when it is not.
Field used_unknown_reason(const inventory::Usage& usage) {
  if (usage.used_bytes) {
    return std::nullopt;
  }
  return usage.unknown_reason.empty() ? std::string("unknown") : usage.unknown_reason;
}

/// The usage of a carried image and of its snapshots, as a row with none stored gets it:
/// the source did not read it, the stored one it meant to keep is not there (a row
/// removed since the sync began, or a mark met by a key collision, usage_marks.hpp),
/// and the NULL usage_mark makes the next sync read it. A stored row keeps its own
/// (TableSync's kept columns).
constexpr const char* k_not_kept_reason = "not read: no stored usage to keep";

Field used_bytes_of(const Image& image, const inventory::Usage& usage, const std::string& what) {
  return image.usage_carried ? std::nullopt : used_bytes(usage, what);
}

Field used_unknown_reason_of(const Image& image, const inventory::Usage& usage) {
  return image.usage_carried ? Field(k_not_kept_reason) : used_unknown_reason(usage);
}

Field watchers_json(const Image& image) {
  return json_list(image.watchers, [](const inventory::Watcher& watcher) {
    nlohmann::json entry{{"client", watcher.client_id}, {"cookie", watcher.cookie}};
    put_text(entry, "address", watcher.address);
    return entry;
  });
}

Field lockers_json(const Image& image) {
  return json_list(image.lockers, [](const inventory::Locker& locker) {
    nlohmann::json entry = nlohmann::json::object();
    put_text(entry, "locker", locker.client);
    put_text(entry, "id", locker.cookie);
    put_text(entry, "address", locker.address);
    return entry;
  });
}

Field config_json(const Image& image) {
  nlohmann::json object = nlohmann::json::object();
  // Keys and values as display text; the console shows them, nothing addresses them.
  for (const auto& option : image.config_overrides) {
    object[display_text(option.name)] = display_text(option.value);
  }
  return object.dump();
}

Field migration_json(const Image& image) {
  if (!image.migration) {
    return std::nullopt;
  }
  const inventory::Migration& m = *image.migration;
  const nlohmann::json migration{{"state", m.state},
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
                                   {"image_id", display_text(m.destination_image_id)}}}};
  return migration.dump();
}

// What each table's row is made from. `what` names the record in the message of a
// value that does not fit its column; it is made once per row.

struct PoolInput {
  const std::string& fsid;
  const inventory::Pool& pool;
  std::string what;
};

struct NamespaceInput {
  const std::string& fsid;
  const inventory::Namespace& ns;
};

struct ImageInput {
  const std::string& fsid;
  const Image& image;
  std::string what;
};

struct SnapshotInput {
  const std::string& fsid;
  const Image& image;
  const inventory::Snapshot& snap;
  std::string what;
};

struct TrashInput {
  const std::string& fsid;
  const inventory::TrashEntry& entry;
};

// The declarations. A column's type is the one sql/ gives it, as format_type() spells
// it; SchemaTest.DeclaredColumnsMatchTheMigratedSchema holds them to the migrated schema.

const Columns<PoolInput>& pool_columns() {
  using In = PoolInput;
  static const Columns<In> columns{
      "pools",
      {{"pool_id", "bigint", k_not_null, [](const In& in) { return number(in.pool.id); }}},
      {{"name", "text", k_not_null, [](const In& in) { return text(in.pool.name); }},
       {"pool_type", "text", k_not_null, [](const In& in) { return text(in.pool.type); }},
       {"replica_size", "bigint", k_not_null,
        [](const In& in) { return number(in.pool.replica_size); }},
       {"min_size", "bigint", k_not_null, [](const In& in) { return number(in.pool.min_size); }},
       {"pg_num", "bigint", k_not_null, [](const In& in) { return number(in.pool.pg_num); }},
       {"stored_bytes", "bigint", k_not_null,
        [](const In& in) { return bigint(in.pool.stored_bytes, in.what, " stored bytes"); }},
       {"objects", "bigint", k_not_null,
        [](const In& in) { return bigint(in.pool.objects, in.what, " objects"); }},
       {"used_bytes", "bigint", k_not_null,
        [](const In& in) { return bigint(in.pool.used_bytes, in.what, " used bytes"); }},
       {"max_avail_bytes", "bigint", k_not_null,
        [](const In& in) {
          return bigint(in.pool.max_avail_bytes, in.what, " max available bytes");
        }},
       {"mirror_mode", "text", k_not_null, [](const In& in) { return text(in.pool.mirror_mode); }},
       {"name_bytes", "bytea", k_nullable, [](const In& in) { return name_bytes(in.pool.name); }}},
      false,
      {}};
  return columns;
}

const Columns<NamespaceInput>& namespace_columns() {
  using In = NamespaceInput;
  static const Columns<In> columns{
      "namespaces",
      {{"pool_id", "bigint", k_not_null, [](const In& in) { return number(in.ns.pool_id); }},
       {"name", "text", k_not_null, [](const In& in) { return text(in.ns.name); }}},
      {{"name_bytes", "bytea", k_nullable, [](const In& in) { return name_bytes(in.ns.name); }}},
      false,
      {}};
  return columns;
}

/// The key of the image a row belongs to.
template <typename In>
ColumnList<In> image_key_columns() {
  return {
      {"pool_id", "bigint", k_not_null, [](const In& in) { return number(in.image.key.pool_id); }},
      {"namespace", "text", k_not_null,
       [](const In& in) { return text(in.image.key.pool_namespace); }},
      {"image_id", "text", k_not_null, [](const In& in) { return text(in.image.key.image_id); }}};
}

/// What `rbd info` says of the image's size, features and flags. Nullable: a row made
/// for an image never read (pg_store.cpp) has none of them.
ColumnList<ImageInput> image_shape_columns() {
  using In = ImageInput;
  return {
      {"name", "text", k_not_null, [](const In& in) { return text(in.image.name); }},
      {"format", "smallint", k_nullable, [](const In& in) { return number(in.image.format); }},
      {"size_bytes", "bigint", k_nullable,
       [](const In& in) { return bigint(in.image.size_bytes, in.what, " size"); }},
      {"object_size", "bigint", k_nullable,
       [](const In& in) { return bigint(in.image.object_size, in.what, " object size"); }},
      {"object_order", "smallint", k_nullable, [](const In& in) { return number(in.image.order); }},
      {"object_count", "bigint", k_nullable,
       [](const In& in) { return bigint(in.image.object_count, in.what, " object count"); }},
      {"features", "bigint", k_nullable, [](const In& in) { return mask(in.image.features); }},
      {"feature_names", "text[]", k_nullable,
       [](const In& in) -> Field {
         return text_array(inventory::feature_names(in.image.features));
       }},
      {"op_features", "bigint", k_nullable,
       [](const In& in) { return mask(in.image.op_features); }},
      {"op_feature_names", "text[]", k_nullable,
       [](const In& in) -> Field {
         return text_array(inventory::op_feature_names(in.image.op_features));
       }},
      {"flags", "bigint", k_nullable, [](const In& in) { return mask(in.image.flags); }},
      {"flag_names", "text[]", k_nullable,
       [](const In& in) -> Field { return text_array(inventory::flag_names(in.image.flags)); }},
  };
}

/// Where the image's data lives, its limits and its times.
ColumnList<ImageInput> image_layout_columns() {
  using In = ImageInput;
  return {
      {"data_pool_id", "bigint", k_nullable,
       [](const In& in) {
         return in.image.data_pool_id ? number(*in.image.data_pool_id) : std::nullopt;
       }},
      {"stripe_unit", "bigint", k_nullable,
       [](const In& in) { return bigint(in.image.stripe_unit, in.what, " stripe unit"); }},
      {"stripe_count", "bigint", k_nullable,
       [](const In& in) { return bigint(in.image.stripe_count, in.what, " stripe count"); }},
      {"block_name_prefix", "text", k_nullable,
       [](const In& in) { return text(in.image.block_name_prefix); }},
      {"snapshot_limit", "bigint", k_nullable,
       [](const In& in) {
         const auto& limit = in.image.snapshot_limit;
         return limit ? bigint(*limit, in.what, " snapshot limit") : std::nullopt;
       }},
      {"snapshot_count", "integer", k_nullable,
       [](const In& in) { return number(static_cast<std::int64_t>(in.image.snapshots.size())); }},
      {"create_timestamp", "timestamp with time zone", k_nullable,
       [](const In& in) { return timestamp(in.image.create_timestamp); }},
      {"modify_timestamp", "timestamp with time zone", k_nullable,
       [](const In& in) { return timestamp(in.image.modify_timestamp); }},
      {"access_timestamp", "timestamp with time zone", k_nullable,
       [](const In& in) { return timestamp(in.image.access_timestamp); }},
  };
}

/// `convert(part->*field)`, or NULL when there is no `part` (no parent, no group, no
/// migration, not mirrored; with_names() gives none when this client may not read the
/// names). Each column names its part once, so none can test one part and read another.
template <typename Part, typename Value, typename Convert>
Field of_part(const Part* part, Value Part::*field, Convert convert) {
  return part != nullptr ? convert(part->*field) : Field();
}

template <typename Part, typename Value, typename Convert>
Field of_part(const std::optional<Part>& part, Value Part::*field, Convert convert) {
  return of_part(part ? &*part : nullptr, field, convert);
}

/// The parent or the group, when this client may read its names: its names are NULL
/// otherwise, rather than the empty text (its unknown_reason says why).
template <typename Part>
const Part* with_names(const std::optional<Part>& part) {
  return part && part->unknown_reason.empty() ? &*part : nullptr;
}

/// The clone's parent: all NULL for an image that is no clone.
ColumnList<ImageInput> parent_columns() {
  using In = ImageInput;
  using inventory::Parent;
  return {
      {"parent_pool_id", "bigint", k_nullable,
       [](const In& in) { return of_part(in.image.parent, &Parent::pool_id, number); }},
      {"parent_pool_name", "text", k_nullable,
       [](const In& in) { return of_part(in.image.parent, &Parent::pool_name, text); }},
      {"parent_namespace", "text", k_nullable,
       [](const In& in) { return of_part(in.image.parent, &Parent::pool_namespace, text); }},
      {"parent_image_id", "text", k_nullable,
       [](const In& in) { return of_part(in.image.parent, &Parent::image_id, text); }},
      {"parent_image_name", "text", k_nullable,
       [](const In& in) {
         return of_part(with_names(in.image.parent), &Parent::image_name, text);
       }},
      {"parent_snap_id", "bigint", k_nullable,
       [](const In& in) {
         return of_part(in.image.parent, &Parent::snap_id, [&in](std::uint64_t id) {
           return bigint(id, in.what, " parent snapshot id");
         });
       }},
      {"parent_snap_name", "text", k_nullable,
       [](const In& in) { return of_part(with_names(in.image.parent), &Parent::snap_name, text); }},
      {"parent_in_trash", "boolean", k_nullable,
       [](const In& in) {
         return of_part(with_names(in.image.parent), &Parent::in_trash, boolean);
       }},
      {"parent_overlap_bytes", "bigint", k_nullable,
       [](const In& in) {
         return of_part(in.image.parent, &Parent::overlap_bytes, [&in](std::uint64_t bytes) {
           return bigint(bytes, in.what, " parent overlap");
         });
       }},
      {"parent_unknown_reason", "text", k_nullable,
       [](const In& in) {
         return of_part(in.image.parent, &Parent::unknown_reason, optional_text);
       }},
  };
}

/// The image's group: all NULL for an image in none.
ColumnList<ImageInput> group_columns() {
  using In = ImageInput;
  using inventory::GroupMembership;
  return {
      {"group_pool_id", "bigint", k_nullable,
       [](const In& in) { return of_part(in.image.group, &GroupMembership::pool_id, number); }},
      {"group_name", "text", k_nullable,
       [](const In& in) {
         return of_part(with_names(in.image.group), &GroupMembership::name, text);
       }},
      {"group_name_bytes", "bytea", k_nullable,
       [](const In& in) {
         return of_part(with_names(in.image.group), &GroupMembership::name, name_bytes);
       }},
      {"group_unknown_reason", "text", k_nullable,
       [](const In& in) {
         return of_part(in.image.group, &GroupMembership::unknown_reason, optional_text);
       }},
  };
}

/// A live migration, and mirroring: NULL when there is none.
ColumnList<ImageInput> migration_and_mirror_columns() {
  using In = ImageInput;
  using inventory::Migration;
  using inventory::Mirroring;
  return {
      {"migration_state", "text", k_nullable,
       [](const In& in) { return of_part(in.image.migration, &Migration::state, text); }},
      {"migration", "jsonb", k_nullable, [](const In& in) { return migration_json(in.image); }},
      {"mirror_mode", "text", k_nullable,
       [](const In& in) { return of_part(in.image.mirroring, &Mirroring::mode, text); }},
      {"mirror_state", "text", k_nullable,
       [](const In& in) { return of_part(in.image.mirroring, &Mirroring::state, text); }},
      {"mirror_global_id", "text", k_nullable,
       [](const In& in) { return of_part(in.image.mirroring, &Mirroring::global_id, text); }},
      {"mirror_primary", "boolean", k_nullable,
       [](const In& in) { return of_part(in.image.mirroring, &Mirroring::primary, boolean); }},
  };
}

/// Settings, usage, who has the image open, and its name's bytes.
ColumnList<ImageInput> image_state_columns() {
  using In = ImageInput;
  return {
      {"config_overrides", "jsonb", k_nullable, [](const In& in) { return config_json(in.image); }},
      {"used_bytes", "bigint", k_nullable,
       [](const In& in) { return used_bytes_of(in.image, in.image.usage, in.what); }},
      {"used_unknown_reason", "text", k_nullable,
       [](const In& in) { return used_unknown_reason_of(in.image, in.image.usage); }},
      // The header version at which used_bytes was read (sync/usage_marks.hpp), as the
      // signed bigint with the same 64 bits, like the masks. Carried: the stored one is
      // kept, and a row with none stored gets none.
      {"usage_mark", "bigint", k_nullable,
       [](const In& in) {
         const auto& mark = in.image.usage_mark;
         return mark && !in.image.usage_carried ? mask(*mark) : Field();
       }},
      {"watchers", "jsonb", k_nullable, [](const In& in) { return watchers_json(in.image); }},
      {"lockers", "jsonb", k_nullable, [](const In& in) { return lockers_json(in.image); }},
      {"lock_type", "text", k_nullable,
       [](const In& in) { return optional_text(in.image.lock_type); }},
      // Read just now, so not stale: a stored stale mark is cleared by the update.
      {"stale_error", "text", k_nullable, [](const In&) { return Field(); }},
      {"stale_since", "timestamp with time zone", k_nullable, [](const In&) { return Field(); }},
      {"name_bytes", "bytea", k_nullable, [](const In& in) { return name_bytes(in.image.name); }},
  };
}

template <typename In>
ColumnList<In> joined(std::initializer_list<ColumnList<In>> lists) {
  ColumnList<In> all;
  for (const ColumnList<In>& list : lists) {
    all.insert(all.end(), list.begin(), list.end());
  }
  return all;
}

/// Staged only: the image's usage was carried, not read (Image::usage_carried), so its
/// rows keep the stored usage.
template <typename In>
KeepFlag<In> usage_carried(std::vector<const char*> kept) {
  return {"usage_carried", [](const In& in) { return in.image.usage_carried; }, std::move(kept)};
}

const Columns<ImageInput>& image_columns() {
  // The columns that can overflow a bigint come in the order of the messages of old.
  static const Columns<ImageInput> columns{
      "images", image_key_columns<ImageInput>(),
      joined({image_shape_columns(), image_layout_columns(), parent_columns(), group_columns(),
              migration_and_mirror_columns(), image_state_columns()}),
      true, usage_carried<ImageInput>({"used_bytes", "used_unknown_reason", "usage_mark"})};
  return columns;
}

const Columns<SnapshotInput>& snapshot_columns() {
  using In = SnapshotInput;
  static const Columns<In> columns{
      "snapshots",
      joined({image_key_columns<In>(),
              {{"snap_id", "bigint", k_not_null,
                [](const In& in) { return bigint(in.snap.id, in.what, " id"); }}}}),
      {{"name", "text", k_not_null, [](const In& in) { return text(in.snap.name); }},
       {"size_bytes", "bigint", k_not_null,
        [](const In& in) { return bigint(in.snap.size_bytes, in.what, " size"); }},
       {"namespace_type", "text", k_not_null,
        [](const In& in) { return text(in.snap.namespace_type); }},
       {"timestamp", "timestamp with time zone", k_nullable,
        [](const In& in) { return timestamp(in.snap.timestamp); }},
       {"protected", "boolean", k_not_null,
        [](const In& in) { return boolean(in.snap.is_protected); }},
       {"children", "integer", k_nullable,
        [](const In& in) {
          return in.snap.children ? bigint(*in.snap.children, in.what, " children") : Field();
        }},
       {"used_bytes", "bigint", k_nullable,
        [](const In& in) { return used_bytes_of(in.image, in.snap.usage, in.what); }},
       {"used_unknown_reason", "text", k_nullable,
        [](const In& in) { return used_unknown_reason_of(in.image, in.snap.usage); }},
       {"name_bytes", "bytea", k_nullable, [](const In& in) { return name_bytes(in.snap.name); }},
       {"children_unknown_reason", "text", k_nullable,
        [](const In& in) -> Field {
          if (in.snap.children) {
            return std::nullopt;
          }
          const std::string& reason = in.snap.children_unknown_reason;
          return reason.empty() ? std::string("unknown") : text(reason);
        }}},
      true,
      usage_carried<In>({"used_bytes", "used_unknown_reason"})};
  return columns;
}

const Columns<TrashInput>& trash_columns() {
  using In = TrashInput;
  static const Columns<In> columns{
      "trash",
      {{"pool_id", "bigint", k_not_null, [](const In& in) { return number(in.entry.pool_id); }},
       {"namespace", "text", k_not_null,
        [](const In& in) { return text(in.entry.pool_namespace); }},
       {"image_id", "text", k_not_null, [](const In& in) { return text(in.entry.image_id); }}},
      {{"name", "text", k_not_null, [](const In& in) { return text(in.entry.name); }},
       {"source", "text", k_not_null, [](const In& in) { return text(in.entry.source); }},
       {"deletion_time", "timestamp with time zone", k_not_null,
        [](const In& in) -> Field { return timestamp_text(in.entry.deletion_time); }},
       {"deferment_end_time", "timestamp with time zone", k_not_null,
        [](const In& in) -> Field { return timestamp_text(in.entry.deferment_end_time); }},
       {"name_bytes", "bytea", k_nullable, [](const In& in) { return name_bytes(in.entry.name); }}},
      false,
      {}};
  return columns;
}

/// The temporary table `stale_images` (table_sync.hpp): no fsid, it lives in one
/// cluster's transaction.
const ColumnList<sync::StaleImage>& stale_columns() {
  using In = sync::StaleImage;
  static const ColumnList<In> columns{
      {"pool_id", "bigint", k_not_null, [](const In& in) { return number(in.key.pool_id); }},
      {"namespace", "text", k_not_null, [](const In& in) { return text(in.key.pool_namespace); }},
      {"image_id", "text", k_not_null, [](const In& in) { return text(in.key.image_id); }},
      {"name", "text", k_not_null, [](const In& in) { return text(in.name); }},
      {"name_bytes", "bytea", k_nullable, [](const In& in) { return name_bytes(in.name); }},
      {"error", "text", k_not_null, [](const In& in) { return text(in.error); }}};
  return columns;
}

}  // namespace

const Table& pools_table() {
  static const Table table = pool_columns().table();
  return table;
}

const Table& namespaces_table() {
  static const Table table = namespace_columns().table();
  return table;
}

const Table& images_table() {
  static const Table table = [] {
    Table images = image_columns().table();
    images.bookkeeping = {"usage_mark"};
    return images;
  }();
  return table;
}

const Table& snapshots_table() {
  static const Table table = snapshot_columns().table();
  return table;
}

const Table& trash_table() {
  static const Table table = trash_columns().table();
  return table;
}

const std::vector<ColumnType>& stale_image_types() {
  static const std::vector<ColumnType> types = column_types<sync::StaleImage>({&stale_columns()});
  return types;
}

Row pool_row(const std::string& fsid, const inventory::Pool& pool) {
  return pool_columns().row({fsid, pool, "pool " + display_text(pool.name, Controls::escape)});
}

Row namespace_row(const std::string& fsid, const inventory::Namespace& ns) {
  return namespace_columns().row({fsid, ns});
}

Row image_row(const std::string& fsid, const Image& image) {
  return image_columns().row(
      {fsid, image, "image id " + display_text(image.key.image_id, Controls::escape)});
}

std::vector<Row> snapshot_rows(const std::string& fsid, const Image& image) {
  std::vector<Row> rows;
  rows.reserve(image.snapshots.size());
  for (const inventory::Snapshot& snap : image.snapshots) {
    rows.push_back(
        snapshot_columns().row({fsid, image, snap,
                                "image id " + display_text(image.key.image_id, Controls::escape) +
                                    " snapshot " + display_text(snap.name, Controls::escape)}));
  }
  return rows;
}

Row trash_row(const std::string& fsid, const inventory::TrashEntry& entry) {
  return trash_columns().row({fsid, entry});
}

Row stale_row(const sync::StaleImage& image) {
  Row row;
  add_values(stale_columns(), image, row);
  return row;
}

}  // namespace rbdsync::db
