#include "ceph/wire/lock_info.hpp"

#include <cstdint>
#include <utility>

#include "ceph/wire/encoding.hpp"
#include "inventory/librbd_names.hpp"

namespace rbdsync::ceph {

namespace {

constexpr std::uint8_t k_lock_exclusive = 1;

/// entity_addr_t as encoded with the MSG_ADDR2 feature, printed as librbd's
/// list_lockers() prints it (entity_addr_t::get_legacy_str(): "ip:port/nonce").
std::optional<std::string> decode_address(Decoder& in) {
  if (in.number<std::uint8_t>() != 1) {
    return std::nullopt;  // the pre-Nautilus encoding
  }
  Decoder body = in.envelope(1);
  body.number<std::uint32_t>();  // type: legacy, msgr2, any
  const auto nonce = body.number<std::uint32_t>();
  const auto length = body.number<std::uint32_t>();
  const std::string address = body.raw(length);
  if (!body.ok() || length < 8) {
    return std::nullopt;
  }
  const auto family = static_cast<std::uint16_t>(static_cast<unsigned char>(address[0]) |
                                                 static_cast<unsigned char>(address[1]) << 8);
  if (family != 2) {  // AF_INET; IPv6 lockers go to librbd
    return std::nullopt;
  }
  const auto byte = [&address](std::size_t i) {
    return static_cast<unsigned>(static_cast<unsigned char>(address[i]));
  };
  const unsigned port = byte(2) << 8 | byte(3);
  return std::to_string(byte(4)) + "." + std::to_string(byte(5)) + "." + std::to_string(byte(6)) +
         "." + std::to_string(byte(7)) + ":" + std::to_string(port) + "/" + std::to_string(nonce);
}

}  // namespace

std::string encode_lock_info_request(const std::string& name) {
  // cls_lock_get_info_op: ENCODE_START(1, 1) { string name }.
  std::string body;
  const auto put32 = [](std::string& out, std::uint32_t value) {
    for (int i = 0; i < 4; ++i) {
      out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
    }
  };
  put32(body, static_cast<std::uint32_t>(name.size()));
  body += name;
  std::string out{'\x01', '\x01'};
  put32(out, static_cast<std::uint32_t>(body.size()));
  return out + body;
}

std::optional<LockInfo> decode_lock_info(const std::string& bytes) {
  Decoder outer(bytes);
  Decoder in = outer.envelope(1);
  const auto count = in.count(2 * k_envelope_bytes);
  LockInfo info;
  for (std::uint32_t i = 0; i < count && in.ok(); ++i) {
    Decoder id = in.envelope(1);
    const auto type = id.number<std::uint8_t>();
    const auto number = id.number<std::int64_t>();
    inventory::Locker locker;
    locker.client = inventory::entity_type_name(type) + "." + std::to_string(number);
    locker.cookie = id.text();
    Decoder details = in.envelope(1);
    details.number<std::uint64_t>();  // expiration
    auto address = decode_address(details);
    if (!in.ok() || !address) {
      return std::nullopt;
    }
    locker.address = std::move(*address);
    info.lockers.push_back(std::move(locker));
  }
  const auto type = in.number<std::uint8_t>();
  in.text();  // tag
  if (!outer.at_end()) {
    return std::nullopt;
  }
  info.exclusive = type == k_lock_exclusive;
  return info;
}

}  // namespace rbdsync::ceph
