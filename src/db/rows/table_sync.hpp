#pragma once

/// Inside db/ only: makes one inventory table hold exactly the rows a sync saw, in bulk.
/// The rows are COPYed into a temporary table, then three set-based statements update
/// the rows that differ, insert the new ones and delete the ones gone, so a sync costs
/// a handful of round trips whatever the inventory's size, and an unchanged row is
/// never rewritten.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "db/pqxx_compat.hpp"

#include "sync/sink.hpp"

namespace rbdsync::db {

/// One column value in PostgreSQL's text input format; std::nullopt is NULL.
using Field = std::optional<std::string>;
using Row = std::vector<Field>;

/// A column as a staging table declares it.
struct ColumnType {
  std::string name;
  std::string sql_type;  ///< as PostgreSQL's format_type() spells it
  bool not_null = false;
};

/// An inventory table: its rows are identified by fsid plus `keys`, and `values` are
/// what a sync compares and rewrites. `first_seen_at` and `updated_at` are maintained
/// here; nothing else is written.
struct Table {
  std::string name;  ///< in schema rbdsync
  std::vector<std::string> keys;
  std::vector<std::string> values;
  /// Rows belong to an image (pool_id, namespace, image_id are among the keys): rows of
  /// a stale image are kept.
  bool per_image = false;
  /// fsid, the keys and the values, in that order, with the types sql/ gives them.
  std::vector<ColumnType> types;
  /// A boolean column of the staging table only, after `types` in its rows: a staged
  /// row with it true was not read again for the `kept` columns, which then keep what
  /// the stored row holds (a row with none stored gets the staged values). Empty when
  /// the table has no such column.
  std::string keep_flag;
  /// Among `values`: the columns `keep_flag` keeps.
  std::vector<std::string> kept;
  /// Among `values`: the sync's own bookkeeping, which the console does not show (the
  /// images' usage_mark). Written when it differs, but a row whose other values are
  /// equal is not counted changed and keeps its updated_at: switching readers, or a
  /// header whose lock was taken and given back, changes nothing anyone sees.
  std::vector<std::string> bookkeeping;
};

/// `row` as one line of COPY text format: tab-separated, \N for NULL, backslash escapes.
std::string copy_line(const Row& row);
/// Appends copy_line(`row`) to `line`, without a newline.
void append_copy_line(std::string& line, const Row& row);

/// The staging table of `table`: "seen_<name>".
std::string staging_name(const Table& table);

/// The columns of `table`'s staging table: its `types`, then its keep flag if it has one.
std::vector<ColumnType> staging_types(const Table& table);

/// Creates the temporary table `name` of `columns`, dropped when the transaction ends.
/// Without keys, foreign keys or checks: the staged rows are checked when they reach the
/// real table.
void create_staging_table(pqxx::work& work, const std::string& name,
                          const std::vector<ColumnType>& columns);

/// COPYs `lines` (COPY text lines separated by newlines, none after the last) into
/// table `name` of `columns`, as one statement of `work` on `connection`.
void copy_into(PgConnection& connection, pqxx::work& work, const std::string& name,
               const std::vector<ColumnType>& columns, const std::string& lines);

/// Which stored rows a sync may delete: those of `fsid` in the pools it read, or in
/// every pool when it read them all (but those it was not permitted to read).
struct DeleteScope {
  std::string fsid;
  bool all_pools = true;
  std::vector<std::int64_t> pool_ids;       ///< when !all_pools
  std::vector<std::int64_t> kept_pool_ids;  ///< never deleted from: pools the sync may not read
};

/// The work on one table inside the sync's transaction, once its `staged` rows (fsid
/// first, then keys, then values, then the keep flag) are in its staging table. Call
/// analyze_staged(), then upsert() (parents before children, for the foreign keys),
/// then remove() (children first, so each kind counts its own removals rather than
/// losing them to a cascade).
class TableSync {
 public:
  TableSync(pqxx::work& work, Table table, std::size_t staged);

  /// Gives the planner the staging table's statistics.
  void analyze_staged();

  /// Drops the staged rows whose key is staged in `other` too (a table with the same key
  /// columns); returns how many. After analyze_staged() of both: without statistics the
  /// planner sorts both sides for a merge join, far slower than hashing the few staged
  /// rows against a million.
  std::size_t unstage_keys_staged_in(const TableSync& other);

  /// Updates stored rows whose values differ and inserts new ones; sets added,
  /// changed and unchanged of the result. A staged row with its keep flag set compares
  /// and writes the stored row's own values in the kept columns: kept and otherwise
  /// equal, it is unchanged and not rewritten.
  void upsert();

  /// Deletes stored rows in `scope` that were not staged, except (for per-image
  /// tables) those of images listed in the temporary table `stale_images`.
  void remove(const DeleteScope& scope);

  const sync::KindCounts& counts() const { return m_counts; }

 private:
  std::string key_match(const char* stored, const char* seen) const;
  /// What a staged row `s` gives `column` of the stored row `t`.
  std::string seen_value(const std::string& column) const;

  pqxx::work& m_work;
  Table m_table;
  std::size_t m_staged = 0;
  sync::KindCounts m_counts;
};

/// The temporary table of the images that could not be read: columns pool_id,
/// namespace, image_id, name, name_bytes, error (stale_image_types()). TableSync::remove()
/// of per-image tables consults it.
inline constexpr const char* k_stale_images_table = "pg_temp.stale_images";

}  // namespace rbdsync::db
