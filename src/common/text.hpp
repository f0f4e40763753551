#pragma once

/// Text from outside (Ceph's names, cookies, addresses, configuration values) is bytes:
/// anyone with write access to a pool can store any, old clusters hold Latin-1 names.
/// PostgreSQL's text and jsonb, JSON and one-line log messages take only valid UTF-8
/// (and no NUL), so such bytes are shown through one documented, reversible escape
/// (docs/schema.md, "Names of any bytes"): valid UTF-8 without NUL or backslash is left
/// exactly as it is; any other text is escaped: every backslash is doubled and every
/// byte that is not part of a valid UTF-8 sequence (and every NUL) becomes \xHH, two
/// lowercase hex digits. The escape is one-to-one: escaped text always holds a
/// backslash, plain text never does, so two different names never share a display text
/// (names are parts of keys).

#include <cstdint>
#include <string>
#include <string_view>

namespace rbdsync {

/// True when `bytes` are valid UTF-8 (RFC 3629: no overlong forms, no surrogates, at
/// most U+10FFFF) without a NUL or a backslash: text stored exactly as it is.
bool is_plain_text(std::string_view bytes);

/// True when `bytes` are valid UTF-8 holding no control character (C0, DEL, C1): one
/// line a person can read, as a name someone typed must be before it is recorded.
bool is_printable_line(std::string_view bytes);

/// What display_text() escapes besides invalid bytes.
enum class Controls {
  keep,    ///< for storage: tabs and newlines are part of the name
  escape,  ///< for one-line messages: every C0 and C1 control and DEL escaped too
};

/// `bytes` as valid UTF-8 text, escaped as the file comment says when it must be.
std::string display_text(std::string_view bytes, Controls controls = Controls::keep);

/// `bytes` as hex (two lowercase digits a byte), e.g. for a JSON companion of escaped text.
std::string hex_bytes(std::string_view bytes);

/// `value` as 16 lowercase hex digits, most significant first: how Ceph writes an id in
/// an object's name or an omap key (a snapshot's `snapshot_<id>`, its object map's name).
std::string hex_u64(std::uint64_t value);

}  // namespace rbdsync
