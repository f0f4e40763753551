#include "db/migrations.hpp"

namespace rbdsync::db {

int latest_schema_version() {
  const auto& all = migrations();
  return all.empty() ? 0 : all.back().version;
}

}  // namespace rbdsync::db
