#pragma once

#include <string>
#include <vector>

#include "inventory/inventory.hpp"

namespace rbdsync::ceph {

/// Fills type, replica_size, min_size and pg_num of `pools` from the output of the mon
/// command `{"prefix":"osd dump","format":"json"}`, matching pools by id. A pool missing
/// from the dump (deleted meanwhile) keeps its zeros. Throws Error(ExitCode::data) when
/// the text is not the JSON that command returns.
void apply_osd_dump(const std::string& json, std::vector<inventory::Pool>& pools);

/// Fills stored_bytes, objects, used_bytes (raw) and max_avail_bytes of `pools` from the
/// output of `{"prefix":"df","detail":"detail","format":"json"}`, as apply_osd_dump().
void apply_df(const std::string& json, std::vector<inventory::Pool>& pools);

}  // namespace rbdsync::ceph
