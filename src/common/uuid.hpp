#pragma once

#include <string>
#include <string_view>

namespace rbdsync {

/// A random (version 4) UUID in its usual text form, e.g. for run ids.
std::string random_uuid();

/// True when `text` is a UUID in that form: 8-4-4-4-12 hex digits, lowercase or
/// uppercase, nothing around them. A run id read back from outside (the lock file's
/// record, an answer) is one, or it is not used: it ends up in URLs and SQL keys.
bool is_uuid(std::string_view text);

}  // namespace rbdsync
