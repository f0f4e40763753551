#pragma once

/// Inside ceph/ only: what the direct reader's steps answer. A value; or why librbd must
/// read the image instead (a fallback, counted by its text in --json's read.fallbacks);
/// or why nothing may read it (damage: librbd must not be given it). Exactly one is set.

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "ceph/fallback_reason.hpp"

namespace rbdsync::ceph {

template <typename T>
struct OrFallback {
  std::optional<T> value;
  std::string fallback_reason;  ///< librbd can read it
  std::string damage;           ///< damaged: librbd must not be given it

  static OrFallback of(T value) {
    OrFallback result;
    result.value = std::move(value);
    return result;
  }
  /// A fallback for one of the reasons of ceph/fallback_reason.hpp.
  static OrFallback fall_back(Fallback reason, std::string_view detail = {}) {
    return fall_back(fallback_text(reason, detail));
  }
  /// A fallback for a reason already made into text (kept, then carried).
  static OrFallback fall_back(const std::string& reason) {
    OrFallback result;
    result.fallback_reason = reason;
    return result;
  }
  static OrFallback damaged(const std::string& how) {
    OrFallback result;
    result.damage = how;
    return result;
  }

  bool ok() const { return value.has_value(); }

  /// This verdict (not ok()) for a step that needed this one's value: the same reason,
  /// after `prefix` ("clone: ").
  template <typename U>
  OrFallback<U> carry(std::string_view prefix = {}) const {
    // Carrying a value would make a verdict with no reason, counted as a fallback "".
    assert(!ok());
    OrFallback<U> result;
    if (!fallback_reason.empty()) {
      result.fallback_reason = std::string(prefix) + fallback_reason;
    }
    if (!damage.empty()) {
      result.damage = std::string(prefix) + damage;
    }
    return result;
  }
};

}  // namespace rbdsync::ceph
