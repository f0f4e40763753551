#pragma once

#include <vector>

namespace rbdsync::db {

/// One schema migration, from sql/NNN_name.sql, compiled into the binary.
struct Migration {
  int version;
  const char* name;
  const char* sql;
};

/// Every migration, in ascending version order (generated at build time).
const std::vector<Migration>& migrations();

/// The schema version this binary reads and writes: the newest migration's.
int latest_schema_version();

}  // namespace rbdsync::db
