#include "common/uuid.hpp"

#include <array>
#include <cstdint>
#include <random>

namespace rbdsync {

std::string random_uuid() {
  std::random_device entropy;  // getrandom(2) on Linux
  std::array<std::uint8_t, 16> bytes{};
  for (auto& byte : bytes) {
    byte = static_cast<std::uint8_t>(entropy() & 0xff);
  }
  bytes[6] = static_cast<std::uint8_t>((bytes[6] & 0x0f) | 0x40);  // version 4
  bytes[8] = static_cast<std::uint8_t>((bytes[8] & 0x3f) | 0x80);  // RFC 4122 variant
  std::string text;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) {
      text += '-';
    }
    constexpr const char* k_hex = "0123456789abcdef";
    text += k_hex[bytes[i] >> 4];
    text += k_hex[bytes[i] & 0x0f];
  }
  return text;
}

bool is_uuid(std::string_view text) {
  constexpr std::string_view k_form = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
  if (text.size() != k_form.size()) {
    return false;
  }
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (k_form[i] == '-' ? c != '-' : !hex) {
      return false;
    }
  }
  return true;
}

}  // namespace rbdsync
