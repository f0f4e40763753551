#include "ceph/direct/image_reads.hpp"

#include <algorithm>
#include <cerrno>
#include <set>

#include "ceph/librbd_rules.hpp"
#include "ceph/wire/lock_info.hpp"
#include "ceph/wire/object_map.hpp"
#include "ceph/wire/pool_objects.hpp"

namespace rbdsync::ceph {

using inventory::ImageRef;
using inventory::Pool;

namespace {

/// Image entries asked of a pool's mirroring object in one read.
constexpr std::size_t k_mirror_keys_per_read = 512;

/// The mirroring entries of `indices` (refs of one namespace, the one of `io`) into
/// `lookups`, a few hundred keys a read.
void read_mirror_entries(librados::IoCtx& io, const std::vector<ImageRef>& refs,
                         const std::vector<std::size_t>& indices,
                         std::vector<MirrorLookup>& lookups) {
  for (std::size_t first = 0; first < indices.size(); first += k_mirror_keys_per_read) {
    const std::size_t last = std::min(indices.size(), first + k_mirror_keys_per_read);
    std::set<std::string> keys;
    for (std::size_t at = first; at < last; ++at) {
      keys.insert(mirror_image_key(refs[indices[at]].image_id));
    }
    std::map<std::string, librados::bufferlist> values;
    const int r = io.omap_get_vals_by_keys(k_mirroring_object, keys, &values);
    for (std::size_t at = first; at < last; ++at) {
      MirrorLookup& lookup = lookups[indices[at]];
      const auto found = values.find(mirror_image_key(refs[indices[at]].image_id));
      // No mirroring object: nothing in the namespace was ever mirrored. Any other
      // failure (not permitted included) is librbd's to report, as the librbd reader does.
      if (r < 0 && r != -ENOENT) {
        lookup.fallback_reason = fallback_text(Fallback::mirroring_object_unreadable);
      } else if (found != values.end()) {
        lookup.entry = decode_mirror_image(found->second.to_str());
        if (!lookup.entry) {
          lookup.fallback_reason = fallback_text(Fallback::mirroring_entry_undecodable);
        }
      }
    }
  }
}

}  // namespace

std::uint64_t object_map_read_bytes(const DecodedHeader& header, std::uint64_t size_bytes) {
  const std::optional<std::uint64_t> objects = map_objects(header, size_bytes);
  return objects && *objects <= k_max_object_map_objects ? object_map_object_bytes(*objects) + 1
                                                         : 1;
}

/// Waits for every read in flight: no callback may reach a destroyed Batch.
Batch::~Batch() {
  wait_until([this](std::size_t /*free_slots*/) {
    for (std::size_t at = 0; at < size(); ++at) {
      if (slot(at).pending != 0) {
        return false;
      }
    }
    return true;
  });
}

void Batch::start(librados::IoCtx& io, const ImageRef& ref, std::size_t index) {
  // A read operation cannot be reused: each image gets a new Slot.
  const std::size_t at = take_free(/*renew=*/true);
  Slot& reads = slot(at);
  reads.index = index;
  reads.header_op.omap_get_vals2("", k_max_omap_keys, &reads.omap, &reads.more, &reads.omap_r);
  reads.header_op.list_watchers(&reads.watchers, &reads.watchers_r);
  const std::string request = encode_lock_info_request("rbd_lock");
  reads.lock_in.append(request.data(), request.size());
  reads.header_op.exec("lock", "get_info", reads.lock_in, &reads.lock_out, &reads.lock_r);
  // Everything that may throw comes before the slot counts its reads: a read counted
  // and never queued would keep ~Batch waiting for ever.
  const std::string header_object = header_object_name(ref.image_id);
  reads.header_done.reset(
      librados::Rados::aio_create_completion(callback_arg(at), &Batch::on_complete));
  update(at, [](Slot& starting) {
    starting.pending = 1;
    return Then::wait;
  });
  const int r = io.aio_operate(header_object, reads.header_done.get(), &reads.header_op, nullptr);
  if (r < 0) {
    reads.header_queued_r = r;
    done(*this, at);
  }
}

/// Starts reading the object maps `maps` of the image in slot `at`, whose header is
/// read; the slot comes ready again when they are. At least one map must be asked for.
void Batch::start_maps(librados::IoCtx& io, const ImageRef& ref, std::size_t at,
                       const MapReads& maps) {
  Slot& reads = slot(at);
  // As in start(): what may throw comes before the slot counts its reads.
  std::vector<std::pair<std::string, MapRead*>> queued;
  const auto queue = [&](MapRead& read, std::string object, std::uint64_t bytes) {
    read.op.read(0, bytes, &read.bytes, &read.r);
    read.done.reset(librados::Rados::aio_create_completion(callback_arg(at), &Batch::on_complete));
    queued.emplace_back(std::move(object), &read);
  };
  if (maps.head) {
    queue(reads.head_map.emplace(), object_map_name(ref.image_id), *maps.head);
  }
  for (const auto& [id, bytes] : maps.snapshots) {
    queue(reads.snapshot_maps[id], object_map_name(ref.image_id, id), bytes);
  }
  update(at, [&queued](Slot& starting) {
    starting.pending = static_cast<int>(queued.size());
    return Then::wait;
  });
  for (auto& [object, read] : queued) {
    const int r = io.aio_operate(object, read->done.get(), &read->op, nullptr);
    if (r < 0) {
      read->r = r;
      done(*this, at);
    }
  }
}

void Batch::on_complete(librados::completion_t /*completion*/, void* arg) {
  auto [slots, at] = from_callback(arg);
  done(slots, at);
}

/// One of the slot's reads is done (or was never queued).
void Batch::done(InFlight& slots, std::size_t at) {
  slots.update(at, [](Slot& reads) { return --reads.pending == 0 ? Then::ready : Then::wait; });
}

std::vector<MirrorLookup> read_mirroring(IoContexts& contexts, const Pool& pool,
                                         const std::vector<ImageRef>& refs) {
  std::vector<MirrorLookup> lookups;
  if (!pool_mirroring_enabled(pool.mirror_mode)) {
    return lookups;
  }
  lookups.resize(refs.size());
  std::map<std::string, std::vector<std::size_t>> by_namespace;
  for (std::size_t index = 0; index < refs.size(); ++index) {
    if (!refs[index].image_id.empty()) {  // format 1 images go to librbd anyway
      by_namespace[refs[index].pool_namespace].push_back(index);
    }
  }
  for (const auto& [pool_namespace, indices] : by_namespace) {
    read_mirror_entries(contexts.at(pool, pool_namespace), refs, indices, lookups);
  }
  return lookups;
}

}  // namespace rbdsync::ceph
