// libFuzzer harness: lock::decode_record() (the JSON holder record in the lock file,
// which any local user who can write that file controls) over the whole input.

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_input.hpp"
#include "lock/holder_record.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto record = rbdsync::lock::decode_record(text);
  if (record) {
    for (const auto* run : {record->holder ? &*record->holder : nullptr,
                            record->last_run ? &*record->last_run : nullptr}) {
      if (run != nullptr) {
        rbdsync::fuzz::keep(run->run_id.size() + run->host.size() + run->message.size() +
                            static_cast<std::size_t>(run->pid) + run->done +
                            static_cast<std::size_t>(run->exit_code));
      }
    }
  }
  return 0;
}
