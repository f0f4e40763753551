#include "ceph/pool_figures.hpp"

#include <cstdint>
#include <limits>
#include <map>
#include <vector>

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

/// The integer `key` of `object` as a T. A float (1e300, or an integer too large for
/// 64 bits, which the parser makes one) or an integer beyond T's range is bad data:
/// casting it would be undefined behaviour, or a wrong figure.
template <typename T>
T number(const nlohmann::json& object, const char* key, const char* command) {
  const auto found = object.find(key);
  if (found == object.end() || !found->is_number()) {
    throw Error(ExitCode::data,
                std::string("the mon's answer to '") + command + "' has no number '" + key + "'",
                "check that the mons run Ceph Pacific or later");
  }
  bool fits = false;
  if (found->is_number_unsigned()) {
    fits = found->get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<T>::max());
  } else if (found->is_number_integer()) {
    const auto value = found->get<std::int64_t>();
    fits = value >= 0 ? static_cast<std::uint64_t>(value) <=
                            static_cast<std::uint64_t>(std::numeric_limits<T>::max())
                      : std::numeric_limits<T>::is_signed &&
                            value >= static_cast<std::int64_t>(std::numeric_limits<T>::min());
  }
  if (!fits) {
    throw Error(ExitCode::data,
                std::string("the mon's answer to '") + command + "' has '" + key +
                    "' = " + found->dump() + ", not an integer rbd-sync can store",
                "check the cluster's state (ceph " + std::string(command) + ")");
  }
  return found->get<T>();
}

/// Calls `apply(pool, entry)` for each entry of the "pools" list in the answer `json` to
/// `command` that names one of `pools` by `id_key`, in the answer's order; entries of
/// other pools are skipped.
template <typename Apply>
void for_each_pool_entry(const std::string& json, const char* command, const char* id_key,
                         std::vector<Pool>& pools, Apply apply) {
  const nlohmann::json answer = parse(json, command);
  const auto listed = answer.find("pools");
  if (listed == answer.end() || !listed->is_array()) {
    throw Error(ExitCode::data,
                std::string("the mon's answer to '") + command + "' has no pool list",
                "check that the mons run Ceph Pacific or later");
  }
  std::map<std::int64_t, Pool*> by_id;
  for (Pool& pool : pools) {
    by_id[pool.id] = &pool;
  }
  for (const nlohmann::json& entry : *listed) {
    const auto found = by_id.find(number<std::int64_t>(entry, id_key, command));
    if (found != by_id.end()) {
      apply(*found->second, entry);
    }
  }
}

}  // namespace

void apply_osd_dump(const std::string& json, std::vector<Pool>& pools) {
  constexpr const char* command = "osd dump";
  for_each_pool_entry(json, command, "pool", pools, [&](Pool& pool, const nlohmann::json& entry) {
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
  });
}

void apply_df(const std::string& json, std::vector<Pool>& pools) {
  constexpr const char* command = "df detail";
  for_each_pool_entry(json, command, "id", pools, [&](Pool& pool, const nlohmann::json& entry) {
    const auto stats = entry.find("stats");
    if (stats == entry.end() || !stats->is_object()) {
      throw Error(ExitCode::data, "the mon's answer to 'df detail' has a pool without stats",
                  "check that the mons run Ceph Pacific or later");
    }
    pool.stored_bytes = number<std::uint64_t>(*stats, "stored", command);
    pool.objects = number<std::uint64_t>(*stats, "objects", command);
    pool.used_bytes = number<std::uint64_t>(*stats, "bytes_used", command);
    pool.max_avail_bytes = number<std::uint64_t>(*stats, "max_avail", command);
  });
}

}  // namespace rbdsync::ceph
