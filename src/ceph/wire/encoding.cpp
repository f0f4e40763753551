#include "ceph/wire/encoding.hpp"

namespace rbdsync::ceph {

std::string Decoder::text() {
  const auto length = number<std::uint32_t>();
  return raw(length);
}

std::string Decoder::raw(std::size_t length) {
  if (!take(length)) {
    return {};
  }
  std::string value(m_bytes.substr(m_at, length));
  m_at += length;
  return value;
}

void Decoder::skip(std::size_t length) {
  if (take(length)) {
    m_at += length;
  }
}

std::uint32_t Decoder::count(std::size_t min_element_bytes) {
  const auto elements = number<std::uint32_t>();
  if (min_element_bytes > 0 && elements > remaining() / min_element_bytes) {
    fail();
    return 0;
  }
  return elements;
}

std::optional<std::int64_t> utime_microseconds(std::int64_t seconds, std::int64_t nanoseconds) {
  if (seconds == 0 && nanoseconds == 0) {
    return std::nullopt;
  }
  return seconds * 1'000'000 + nanoseconds / 1000;
}

std::optional<std::int64_t> Decoder::time() {
  const auto seconds = number<std::uint32_t>();
  const auto nanoseconds = number<std::uint32_t>();
  return utime_microseconds(seconds, nanoseconds);
}

Decoder Decoder::envelope(std::uint8_t max_compat, std::uint8_t* version) {
  const auto struct_v = number<std::uint8_t>();
  const auto compat = number<std::uint8_t>();
  const auto length = number<std::uint32_t>();
  if (version != nullptr) {
    *version = struct_v;
  }
  if (compat > max_compat) {
    fail_unsupported();
  }
  if (!take(length)) {
    return {std::string_view(), m_state};
  }
  const std::size_t body_at = m_at;
  m_at += length;
  return {m_bytes.substr(body_at, length), m_state};
}

std::optional<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    return std::nullopt;
  }
  return sum;
}

std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) {
    return std::nullopt;
  }
  return product;
}

}  // namespace rbdsync::ceph
