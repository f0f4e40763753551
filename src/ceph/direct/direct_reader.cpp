#include "ceph/direct/direct_reader.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "ceph/direct/image_assembly.hpp"
#include "ceph/direct/image_reads.hpp"
#include "ceph/direct/map_budget.hpp"
#include "ceph/librbd/image_reader.hpp"

namespace rbdsync::ceph {

using inventory::Image;
using inventory::ImageRef;

namespace {

/// The image read through librbd, as the direct reader's fallback for `reason`; failed
/// when librbd may not be asked (or was not permitted to open it).
sync::ImageRead librbd_read(const DirectReadContext& context, const ImageRef& ref,
                            const std::string& reason) {
  if (context.librbd == LibrbdFallback::allowed) {
    OrFallback<sync::ImageRead> read = read_image(
        {context.rbd, context.contexts.at(context.pool, ref.pool_namespace), context.pool, ref},
        context.exact_usage);
    if (read.ok()) {
      return std::move(*read.value);
    }
  }
  // Neither way reads it: librbd would open a parent this client may not read, and the
  // header holds what only librbd turns into the inventory.
  sync::ImageRead failed;
  failed.outcome = sync::ImageRead::Outcome::failed;
  failed.error =
      "not permitted to open it through librbd (this client cannot read the pool of its "
      "parent or migration source), and its header needs librbd: " +
      reason;
  return failed;
}

/// One read_images_direct() call: its images in flight, the budget of their object maps
/// and the images parked until it allows theirs.
class PoolRead {
 public:
  PoolRead(const DirectReadContext& context, const std::vector<ImageRef>& refs,
           const OnPageRead& on_read, FallbackCounts& fallbacks)
      : m_context(context),
        m_refs(refs),
        m_on_read(on_read),
        m_fallbacks(fallbacks),
        m_assembly{context.rados,   context.contexts, context.pool, context.exact_usage,
                   m_known_options, context.links,    context.marks},
        m_mirroring(read_mirroring(context.contexts, context.pool, refs)),
        m_batch(std::max<std::size_t>(1, std::min(context.limits.images, refs.size()))),
        m_budget(context.limits.map_bytes),
        m_waiting(m_batch.size()) {}

  void run() {
    m_batch.run_all(
        m_refs.size(), [this](std::size_t index) { return start(index); },
        [this](std::size_t at) { return ready(at); }, [this] { return m_budget.waiting(); });
  }

 private:
  /// The context of the namespace of `ref`.
  librados::IoCtx& io_of(const ImageRef& ref) {
    return m_context.contexts.at(m_context.pool, ref.pool_namespace);
  }

  void through_librbd(std::size_t index, const std::string& reason) {
    if (m_context.librbd == LibrbdFallback::allowed) {
      ++m_fallbacks[reason];
    }
    m_on_read(index, librbd_read(m_context, m_refs[index], reason));
  }

  bool start(std::size_t index) {
    if (m_refs[index].image_id.empty()) {
      through_librbd(index, fallback_text(Fallback::format_1));
      return false;
    }
    m_batch.start(io_of(m_refs[index]), m_refs[index], index);
    return true;
  }

  void start_maps(std::size_t at, const MapsWanted& wanted) {
    const ImageRef& ref = m_refs[m_batch.slot(at).index];
    m_batch.start_maps(io_of(ref), ref, at, wanted.reads);
  }

  /// False: the image's object maps are being read, or it waits for the map budget
  /// (parked: a later call's budget.release() starts them); its slot comes ready again.
  bool ready(std::size_t at) {
    Slot& slot = m_batch.slot(at);
    const std::size_t index = slot.index;
    // The maps are read in the slot, not one at a time while assembling: each such read
    // would wait behind every read in flight while no new one starts. The first time the
    // slot comes ready its header is not decoded yet; the second (when there is one), its
    // object maps are in.
    if (!slot.decoded && waits_for_maps(at)) {
      return false;
    }
    OrFallback<Image> image = assemble(m_assembly, m_refs[index],
                                       m_mirroring.empty() ? nullptr : &m_mirroring[index], slot);
    const std::uint64_t map_bytes = slot.map_bytes;
    m_batch.release(at);
    m_budget.release(map_bytes, [this](std::size_t next) {
      start_maps(next, m_waiting[next]);
      m_waiting[next] = {};
    });
    deliver(index, std::move(image));
    return true;
  }

  /// Whether the image in slot `at` has object maps to read: started, or parked when
  /// the budget does not allow them yet.
  bool waits_for_maps(std::size_t at) {
    Slot& slot = m_batch.slot(at);
    MapsWanted wanted = maps_wanted(m_assembly, m_refs[slot.index], slot);
    if (!wanted.reads.head && wanted.reads.snapshots.empty()) {
      return false;
    }
    // A size the header cannot tell counts as the whole budget: read alone.
    slot.map_bytes = wanted.bytes.value_or(m_context.limits.map_bytes);
    if (m_budget.ask(at, slot.map_bytes)) {
      start_maps(at, wanted);
    } else {
      m_waiting[at] = std::move(wanted);
    }
    return true;
  }

  void deliver(std::size_t index, OrFallback<Image> image) {
    if (image.ok()) {
      sync::ImageRead read;
      read.image = std::move(*image.value);
      m_on_read(index, std::move(read));
    } else if (!image.damage.empty()) {
      // Unreadable either way: librbd must not be given it.
      sync::ImageRead read;
      read.outcome = sync::ImageRead::Outcome::failed;
      read.error = "damaged header: " + image.damage;
      m_on_read(index, std::move(read));
    } else {
      through_librbd(index, image.fallback_reason);
    }
  }

  const DirectReadContext& m_context;
  const std::vector<ImageRef>& m_refs;
  const OnPageRead& m_on_read;
  FallbackCounts& m_fallbacks;
  std::map<std::string, bool> m_known_options;
  AssemblyContext m_assembly;
  const std::vector<MirrorLookup> m_mirroring;
  Batch m_batch;
  MapBudget m_budget;
  /// The maps an image asked for, kept while it waits for the map budget.
  std::vector<MapsWanted> m_waiting;
};

}  // namespace

void read_images_direct(const DirectReadContext& context, const std::vector<ImageRef>& refs,
                        const OnPageRead& on_read, FallbackCounts& fallbacks) {
  PoolRead(context, refs, on_read, fallbacks).run();
}

sync::ReadMethods DirectReader::read(const inventory::Pool& pool, const std::vector<ImageRef>& refs,
                                     const sync::UsageMarks* marks, const OnPageRead& on_read) {
  DirectReadContext context{m_rados, m_rbd, m_contexts, m_links, pool};
  context.exact_usage = m_exact_usage;
  context.librbd = m_librbd;
  context.marks = marks;
  sync::ReadMethods reads;
  read_images_direct(context, refs, on_read, reads.fallbacks);
  std::size_t through_librbd = 0;
  for (const auto& [reason, count] : reads.fallbacks) {
    through_librbd += count;
  }
  reads.images = {{k_read_from_header, refs.size() - through_librbd},
                  {k_read_through_librbd, through_librbd}};
  return reads;
}

}  // namespace rbdsync::ceph
