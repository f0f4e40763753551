#include "db/rows/fields.hpp"

#include <ctime>
#include <limits>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/text.hpp"

namespace rbdsync::db {

/// Text from Ceph, as display text (common/text.hpp): always valid UTF-8 without NUL.
Field text(const std::string& value) {
  return display_text(value);
}

/// The exact bytes of a name (bytea hex input) when its display text had to escape
/// them; NULL when the name is plain text.
Field name_bytes(const std::string& value) {
  if (is_plain_text(value)) {
    return std::nullopt;
  }
  return "\\x" + hex_bytes(value);
}

/// A JSON object's text member `key`, as display text, with the exact bytes beside it
/// as `<key>_bytes` (hex) when the text had to be escaped.
void put_text(nlohmann::json& object, const char* key, const std::string& value) {
  object[key] = display_text(value);
  if (!is_plain_text(value)) {
    object[std::string(key) + "_bytes"] = hex_bytes(value);
  }
}

Field number(std::int64_t value) {
  return std::to_string(value);
}

/// Ceph's counters are unsigned; PostgreSQL has no unsigned bigint. A value beyond
/// 2^63 is not a real size, so it is refused rather than stored wrapped. The message
/// names `what` (the record) and `which` (the value); it is only made when needed.
Field bigint(std::uint64_t value, const std::string& what, const char* which) {
  if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    throw Error(ExitCode::data,
                what + which + " (" + std::to_string(value) + ") does not fit a bigint",
                "report this to the Ceph administrators; it cannot be stored");
  }
  return std::to_string(value);
}

/// Bit masks are stored as the signed bigint with the same 64 bits.
Field mask(std::uint64_t value) {
  return std::to_string(static_cast<std::int64_t>(value));
}

Field boolean(bool value) {
  return std::string(value ? "t" : "f");
}

Field timestamp(const std::optional<inventory::Timestamp>& value) {
  if (!value) {
    return std::nullopt;
  }
  return timestamp_text(*value);
}

Field optional_text(const std::string& value) {
  if (value.empty()) {
    return std::nullopt;
  }
  return text(value);
}

std::string timestamp_text(inventory::Timestamp micros) {
  // Floor division, so that times before 1970 still come out right.
  std::int64_t seconds = micros / 1000000;
  std::int64_t fraction = micros % 1000000;
  if (fraction < 0) {
    fraction += 1000000;
    --seconds;
  }
  const auto as_time = static_cast<std::time_t>(seconds);
  std::tm utc{};
  gmtime_r(&as_time, &utc);
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:06}+00", utc.tm_year + 1900,
                     utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, fraction);
}

std::string text_array(const std::vector<std::string>& elements) {
  std::string literal = "{";
  for (const std::string& element : elements) {
    if (literal.size() > 1) {
      literal += ',';
    }
    literal += '"';
    for (const char c : element) {
      if (c == '"' || c == '\\') {
        literal += '\\';
      }
      literal += c;
    }
    literal += '"';
  }
  return literal + "}";
}

}  // namespace rbdsync::db
