#pragma once

/// Text from outside (Ceph's names, cookies, addresses, configuration values) is bytes:
/// anyone with write access to a pool can store any, old clusters hold Latin-1 names.
/// PostgreSQL's text and jsonb, JSON and one-line log messages take only valid UTF-8
/// (and no NUL), so such bytes are shown through one documented, reversible escape
/// (docs/schema.md, "Names of any bytes"): text that needs none is left exactly as it
/// is; otherwise every backslash is doubled and every byte that is not part of a valid
/// UTF-8 sequence (and every NUL) becomes \xHH, two lowercase hex digits.

#include <string>
#include <string_view>

namespace rbdsync {

/// True when `bytes` are valid UTF-8 (RFC 3629: no overlong forms, no surrogates, at
/// most U+10FFFF) without a NUL: what PostgreSQL stores as text unchanged.
bool is_plain_text(std::string_view bytes);

/// What display_text() escapes besides invalid bytes.
enum class Controls {
  keep,    ///< for storage: tabs and newlines are part of the name
  escape,  ///< for one-line messages: every C0 control and DEL escaped too
};

/// `bytes` as valid UTF-8 text, escaped as the file comment says when it must be.
std::string display_text(std::string_view bytes, Controls controls = Controls::keep);

/// `bytes` as hex (two lowercase digits a byte), e.g. for a JSON companion of escaped text.
std::string hex_bytes(std::string_view bytes);

}  // namespace rbdsync
