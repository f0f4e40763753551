// libFuzzer harness: apply_df() and apply_osd_dump() (the mon's JSON answers to
// `df detail` and `osd dump`) over the whole input, for pools 0 to 7. A number too
// large for its field must be bad data (Error), never an undefined cast.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ceph/pool_figures.hpp"
#include "common/error.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string json(reinterpret_cast<const char*>(data), size);
  std::vector<rbdsync::inventory::Pool> pools(8);
  for (std::size_t i = 0; i < pools.size(); ++i) {
    pools[i].id = static_cast<std::int64_t>(i);
  }
  for (const auto apply : {&rbdsync::ceph::apply_df, &rbdsync::ceph::apply_osd_dump}) {
    try {
      apply(json, pools);
    } catch (const rbdsync::Error& error) {
      rbdsync::fuzz::keep(static_cast<std::size_t>(error.code()));
    }
  }
  for (const auto& pool : pools) {
    rbdsync::fuzz::keep(static_cast<std::size_t>(pool.stored_bytes + pool.max_avail_bytes +
                                                 static_cast<std::uint64_t>(pool.pg_num)));
  }
  return 0;
}
