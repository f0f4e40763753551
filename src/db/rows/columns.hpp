#pragma once

/// Inside db/ only: a table's columns declared once, each with its name, its type as the
/// staging table declares it and the function that gives its value in a row. The table
/// the SQL statements name (Table) and the rows COPYed into it both come from that one
/// list, so a column's name and its value cannot drift apart.

#include <algorithm>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/text.hpp"
#include "db/rows/table_sync.hpp"

namespace rbdsync::db {

inline constexpr bool k_not_null = true;
inline constexpr bool k_nullable = false;

/// One column of rows made from an `In`.
template <typename In>
struct Column {
  const char* name;
  const char* sql_type;  ///< as PostgreSQL's format_type() spells it
  bool not_null;         ///< k_not_null or k_nullable
  /// A plain function, not std::function: called for every column of every row.
  Field (*value)(const In&);
};

template <typename In>
using ColumnList = std::vector<Column<In>>;

/// The definitions of `lists`' columns, in order, for a staging table.
template <typename In>
std::vector<ColumnType> column_types(std::initializer_list<const ColumnList<In>*> lists) {
  std::vector<ColumnType> types;
  for (const ColumnList<In>* list : lists) {
    for (const Column<In>& column : *list) {
      types.push_back(ColumnType{column.name, column.sql_type, column.not_null});
    }
  }
  return types;
}

/// Appends the values of `columns` for `in` to `row`.
template <typename In>
void add_values(const ColumnList<In>& columns, const In& in, Row& row) {
  for (const Column<In>& column : columns) {
    row.push_back(column.value(in));
  }
}

/// A staging-only boolean column (Table::keep_flag): true in a row whose `kept` value
/// columns were not read again and keep what the stored row holds.
template <typename In>
struct KeepFlag {
  const char* name = nullptr;  ///< none: the table keeps nothing
  bool (*value)(const In&) = nullptr;
  std::vector<const char*> kept;  ///< names of value columns
};

/// An inventory table of schema rbdsync: its rows begin with the cluster's fsid, which
/// every `In` carries, then the keys, then the values, then the keep flag if any.
template <typename In>
struct Columns {
  const char* name;
  ColumnList<In> keys;  ///< after fsid
  ColumnList<In> values;
  bool per_image = false;
  KeepFlag<In> keep;

  Table table() const {
    Table table;
    table.name = name;
    table.per_image = per_image;
    const ColumnList<In> fsid{fsid_column()};
    for (const Column<In>& column : keys) {
      table.keys.emplace_back(column.name);
    }
    for (const Column<In>& column : values) {
      table.values.emplace_back(column.name);
    }
    table.types = column_types<In>({&fsid, &keys, &values});
    if (keep.name != nullptr) {
      table.keep_flag = keep.name;
    }
    for (const char* kept : keep.kept) {
      // A declaration error, met by the first sync and by every test of the table.
      if (keep.name == nullptr ||
          std::find(table.values.begin(), table.values.end(), kept) == table.values.end()) {
        throw std::logic_error(std::string(name) + "." + kept +
                               " is kept, but is no value column or there is no keep flag");
      }
      table.kept.emplace_back(kept);
    }
    return table;
  }

  Row row(const In& in) const {
    Row row;
    row.reserve(1 + keys.size() + values.size() + (keep.name != nullptr ? 1 : 0));
    row.push_back(fsid_column().value(in));
    add_values(keys, in, row);
    add_values(values, in, row);
    if (keep.name != nullptr) {
      row.push_back(std::string(keep.value(in) ? "t" : "f"));
    }
    return row;
  }

 private:
  static Column<In> fsid_column() {
    return {"fsid", "uuid", k_not_null,
            [](const In& in) -> Field { return display_text(in.fsid); }};
  }
};

}  // namespace rbdsync::db
