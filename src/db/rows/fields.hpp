#pragma once

/// Inside db/ only: values as the fields of a row in PostgreSQL's text format (a Field: nullopt is
/// NULL), each converted one way for every table: text from Ceph as display text with its exact
/// bytes beside it, counters range-checked into bigint, masks, booleans, times.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/rows/table_sync.hpp"
#include "inventory/inventory.hpp"

namespace rbdsync::db {

/// Text from Ceph, as display text (common/text.hpp): always valid UTF-8 without NUL.
Field text(const std::string& value);

/// The exact bytes of a name (bytea hex input) when its display text had to escape
/// them; NULL when the name is plain text.
Field name_bytes(const std::string& value);

/// A JSON object's text member `key`, as display text, with the exact bytes beside it
/// as `<key>_bytes` (hex) when the text had to be escaped.
void put_text(nlohmann::json& object, const char* key, const std::string& value);

/// A signed integer.
Field number(std::int64_t value);

/// Ceph's counters are unsigned; PostgreSQL has no unsigned bigint. A value beyond
/// 2^63 is not a real size, so it is refused rather than stored wrapped. The message
/// names `what` (the record) and `which` (the value); it is only made when needed.
Field bigint(std::uint64_t value, const std::string& what, const char* which);

/// Bit masks are stored as the signed bigint with the same 64 bits.
Field mask(std::uint64_t value);

/// t or f.
Field boolean(bool value);

/// timestamptz input (timestamp_text()); NULL when there is none.
Field timestamp(const std::optional<inventory::Timestamp>& value);

/// text(), or NULL for an empty string.
Field optional_text(const std::string& value);

/// A JSON array of one object per item, as `entry` makes it.
template <typename Item, typename Entry>
Field json_list(const std::vector<Item>& items, Entry entry) {
  nlohmann::json list = nlohmann::json::array();
  for (const Item& item : items) {
    list.push_back(entry(item));
  }
  return list.dump();
}

/// `micros` (since the epoch, UTC) as timestamptz input, e.g. "2026-12-03 11:22:33.000042+00".
std::string timestamp_text(inventory::Timestamp micros);

/// A text[] literal whose elements are always quoted, e.g. {"object map invalid"}.
std::string text_array(const std::vector<std::string>& elements);

}  // namespace rbdsync::db
