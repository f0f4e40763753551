#pragma once

/// The one reader of Ceph's wire encoding (include/encoding.h: little-endian integers,
/// u32-length strings and containers, ENCODE_START envelopes) that every decoder in
/// ceph/ uses. What it reads comes from anyone with write access to a pool, so it is
/// built never to leave its bytes: every length is checked before it is used, and the
/// first failed read fails the whole decoding, envelopes included, for good.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rbdsync::ceph {

/// The smallest ENCODE_START envelope: version, compat, length.
inline constexpr std::size_t k_envelope_bytes = 6;

/// A utime_t (seconds and nanoseconds: a header's timestamps, a snapshot's, a trash
/// entry's) in microseconds since the epoch. Zero, never set, is no time: librbd leaves
/// the timestamps of images made before Mimic so, and `rbd info` hides them.
std::optional<std::int64_t> utime_microseconds(std::int64_t seconds, std::int64_t nanoseconds);

class Decoder {
 public:
  /// Reads `bytes`, which must outlive the decoder and every envelope taken from it.
  explicit Decoder(std::string_view bytes) : m_bytes(bytes), m_state(&m_own_state) {}

  // An envelope shares its root's failure flag by address: no copies, no moves (C++17
  // still returns envelopes by value, as prvalues).
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;
  Decoder(Decoder&&) = delete;
  Decoder& operator=(Decoder&&) = delete;
  ~Decoder() = default;

  /// A little-endian unsigned or signed integer; 0 once failed.
  template <typename T>
  T number() {
    static_assert(sizeof(T) <= sizeof(std::uint64_t), "integers up to 64 bits");
    if (!take(sizeof(T))) {
      return T{};
    }
    std::uint64_t result = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      result |= static_cast<std::uint64_t>(static_cast<unsigned char>(m_bytes[m_at + i]))
                << (8 * i);
    }
    m_at += sizeof(T);
    return static_cast<T>(result);
  }

  /// A string: u32 length, then that many bytes (any bytes: names are not checked here).
  std::string text();

  /// `length` bytes as they are.
  std::string raw(std::size_t length);

  /// Skips `length` bytes.
  void skip(std::size_t length);

  /// An element count (u32) of a container whose elements take at least
  /// `min_element_bytes` each; fails when the remaining bytes cannot hold that many, so
  /// that a damaged count never makes the caller reserve or loop for billions.
  std::uint32_t count(std::size_t min_element_bytes);

  /// utime_t: seconds and nanoseconds, as utime_microseconds().
  std::optional<std::int64_t> time();

  /// ENCODE_START's envelope: version, compat version, length. Returns a decoder of the
  /// body, which shares this decoder's failure; this one moves past the body. Fails
  /// when the body is longer than what remains or its compat is above `max_compat`.
  Decoder envelope(std::uint8_t max_compat, std::uint8_t* version = nullptr);

  /// Every read so far succeeded (here, in its envelopes and in its parents).
  bool ok() const { return !m_state->failed; }
  /// Failed only because an envelope's compat version is newer than this decoder knows:
  /// a newer Ceph, not damage.
  bool unsupported() const { return m_state->failed && m_state->unsupported; }
  /// ok(), and every byte was read.
  bool at_end() const { return ok() && m_at == m_bytes.size(); }
  std::size_t remaining() const { return m_bytes.size() - m_at; }

  /// Marks the decoding failed, e.g. for a value out of its range.
  void fail() { m_state->failed = true; }

  /// Marks the decoding failed for a version this decoder does not read (an older or
  /// newer Ceph's encoding), not for damage.
  void fail_unsupported() {
    if (ok()) {
      m_state->failed = true;
      m_state->unsupported = true;
    }
  }

 private:
  struct State {
    bool failed = false;
    bool unsupported = false;  ///< the first failure was a compat version
  };

  Decoder(std::string_view bytes, State* state) : m_bytes(bytes), m_state(state) {}

  /// True when `length` more bytes can be read; else fails.
  bool take(std::size_t length) {
    if (m_state->failed || remaining() < length) {
      m_state->failed = true;
      return false;
    }
    return true;
  }

  std::string_view m_bytes;
  std::size_t m_at = 0;
  State m_own_state;
  State* m_state;  ///< the root's: one failure fails the whole decoding
};

/// Checked arithmetic for figures computed from decoded values: nullopt on overflow.
std::optional<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b);
std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b);

}  // namespace rbdsync::ceph
