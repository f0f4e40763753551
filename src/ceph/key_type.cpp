#include "ceph/key_type.hpp"

namespace rbdsync::ceph {

namespace {

/// The value of base64 character `c`, or -1.
int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') {
    return c - 'A';
  }
  if (c >= 'a' && c <= 'z') {
    return c - 'a' + 26;
  }
  if (c >= '0' && c <= '9') {
    return c - '0' + 52;
  }
  if (c == '+') {
    return 62;
  }
  if (c == '/') {
    return 63;
  }
  return -1;
}

std::string_view trimmed(std::string_view text) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!text.empty() && blank(text.front())) {
    text.remove_prefix(1);
  }
  while (!text.empty() && blank(text.back())) {
    text.remove_suffix(1);
  }
  return text;
}

}  // namespace

std::optional<std::uint16_t> key_type(std::string_view key) {
  // Four characters are 24 bits: the type's two bytes and one more.
  if (key.size() < 4) {
    return std::nullopt;
  }
  std::uint32_t bits = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    const int value = base64_value(key[i]);
    if (value < 0) {
      return std::nullopt;
    }
    bits = (bits << 6U) | static_cast<std::uint32_t>(value);
  }
  const auto first = static_cast<std::uint16_t>((bits >> 16U) & 0xffU);
  const auto second = static_cast<std::uint16_t>((bits >> 8U) & 0xffU);
  return static_cast<std::uint16_t>(first | (second << 8U));
}

std::optional<std::string> keyring_key(std::string_view keyring, std::string_view name) {
  bool in_section = false;
  while (!keyring.empty()) {
    const std::size_t end = keyring.find('\n');
    const std::string_view line =
        trimmed(keyring.substr(0, end == std::string_view::npos ? keyring.size() : end));
    keyring.remove_prefix(end == std::string_view::npos ? keyring.size() : end + 1);
    if (!line.empty() && line.front() == '[' && line.back() == ']') {
      in_section = trimmed(line.substr(1, line.size() - 2)) == name;
      continue;
    }
    const std::size_t equals = line.find('=');
    if (in_section && equals != std::string_view::npos &&
        trimmed(line.substr(0, equals)) == "key") {
      return std::string(trimmed(line.substr(equals + 1)));
    }
  }
  return std::nullopt;
}

std::string key_type_name(std::uint16_t type) {
  switch (type) {
    case k_key_type_aes:
      return "aes";
    case k_key_type_aes256k:
      return "aes256k";
    default:
      return "type " + std::to_string(type);
  }
}

}  // namespace rbdsync::ceph
