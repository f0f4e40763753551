#pragma once

/// The one rule of the direct reader that both fake sources follow (the tests'
/// FakeInventorySource and bench/sink_scale.cpp's SimSource): which images carry their
/// stored usage instead of a new one.

#include <cstdint>

#include "inventory/inventory.hpp"
#include "sync/source.hpp"
#include "sync/usage_marks.hpp"

namespace rbdsync::testing {

/// As the direct reader does: when `read` read an image whose usage mark is its mark in
/// `marks` (its header unchanged since that usage was stored) and whose lock no one
/// holds, the image keeps its stored usage (usage_carried, no usage of its own).
inline void keep_usage_if_idle(const sync::UsageMarks& marks, std::int64_t pool_id,
                               const inventory::ImageRef& ref, sync::ImageRead& read) {
  inventory::Image& image = read.image;
  if (read.outcome == sync::ImageRead::Outcome::read && image.usage_mark && image.lockers.empty() &&
      marks.find(pool_id, ref.pool_namespace, ref.image_id) == image.usage_mark) {
    sync::keep_stored_usage(image);
  }
}

}  // namespace rbdsync::testing
