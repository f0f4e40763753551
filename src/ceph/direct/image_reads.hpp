#pragma once

/// The direct reader's reads of one pool's images: the compound read of each header,
/// then the object maps its usage needs, many images at once (Batch); and the pool's
/// mirroring entries. Each image's reads land in its Slot; image_assembly.hpp turns them
/// into the image.

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <rados/librados.hpp>

#include "ceph/connection.hpp"
#include "ceph/in_flight.hpp"
#include "ceph/wire/header_decoder.hpp"
#include "ceph/wire/mirroring.hpp"
#include "inventory/inventory.hpp"

namespace rbdsync::ceph {

/// The header keys read at once; an image with more is librbd's to read.
inline constexpr std::uint64_t k_max_omap_keys = 1024;

/// librbd's MAX_OBJECT_MAP_OBJECT_COUNT: an image of more objects has no usable map (its
/// object would be over 64 MiB). Such a map is not read at all (a read of 2 GiB or more
/// fails with EDOM anyway).
inline constexpr std::uint64_t k_max_object_map_objects = 256000000;

/// What the direct reader reads of the object map of `header`'s image at `size_bytes`:
/// one byte more than such a map can hold, so that a larger object (a tenant may write
/// 100 MiB behind a tiny header) is told by its size and costs no more than this. 1
/// when the count overflows: that map is not used anyway.
std::uint64_t object_map_read_bytes(const DecodedHeader& header, std::uint64_t size_bytes);

/// The object maps to read for one image, each with how many of its bytes
/// (object_map_read_bytes()).
struct MapReads {
  std::optional<std::uint64_t> head;  ///< set when the head's map is read
  std::vector<std::pair<std::uint64_t, std::uint64_t>> snapshots;  ///< (snapshot id, bytes)
};

/// The read of one object map: the head's or a snapshot's.
struct MapRead {
  librados::ObjectReadOperation op;
  librados::bufferlist bytes;
  int r = 0;
  CompletionPtr<librados::AioCompletion> done;
};

/// The reads of one image: the header's compound operation; then, once the header tells
/// which are needed, its object maps. The maps are read only after the header: its
/// version then never claims maps older than it (sync/usage_marks.hpp).
struct Slot {
  std::size_t index = 0;
  librados::ObjectReadOperation header_op;
  std::map<std::string, librados::bufferlist> omap;
  bool more = false;
  int omap_r = 0;
  std::list<obj_watch_t> watchers;
  int watchers_r = 0;
  librados::bufferlist lock_in;
  librados::bufferlist lock_out;
  int lock_r = 0;
  CompletionPtr<librados::AioCompletion> header_done;
  /// What queueing the header read returned: below 0 it never ran, and header_done
  /// tells nothing.
  int header_queued_r = 0;
  std::optional<HeaderDecoding> decoded;  ///< the header, once decoded
  /// The usage stored with the image still holds: no map is read (image_assembly.hpp).
  bool usage_carried = false;
  std::optional<MapRead> head_map;  ///< when read
  /// What the header says its maps come to (MapsWanted::bytes), as the map budget
  /// counts them until the image is assembled.
  std::uint64_t map_bytes = 0;
  /// By snapshot id; node-based, so each read stays where its completion writes.
  std::map<std::uint64_t, MapRead> snapshot_maps;
  int pending = 0;  ///< completions still to come (under InFlight's lock)
};

/// The header and object map reads of many images at once.
class Batch : public InFlight<Slot> {
 public:
  using InFlight::InFlight;
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  /// Waits for every read in flight: no callback may reach a destroyed Batch.
  ~Batch();

  /// Starts the compound read of the header of `ref`, image `index` of the call, in a
  /// free slot (waiting for one).
  void start(librados::IoCtx& io, const inventory::ImageRef& ref, std::size_t index);

  /// Starts reading the object maps `maps` of the image in slot `at`, whose header is
  /// read; the slot comes ready again when they are. At least one map must be asked for.
  void start_maps(librados::IoCtx& io, const inventory::ImageRef& ref, std::size_t at,
                  const MapReads& maps);

 private:
  static void on_complete(librados::completion_t completion, void* arg);
  /// One of the slot's reads is done (or was never queued).
  static void done(InFlight& slots, std::size_t at);
};

/// An image's entry in its namespace's mirroring object, read before its header.
struct MirrorLookup {
  std::optional<MirrorImageEntry> entry;  ///< none: mirroring is disabled for the image
  std::string fallback_reason;            ///< the entry could not be read here
};

/// Each image's mirroring entry, by index in `refs`; empty when the pool has mirroring
/// disabled (the librbd reader then asks for none either).
std::vector<MirrorLookup> read_mirroring(IoContexts& contexts, const inventory::Pool& pool,
                                         const std::vector<inventory::ImageRef>& refs);

}  // namespace rbdsync::ceph
