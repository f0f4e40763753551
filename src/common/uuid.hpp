#pragma once

#include <string>

namespace rbdsync {

/// A random (version 4) UUID in its usual text form, e.g. for run ids.
std::string random_uuid();

}  // namespace rbdsync
