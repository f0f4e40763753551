#include "ceph/pool_figures.hpp"

#include <cstdint>
#include <map>

#include <nlohmann/json.hpp>

#include "common/error.hpp"

namespace rbdsync::ceph {

using inventory::Pool;

namespace {

// pg_pool_t::TYPE_REPLICATED and TYPE_ERASURE (osd/osd_types.h); 2 was the long-gone raid4.
constexpr int k_type_replicated = 1;
constexpr int k_type_erasure = 3;

nlohmann::json parse(const std::string& json, const char* command) {
  nlohmann::json parsed = nlohmann::json::parse(json, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    throw Error(ExitCode::data, std::string("the mon's answer to '") + command + "' is not JSON",
                "check that the mons run Ceph Pacific or later");
  }
  return parsed;
}

std::map<std::int64_t, Pool*> by_id(std::vector<Pool>& pools) {
  std::map<std::int64_t, Pool*> index;
  for (Pool& pool : pools) {
    index[pool.id] = &pool;
  }
  return index;
}

template <typename T>
T number(const nlohmann::json& object, const char* key, const char* command) {
  const auto found = object.find(key);
  if (found == object.end() || !found->is_number()) {
    throw Error(ExitCode::data,
                std::string("the mon's answer to '") + command + "' has no number '" + key + "'",
                "check that the mons run Ceph Pacific or later");
  }
  return found->get<T>();
}

}  // namespace

void apply_osd_dump(const std::string& json, std::vector<Pool>& pools) {
  constexpr const char* command = "osd dump";
  const nlohmann::json dump = parse(json, command);
  const auto index = by_id(pools);
  const auto listed = dump.find("pools");
  if (listed == dump.end() || !listed->is_array()) {
    throw Error(ExitCode::data, "the mon's answer to 'osd dump' has no pool list",
                "check that the mons run Ceph Pacific or later");
  }
  for (const nlohmann::json& entry : *listed) {
    const auto found = index.find(number<std::int64_t>(entry, "pool", command));
    if (found == index.end()) {
      continue;
    }
    Pool& pool = *found->second;
    const int type = number<int>(entry, "type", command);
    if (type == k_type_replicated) {
      pool.type = "replicated";
    } else if (type == k_type_erasure) {
      pool.type = "erasure";
    } else {
      pool.type = "type-" + std::to_string(type);
    }
    pool.replica_size = number<std::int64_t>(entry, "size", command);
    pool.min_size = number<std::int64_t>(entry, "min_size", command);
    pool.pg_num = number<std::int64_t>(entry, "pg_num", command);
  }
}

void apply_df(const std::string& json, std::vector<Pool>& pools) {
  constexpr const char* command = "df detail";
  const nlohmann::json df = parse(json, command);
  const auto index = by_id(pools);
  const auto listed = df.find("pools");
  if (listed == df.end() || !listed->is_array()) {
    throw Error(ExitCode::data, "the mon's answer to 'df detail' has no pool list",
                "check that the mons run Ceph Pacific or later");
  }
  for (const nlohmann::json& entry : *listed) {
    const auto found = index.find(number<std::int64_t>(entry, "id", command));
    if (found == index.end()) {
      continue;
    }
    const auto stats = entry.find("stats");
    if (stats == entry.end() || !stats->is_object()) {
      throw Error(ExitCode::data, "the mon's answer to 'df detail' has a pool without stats",
                  "check that the mons run Ceph Pacific or later");
    }
    Pool& pool = *found->second;
    pool.stored_bytes = number<std::uint64_t>(*stats, "stored", command);
    pool.objects = number<std::uint64_t>(*stats, "objects", command);
    pool.used_bytes = number<std::uint64_t>(*stats, "bytes_used", command);
    pool.max_avail_bytes = number<std::uint64_t>(*stats, "max_avail", command);
  }
}

}  // namespace rbdsync::ceph
