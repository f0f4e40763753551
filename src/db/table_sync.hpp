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
};

/// `row` as one line of COPY text format: tab-separated, \N for NULL, backslash escapes.
std::string copy_line(const Row& row);

/// Rows waiting to be COPYed into one table, kept as their COPY lines: the most compact
/// form a row has on this side, and the one the server reads. A sync adds rows as it
/// reads images, so this, not the inventory, is what a sync's memory grows with. Held
/// in blocks of about 1 MiB, so that growing never copies what is already there.
class CopyRows {
 public:
  void add(const Row& row);
  std::size_t size() const { return m_rows; }
  /// Calls `on_line` with each row's line (without its newline), in the order added.
  template <typename OnLine>
  void for_each_line(OnLine on_line) const {
    std::string line;
    for (const std::string& block : m_blocks) {
      std::size_t begin = 0;
      while (begin < block.size()) {
        const std::size_t end = block.find('\n', begin);
        line.assign(block, begin, end - begin);
        on_line(line);
        begin = end + 1;
      }
    }
  }
  /// Frees the memory held.
  void clear();

 private:
  std::vector<std::string> m_blocks;
  std::size_t m_rows = 0;
};

/// Which stored rows a sync may delete: those of `fsid` in the pools it read, or in
/// every pool when it read them all (but those it was not permitted to read).
struct DeleteScope {
  std::string fsid;
  bool all_pools = true;
  std::vector<std::int64_t> pool_ids;       ///< when !all_pools
  std::vector<std::int64_t> kept_pool_ids;  ///< never deleted from: pools the sync may not read
};

/// The work on one table inside the sync's transaction. Call stage(), then upsert()
/// (parents before children, for the foreign keys), then remove() (children first, so
/// each kind counts its own removals rather than losing them to a cascade).
class TableSync {
 public:
  TableSync(pqxx::work& work, Table table);

  /// COPYs `rows` (fsid first, then keys, then values) into a temporary table that
  /// lives until the transaction ends, and frees them.
  void stage(CopyRows& rows);

  /// Updates stored rows whose values differ and inserts new ones; sets added,
  /// changed and unchanged of the result.
  void upsert();

  /// Deletes stored rows in `scope` that were not staged, except (for per-image
  /// tables) those of images listed in the temporary table `stale_images`.
  void remove(const DeleteScope& scope);

  const sync::KindCounts& counts() const { return m_counts; }

 private:
  std::string staged_name() const;
  std::string key_match(const char* stored, const char* seen) const;

  pqxx::work& m_work;
  Table m_table;
  std::size_t m_staged = 0;
  sync::KindCounts m_counts;
};

/// Creates the temporary table `stale_images` with `columns` (pool_id, namespace,
/// image_id, name, name_bytes, error) and COPYs `rows` into it. TableSync::remove() of
/// per-image tables consults it.
void stage_stale_images(pqxx::work& work, const std::vector<ColumnType>& columns, CopyRows& rows);

}  // namespace rbdsync::db
