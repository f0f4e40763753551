#pragma once

/// What the libFuzzer harnesses share: a reader that cuts the fuzzer's bytes into the
/// arguments of a decoder, and a sink that keeps results from being optimised away.
/// The harnesses only look for sanitizer findings: a decoder that says "not understood"
/// (nullopt, a fallback reason) is doing its job.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace rbdsync::fuzz {

/// Results are added here so that no decoder call or field read is dropped.
inline volatile std::size_t g_sink = 0;

inline void keep(std::size_t value) {
  g_sink = g_sink + value;
}

template <typename T>
void keep(const std::optional<T>& value) {
  if (value) {
    keep(static_cast<std::size_t>(*value));
  }
}

/// Reads the fuzzer's bytes front to back. Past the end, numbers are 0 and byte runs
/// are cut short: every input means something, as libFuzzer prefers.
class FuzzInput {
 public:
  FuzzInput(const std::uint8_t* data, std::size_t size) : m_data(data), m_size(size) {}

  /// A little-endian integer.
  template <typename T>
  T number() {
    std::uint64_t result = 0;
    for (std::size_t i = 0; i < sizeof(T) && m_at < m_size; ++i) {
      result |= static_cast<std::uint64_t>(m_data[m_at++]) << (8 * i);
    }
    return static_cast<T>(result);
  }

  /// The next `length` bytes, or what is left.
  std::string bytes(std::size_t length) {
    const std::size_t taken = length < m_size - m_at ? length : m_size - m_at;
    std::string out(reinterpret_cast<const char*>(m_data + m_at), taken);
    m_at += taken;
    return out;
  }

  std::string rest() { return bytes(m_size - m_at); }
  bool empty() const { return m_at == m_size; }

 private:
  const std::uint8_t* m_data;
  std::size_t m_size;
  std::size_t m_at = 0;
};

}  // namespace rbdsync::fuzz
