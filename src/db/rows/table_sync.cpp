#include "db/rows/table_sync.hpp"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace rbdsync::db {

namespace {

std::string quoted(const std::string& identifier) {
  return "\"" + identifier + "\"";
}

std::string joined(const std::vector<std::string>& columns, const std::string& prefix = {}) {
  std::string text;
  for (const std::string& column : columns) {
    if (!text.empty()) {
      text += ", ";
    }
    text += prefix + quoted(column);
  }
  return text;
}

/// The columns that name a row: the cluster and the table's key.
std::vector<std::string> key_columns(const Table& table) {
  std::vector<std::string> columns{"fsid"};
  columns.insert(columns.end(), table.keys.begin(), table.keys.end());
  return columns;
}

std::vector<std::string> all_columns(const Table& table) {
  std::vector<std::string> columns = key_columns(table);
  columns.insert(columns.end(), table.values.begin(), table.values.end());
  return columns;
}

}  // namespace

std::string copy_line(const Row& row) {
  std::string line;
  append_copy_line(line, row);
  return line;
}

void append_copy_line(std::string& line, const Row& row) {
  bool first = true;
  for (const Field& field : row) {
    if (!first) {
      line += '\t';
    }
    first = false;
    if (!field) {
      line += "\\N";
      continue;
    }
    for (const char c : *field) {
      switch (c) {
        case '\\':
          line += "\\\\";
          break;
        case '\t':
          line += "\\t";
          break;
        case '\n':
          line += "\\n";
          break;
        case '\r':
          line += "\\r";
          break;
        default:
          line += c;
      }
    }
  }
}

std::string staging_name(const Table& table) {
  return "pg_temp.seen_" + table.name;
}

std::vector<ColumnType> staging_types(const Table& table) {
  std::vector<ColumnType> types = table.types;
  if (!table.keep_flag.empty()) {
    types.push_back(ColumnType{table.keep_flag, "boolean", true});
  }
  return types;
}

void create_staging_table(pqxx::work& work, const std::string& name,
                          const std::vector<ColumnType>& columns) {
  std::string definitions;
  for (const ColumnType& column : columns) {
    if (!definitions.empty()) {
      definitions += ", ";
    }
    definitions += quoted(column.name) + " " + column.sql_type;
    if (column.not_null) {
      definitions += " NOT NULL";
    }
  }
  work.exec("CREATE TEMPORARY TABLE " + name + " (" + definitions + ") ON COMMIT DROP");
}

void copy_into(PgConnection& connection, pqxx::work& work, const std::string& name,
               const std::vector<ColumnType>& columns, const std::string& lines) {
  std::vector<std::string> quoted_columns;
  quoted_columns.reserve(columns.size());
  for (const ColumnType& column : columns) {
    quoted_columns.push_back(quoted(column.name));
  }
  connection.copy_lines(work, name, quoted_columns, lines);
}

TableSync::TableSync(pqxx::work& work, Table table, std::size_t staged)
    : m_work(work), m_table(std::move(table)), m_staged(staged) {}

std::string TableSync::key_match(const char* stored, const char* seen) const {
  std::string text = std::string(stored) + ".fsid = " + seen + ".fsid";
  for (const std::string& key : m_table.keys) {
    text += " AND " + std::string(stored) + "." + quoted(key) + " = " + seen + "." + quoted(key);
  }
  return text;
}

std::string TableSync::seen_value(const std::string& column) const {
  const std::vector<std::string>& kept = m_table.kept;
  if (std::find(kept.begin(), kept.end(), column) == kept.end()) {
    return "s." + quoted(column);
  }
  return "CASE WHEN s." + quoted(m_table.keep_flag) + " THEN t." + quoted(column) + " ELSE s." +
         quoted(column) + " END";
}

void TableSync::analyze_staged() {
  // Without statistics the planner guesses a handful of rows and may pick nested
  // loops over thousands. Only the key's columns: the joins are planned on them alone,
  // and sampling every value column too would weigh on every sync, a no-op's above all.
  m_work.exec("ANALYZE " + staging_name(m_table) + " (" + joined(key_columns(m_table)) + ")");
}

std::size_t TableSync::unstage_keys_staged_in(const TableSync& other) {
  if (other.m_table.keys != m_table.keys) {
    throw std::logic_error("unstaging keys of " + other.m_table.name + " from " + m_table.name +
                           ": the keys differ");
  }
  if (m_staged == 0) {
    return 0;
  }
  const std::size_t unstaged =
      m_work
          .exec("DELETE FROM " + staging_name(m_table) + " AS s USING " +
                staging_name(other.m_table) + " AS o WHERE " + key_match("s", "o"))
          .affected_rows();
  m_staged -= unstaged;
  return unstaged;
}

void TableSync::upsert() {
  const std::string table = "rbdsync." + m_table.name;
  if (!m_table.values.empty()) {
    // A kept column's seen value is the stored one (seen_value()), in the comparison as
    // in the SET: a row whose other values are equal is neither rewritten nor counted.
    std::string set;
    std::string seen;
    std::vector<std::string> shown;  // the values but bookkeeping
    std::string shown_seen;
    for (const std::string& value : m_table.values) {
      set += quoted(value) + " = " + seen_value(value) + ", ";
      seen += (seen.empty() ? "" : ", ") + seen_value(value);
      const auto& own = m_table.bookkeeping;
      if (std::find(own.begin(), own.end(), value) == own.end()) {
        shown.push_back(value);
        shown_seen += (shown_seen.empty() ? "" : ", ") + seen_value(value);
      }
    }
    const std::string update_differing =
        " FROM " + staging_name(m_table) + " AS s WHERE " + key_match("t", "s") + " AND (" +
        joined(m_table.values, "t.") + ") IS DISTINCT FROM (" + seen + ")";
    if (m_table.bookkeeping.empty()) {
      m_counts.changed = m_work
                             .exec("UPDATE " + table + " AS t SET " + set +
                                   "updated_at = pg_catalog.now()" + update_differing)
                             .affected_rows();
    } else {
      // Only a row whose shown values differ moves its updated_at to now(), the
      // transaction's start, which no earlier transaction's row can hold: that tells the
      // changed rows among those written, in the one statement.
      const pqxx::row changed = exec_one_row(
          m_work, "WITH written AS (UPDATE " + table + " AS t SET " + set +
                      "updated_at = CASE WHEN (" + joined(shown, "t.") + ") IS DISTINCT FROM (" +
                      shown_seen + ") THEN pg_catalog.now() ELSE t.updated_at END" +
                      update_differing +
                      " RETURNING t.updated_at = pg_catalog.now() AS shown_changed) "
                      "SELECT pg_catalog.count(*) FILTER (WHERE shown_changed) FROM written");
      m_counts.changed = changed[0].as<std::size_t>();
    }
  }
  // New rows take the staged values as they are: with nothing stored to keep, a kept
  // column holds what the staged row says of that (e.g. usage unknown, not read).
  const std::string columns = joined(all_columns(m_table));
  const pqxx::result inserted = m_work.exec(
      "INSERT INTO " + table + " (" + columns + ") SELECT " + joined(all_columns(m_table), "s.") +
      " FROM " + staging_name(m_table) + " AS s WHERE NOT EXISTS (SELECT 1 FROM " + table +
      " AS t WHERE " + key_match("t", "s") + ")");
  m_counts.added = inserted.affected_rows();
  m_counts.unchanged = m_staged - m_counts.added - m_counts.changed;
  // After many new rows (a first sync), the table's statistics still describe it as it
  // was, often empty. The foreign-key checks of the child tables inserted next, planned
  // from those statistics, would then scan this table once per child row (quadratic in
  // a first sync). Fresh statistics make them index lookups.
  // ANALYZE in the transaction sees its own rows, and its result commits or rolls back
  // with it.
  constexpr std::size_t k_analyze_after_rows = 500;
  if (m_counts.added >= k_analyze_after_rows && m_counts.added * 5 >= m_staged) {
    m_work.exec("ANALYZE rbdsync." + m_table.name);
  }
}

void TableSync::remove(const DeleteScope& scope) {
  std::string sql = "DELETE FROM rbdsync." + m_table.name +
                    " AS t WHERE t.fsid = " + m_work.quote(scope.fsid) +
                    " AND NOT EXISTS (SELECT 1 FROM " + staging_name(m_table) + " AS s WHERE " +
                    key_match("t", "s") + ")";
  if (!scope.all_pools) {
    std::string ids;
    for (const std::int64_t id : scope.pool_ids) {
      ids += (ids.empty() ? "" : ",") + std::to_string(id);
    }
    sql += " AND t.pool_id = ANY('{" + ids + "}'::bigint[])";
  }
  if (!scope.kept_pool_ids.empty()) {
    std::string ids;
    for (const std::int64_t id : scope.kept_pool_ids) {
      ids += (ids.empty() ? "" : ",") + std::to_string(id);
    }
    sql += " AND t.pool_id <> ALL('{" + ids + "}'::bigint[])";
  }
  if (m_table.per_image) {
    sql += " AND NOT EXISTS (SELECT 1 FROM ";
    sql += k_stale_images_table;
    sql +=
        " AS x WHERE x.pool_id = t.pool_id AND x.namespace = t.namespace AND "
        "x.image_id = t.image_id)";
  }
  m_counts.removed = m_work.exec(sql).affected_rows();
}

}  // namespace rbdsync::db
