#pragma once

/// Turns one image's reads (image_reads.hpp) into the inventory's Image, as the librbd
/// reader would read it; or says why librbd must read it; or what damage keeps both from
/// it.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <rados/librados.hpp>

#include "ceph/connection.hpp"
#include "ceph/direct/clone_links.hpp"
#include "ceph/direct/image_reads.hpp"
#include "ceph/or_fallback.hpp"
#include "inventory/inventory.hpp"
#include "sync/usage_marks.hpp"

namespace rbdsync::ceph {

/// What every image of one direct read is assembled with.
struct AssemblyContext {
  /// Answers which config option names exist.
  librados::Rados& rados;
  /// The pool's contexts; an image is read in its namespace's.
  IoContexts& contexts;
  const inventory::Pool& pool;
  bool exact_usage = false;
  /// Which config options exist, asked of `rados` once a name.
  std::map<std::string, bool>& known_options;
  CloneLinks& links;
  /// The stored images' usage marks; nullptr when none may be carried.
  const sync::UsageMarks* marks = nullptr;
};

/// The object maps to read before the usage walk.
struct MapsWanted {
  MapReads reads;  ///< the head's, and snapshots' read ahead (snapshot_maps_read_ahead())
  /// Their size as the header tells it; none when it cannot tell (a size whose object
  /// count overflows).
  std::optional<std::uint64_t> bytes;
};

/// The object maps of image `ref` to read now: none when its header (read in `slot`)
/// does not decode, when the image has no fast-diff map, or when its stored usage still
/// holds (which this records in the slot: no map is read). Decodes the header, once.
MapsWanted maps_wanted(const AssemblyContext& context, const inventory::ImageRef& ref, Slot& slot);

/// Image `ref` from the reads in `slot`; or why librbd must read it; or the damage that
/// keeps both from it. `mirror`: the image's mirroring entry; nullptr when its pool has
/// mirroring disabled.
OrFallback<inventory::Image> assemble(const AssemblyContext& context,
                                      const inventory::ImageRef& ref, const MirrorLookup* mirror,
                                      Slot& slot);

}  // namespace rbdsync::ceph
