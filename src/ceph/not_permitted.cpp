#include "ceph/not_permitted.hpp"

#include <cerrno>

#include "inventory/inventory.hpp"

namespace rbdsync::ceph {

namespace {

std::string reason(const char* what) {
  return std::string(inventory::k_not_permitted) + what;
}

}  // namespace

bool is_permission_errno(int error_number) {
  return error_number == EPERM || error_number == EACCES;
}

const std::string& parent_not_permitted() {
  static const std::string text = reason("this client cannot read the parent's pool");
  return text;
}

const std::string& children_not_permitted() {
  static const std::string text = reason("this client cannot read every pool its clones may be in");
  return text;
}

const std::string& group_not_permitted() {
  static const std::string text = reason("this client cannot read the group's pool");
  return text;
}

const std::string& data_pool_not_permitted() {
  static const std::string text = reason("this client cannot read the image's data pool");
  return text;
}

}  // namespace rbdsync::ceph
