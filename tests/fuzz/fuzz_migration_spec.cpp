// libFuzzer harness: decode_migration_spec() (an image header's "migration" value) over
// the whole input.

#include <cstddef>
#include <cstdint>
#include <string>

#include "ceph/wire/migration_spec.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const rbdsync::ceph::MigrationSelf k_self{3, "", "img-mig-dst", "108f193f53b9"};
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const auto migration = rbdsync::ceph::decode_migration_spec(bytes, k_self);
  if (migration) {
    rbdsync::fuzz::keep(migration->state.size() + migration->state_description.size() +
                        migration->source_image_name.size() + migration->source_image_id.size() +
                        migration->destination_namespace.size());
  }
  return 0;
}
