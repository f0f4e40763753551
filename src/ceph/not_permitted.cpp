#include "ceph/not_permitted.hpp"

#include <array>
#include <cstddef>

#include "ceph/ceph_error.hpp"
#include "inventory/inventory.hpp"

namespace rbdsync::ceph {

namespace {

std::string reason(const char* what) {
  return std::string(inventory::k_not_permitted) + what;
}

}  // namespace

bool is_permission_errno(int error_number) {
  return errno_class(error_number) == ErrnoClass::permission;
}

const std::string& not_permitted_reason(NotPermitted what) {
  // In NotPermitted's order.
  static const std::array<std::string, 4> k_reasons = {
      reason("this client cannot read the parent's pool"),
      reason("this client cannot read every pool its clones may be in"),
      reason("this client cannot read the group's pool"),
      reason("this client cannot read the image's data pool"),
  };
  return k_reasons.at(static_cast<std::size_t>(what));
}

}  // namespace rbdsync::ceph
