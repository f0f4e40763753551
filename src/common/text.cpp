#include "common/text.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace rbdsync {

namespace {

constexpr char k_hex_digits[] = "0123456789abcdef";

/// The length of the valid UTF-8 sequence at `bytes[at]`, or 0 when there is none
/// (RFC 3629, table 3-7 of the Unicode standard).
std::size_t utf8_sequence(std::string_view bytes, std::size_t at) {
  const auto byte = [&bytes](std::size_t i) { return static_cast<std::uint8_t>(bytes[i]); };
  const std::uint8_t lead = byte(at);
  if (lead < 0x80) {
    return 1;
  }
  std::size_t length = 0;
  std::uint8_t low = 0x80;
  std::uint8_t high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    low = lead == 0xe0 ? 0xa0 : 0x80;   // no overlong forms
    high = lead == 0xed ? 0x9f : 0xbf;  // no surrogates
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    low = lead == 0xf0 ? 0x90 : 0x80;   // no overlong forms
    high = lead == 0xf4 ? 0x8f : 0xbf;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (bytes.size() - at < length) {
    return 0;
  }
  for (std::size_t i = 1; i < length; ++i) {
    const std::uint8_t next = byte(at + i);
    if (next < (i == 1 ? low : 0x80) || next > (i == 1 ? high : 0xbf)) {
      return 0;
    }
  }
  return length;
}

/// A C0 control or DEL (one byte), or a C1 control (U+0080..U+009F, two bytes: some
/// terminals obey U+009B as the start of an escape sequence).
bool is_control(std::string_view bytes, std::size_t at, std::size_t length) {
  const auto byte = static_cast<std::uint8_t>(bytes[at]);
  if (length == 1) {
    return byte < 0x20 || byte == 0x7f;
  }
  return length == 2 && byte == 0xc2 && static_cast<std::uint8_t>(bytes[at + 1]) <= 0x9f;
}

/// Whether the sequence of `length` bytes at `at` (0: not valid UTF-8) becomes \xHH.
bool hex_escaped(std::string_view bytes, std::size_t at, std::size_t length, Controls controls) {
  return length == 0 || bytes[at] == '\0' ||
         (controls == Controls::escape && is_control(bytes, at, length));
}

void append_hex_escape(std::string& out, char c) {
  const auto byte = static_cast<std::uint8_t>(c);
  out += "\\x";
  out += k_hex_digits[byte >> 4];
  out += k_hex_digits[byte & 0xf];
}

/// A backslash makes the whole text escaped too: that keeps the escape one-to-one, as
/// escaped text always holds a backslash and plain text never does.
bool needs_escape(std::string_view bytes, Controls controls) {
  for (std::size_t at = 0; at < bytes.size();) {
    const std::size_t length = utf8_sequence(bytes, at);
    if (hex_escaped(bytes, at, length, controls) || bytes[at] == '\\') {
      return true;
    }
    at += length;
  }
  return false;
}

}  // namespace

bool is_plain_text(std::string_view bytes) {
  return !needs_escape(bytes, Controls::keep);
}

bool is_printable_line(std::string_view bytes) {
  for (std::size_t at = 0; at < bytes.size();) {
    const std::size_t length = utf8_sequence(bytes, at);
    if (hex_escaped(bytes, at, length, Controls::escape)) {
      return false;
    }
    at += length;
  }
  return true;
}

std::string display_text(std::string_view bytes, Controls controls) {
  if (!needs_escape(bytes, controls)) {
    return std::string(bytes);
  }
  std::string out;
  out.reserve(bytes.size() + 8);
  for (std::size_t at = 0; at < bytes.size();) {
    const std::size_t length = utf8_sequence(bytes, at);
    if (hex_escaped(bytes, at, length, controls)) {
      // Byte by byte: an invalid sequence has no length of its own, a C1 control two.
      const std::size_t escaped = std::max<std::size_t>(length, 1);
      for (std::size_t i = 0; i < escaped; ++i) {
        append_hex_escape(out, bytes[at + i]);
      }
      at += escaped;
    } else if (bytes[at] == '\\') {
      out += "\\\\";
      ++at;
    } else {
      out.append(bytes.substr(at, length));
      at += length;
    }
  }
  return out;
}

std::string hex_u64(std::uint64_t value) {
  std::string out(16, '0');
  for (std::size_t at = out.size(); at > 0; --at, value >>= 4U) {
    out[at - 1] = k_hex_digits[value & 0xfU];
  }
  return out;
}

std::string hex_bytes(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char c : bytes) {
    const auto byte = static_cast<std::uint8_t>(c);
    out += k_hex_digits[byte >> 4];
    out += k_hex_digits[byte & 0xf];
  }
  return out;
}

}  // namespace rbdsync
