// libFuzzer harness: decode_snapshot_record() (a `snapshot_<id>` value, as the clone
// links read it) over the whole input.

#include <cstddef>
#include <cstdint>
#include <string>

#include "ceph/wire/header_decoder.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const auto snap = rbdsync::ceph::decode_snapshot_record(bytes);
  if (snap) {
    rbdsync::fuzz::keep(snap->id + snap->name.size() + snap->size_bytes + snap->child_count +
                        snap->namespace_type + (snap->timestamp ? 1 : 0) +
                        (snap->mirror ? snap->mirror->peer_uuids.size() + snap->mirror->state : 0));
  }
  return 0;
}
