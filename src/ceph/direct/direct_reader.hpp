#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <rados/librados.hpp>
#include <rbd/librbd.hpp>

#include "ceph/batch_reader.hpp"
#include "ceph/connection.hpp"
#include "ceph/direct/clone_links.hpp"
#include "inventory/inventory.hpp"
#include "sync/source.hpp"
#include "sync/usage_marks.hpp"

namespace rbdsync::ceph {

/// How many images the direct reader keeps in flight: where a full sync and a no-op
/// stopped getting faster, before more began to cost again (measured for #18; the
/// figures are in its commit, bench/scale.sh reproduces them).
inline constexpr std::size_t k_images_in_flight = 256;

/// The object map bytes the direct reader keeps in flight beyond one image's: the maps of
/// large images (the head map of 100 TiB in 4 MiB objects is 6.4 MiB, and
/// k_images_in_flight of them would be 1.6 GiB) wait for those in flight to be assembled,
/// instead of a slot count's worth of them being held at once (ceph/direct/map_budget.hpp).
inline constexpr std::uint64_t k_map_bytes_in_flight = std::uint64_t{16} << 20U;

/// What the direct reader keeps in flight at most.
struct DirectReadLimits {
  std::size_t images = k_images_in_flight;
  std::uint64_t map_bytes = k_map_bytes_in_flight;
};

/// Whether the direct reader may hand an image it does not fully understand to librbd:
/// not when librbd was already refused opening it (the librbd reader's own fallback).
enum class LibrbdFallback { allowed, refused };

/// What a direct read of one pool's images works with, and how far it may go.
struct DirectReadContext {
  /// Answers which config option names exist.
  librados::Rados& rados;
  librbd::RBD& rbd;
  /// The pool's contexts; an image is read in its namespace's.
  IoContexts& contexts;
  /// Clones' parents and snapshots' clone v1 children, a cache for the whole sync.
  CloneLinks& links;
  const inventory::Pool& pool;
  bool exact_usage = false;
  LibrbdFallback librbd = LibrbdFallback::allowed;
  DirectReadLimits limits{};
  /// The stored images' usage marks; nullptr when none may be carried.
  const sync::UsageMarks* marks = nullptr;
};

/// Reads `refs` of `context.pool` without opening them: one compound read of each
/// header object (omap, watchers, cls lock info), then the object maps its usage needs,
/// `limits.images` images and about `limits.map_bytes` of their maps at a time, decoded
/// by ceph/wire/. An image of `marks` whose header still has its mark's version and
/// whose lock no one holds comes with usage_carried and no map read
/// (sync/usage_marks.hpp). An image it does not fully understand is read through librbd
/// (read_image) instead and counted in `fallbacks`; with LibrbdFallback::refused, or when
/// librbd is not permitted to open it either, it is reported failed. What this client
/// may not read of clones' parents and children is stored as unknown
/// (ceph/not_permitted.hpp). Throws as read_image() does, and for a header this client
/// may not read, after the reads in flight have finished.
void read_images_direct(const DirectReadContext& context,
                        const std::vector<inventory::ImageRef>& refs, const OnPageRead& on_read,
                        FallbackCounts& fallbacks);

/// The direct reader as a BatchReader: read_images_direct() over each page, with the
/// sync's handles, its images counted "header" and "librbd" (its fallbacks).
class DirectReader final : public BatchReader {
 public:
  /// `links`: the sync's cache of clone links.
  DirectReader(librados::Rados& rados, librbd::RBD& rbd, IoContexts& contexts, CloneLinks& links,
               bool exact_usage, LibrbdFallback librbd = LibrbdFallback::allowed)
      : m_rados(rados),
        m_rbd(rbd),
        m_contexts(contexts),
        m_links(links),
        m_exact_usage(exact_usage),
        m_librbd(librbd) {}

  sync::ReadMethods read(const inventory::Pool& pool, const std::vector<inventory::ImageRef>& refs,
                         const sync::UsageMarks* marks, const OnPageRead& on_read) override;

 private:
  librados::Rados& m_rados;
  librbd::RBD& m_rbd;
  IoContexts& m_contexts;
  CloneLinks& m_links;
  bool m_exact_usage;
  LibrbdFallback m_librbd;
};

}  // namespace rbdsync::ceph
