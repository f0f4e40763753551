#pragma once

/// Decodes the reply of cls "lock" get_info on an image's header (who holds `rbd_lock`)
/// and encodes its request. Plain bytes in, plain values out, as header_decoder.hpp.

#include <optional>
#include <string>
#include <vector>

#include "inventory/inventory.hpp"

namespace rbdsync::ceph {

/// The lockers of `rbd_lock` as the cls "lock" get_info reply lists them, with the lock
/// type; nullopt when the reply is not understood.
struct LockInfo {
  std::vector<inventory::Locker> lockers;
  bool exclusive = false;
};
std::optional<LockInfo> decode_lock_info(const std::string& bytes);

/// The cls "lock" get_info request for the lock named `name`.
std::string encode_lock_info_request(const std::string& name);

}  // namespace rbdsync::ceph
