#include "ceph/librbd/librbd_reader.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "ceph/fallback_reason.hpp"
#include "ceph/in_flight.hpp"
#include "ceph/librbd/image_reader.hpp"

namespace rbdsync::ceph {

namespace {

using Completion = CompletionPtr<librbd::RBD::AioCompletion>;

/// One image being opened, read or closed.
struct OpenSlot {
  librbd::Image image;
  std::size_t index = 0;  ///< into refs
  Completion open;
  Completion close;
  int open_error = 0;  ///< when aio_open itself failed: no completion will come
  // Set by librbd's callback threads, read by the calling thread (under InFlight's lock).
  bool opened = false;
  bool closed = false;
  // The calling thread's own view: a close is queued and aio_close() has returned.
  bool closing = false;

  /// Ready for the next image. The librbd::Image stays: it is reusable once closed.
  void reset() {
    open.reset();
    close.reset();
    open_error = 0;
    opened = closed = closing = false;
  }
};

using OpenSlots = InFlight<OpenSlot>;
using Then = OpenSlots::Then;

/// Opens and closes images with many in flight; the calling thread reads each opened
/// image between the two.
class OpenBatch : public OpenSlots {
 public:
  using OpenSlots::OpenSlots;

  /// Waits for every open and close in flight and closes what is still open, so that no
  /// callback can reach a destroyed OpenBatch and no Image is destroyed while librbd uses it.
  ~OpenBatch() {
    for (;;) {
      std::vector<std::size_t> unfinished;
      bool all_free = false;
      wait_until([&](std::size_t free_slots) {
        for (std::size_t at = 0; at < size(); ++at) {
          const OpenSlot& opened = slot(at);
          // Opened (or failed to) and not yet closing: the calling thread left it.
          if (opened.open && opened.opened && !opened.closing) {
            unfinished.push_back(at);
          }
        }
        all_free = free_slots == size();
        return all_free || !unfinished.empty();
      });
      if (all_free) {
        return;
      }
      for (const std::size_t at : unfinished) {
        finish(at);
      }
    }
  }

  /// Starts opening refs[index] in a free slot.
  void start_open(librbd::RBD& rbd, librados::IoCtx& io, const inventory::ImageRef& ref,
                  std::size_t index) {
    const std::size_t at = take_free(/*renew=*/false);
    OpenSlot& opening = slot(at);
    opening.reset();
    opening.index = index;
    opening.open.reset(new librbd::RBD::AioCompletion(callback_arg(at), &OpenBatch::on_opened));
    // Format 1 images have no id and are opened by name.
    const int r = ref.image_id.empty()
                      ? rbd.aio_open_read_only(io, opening.image, ref.name.c_str(), nullptr,
                                               opening.open.get())
                      : rbd.aio_open_by_id_read_only(io, opening.image, ref.image_id.c_str(),
                                                     nullptr, opening.open.get());
    if (r < 0) {
      // Not queued: no callback will come. Report it like a failed open.
      update(at, [r](OpenSlot& failed) {
        failed.opened = true;
        failed.open_error = r;
        return Then::ready;
      });
    }
  }

  /// What opening slot `at` returned; only once it has opened (or failed to).
  int open_result(std::size_t at) {
    const OpenSlot& opened = slot(at);
    return opened.open_error != 0 ? opened.open_error
                                  : static_cast<int>(opened.open->get_return_value());
  }

  /// Closes the image of slot `at` (if it opened) and frees the slot once librbd is done.
  void finish(std::size_t at) {
    if (open_result(at) < 0) {
      update(at, [](OpenSlot& failed) {
        failed.reset();
        return Then::free;
      });
      return;
    }
    start_close(at);
  }

 private:
  static void on_opened(librbd::completion_t /*completion*/, void* arg) {
    auto [slots, at] = OpenSlots::from_callback(arg);
    slots.update(at, [](OpenSlot& opened) {
      opened.opened = true;
      return Then::ready;
    });
  }

  static void on_closed(librbd::completion_t /*completion*/, void* arg) {
    auto [slots, at] = OpenSlots::from_callback(arg);
    slots.update(at, [](OpenSlot& closed) {
      closed.closed = true;
      // aio_close() clears the Image's handle only after queuing the close: the slot may
      // be reused only once aio_close() has returned too.
      if (!closed.closing) {
        return Then::wait;
      }
      closed.reset();
      return Then::free;
    });
  }

  void start_close(std::size_t at) {
    OpenSlot& open = slot(at);
    open.close.reset(new librbd::RBD::AioCompletion(callback_arg(at), &OpenBatch::on_closed));
    const int r = open.image.aio_close(open.close.get());
    update(at, [r](OpenSlot& closing) {
      closing.closing = true;
      if (r < 0 || closing.closed) {
        closing.reset();
        return Then::free;
      }
      return Then::wait;
    });
  }
};

}  // namespace

std::vector<std::size_t> read_images_librbd(librbd::RBD& rbd, IoContexts& contexts,
                                            const inventory::Pool& pool,
                                            const std::vector<inventory::ImageRef>& refs,
                                            bool exact_usage, const OnPageRead& on_read,
                                            std::size_t in_flight) {
  std::vector<std::size_t> refused;
  OpenBatch batch(std::max<std::size_t>(1, std::min(in_flight, refs.size())));
  const auto start = [&](std::size_t index) {
    librados::IoCtx& io = contexts.at(pool, refs[index].pool_namespace);
    if (auto damaged = refuse_damaged_layout(io, refs[index])) {
      on_read(index, std::move(*damaged));
      return false;
    }
    batch.start_open(rbd, io, refs[index], index);
    return true;
  };
  const auto ready = [&](std::size_t at) {
    OpenSlot& slot = batch.slot(at);
    const std::size_t index = slot.index;
    const inventory::ImageRef& ref = refs[index];
    OrFallback<sync::ImageRead> read =
        read_open_image({rbd, contexts.at(pool, ref.pool_namespace), pool, ref}, exact_usage,
                        slot.image, batch.open_result(at));
    batch.finish(at);
    if (read.ok()) {
      on_read(index, std::move(*read.value));
    } else {
      refused.push_back(index);
    }
  };
  batch.run_all(refs.size(), start, ready);
  return refused;
}

sync::ReadMethods LibrbdReader::read(const inventory::Pool& pool,
                                     const std::vector<inventory::ImageRef>& refs,
                                     const sync::UsageMarks* /*marks*/, const OnPageRead& on_read) {
  const std::vector<std::size_t> refused =
      read_images_librbd(m_rbd, m_contexts, pool, refs, m_exact_usage, on_read);
  sync::ReadMethods reads;
  reads.images[k_read_through_librbd] = refs.size() - refused.size();
  if (refused.empty()) {
    return reads;
  }
  std::vector<inventory::ImageRef> decoded;
  decoded.reserve(refused.size());
  for (const std::size_t index : refused) {
    decoded.push_back(refs[index]);
  }
  reads.add(m_refused.read(pool, decoded, nullptr, [&](std::size_t at, sync::ImageRead read) {
    on_read(refused[at], std::move(read));
  }));
  reads.fallbacks[fallback_text(Fallback::librbd_not_permitted)] = decoded.size();
  spdlog::info(
      "pool '{}': {} images decoded from their headers: librbd was not permitted to open them",
      pool.name, decoded.size());
  return reads;
}

}  // namespace rbdsync::ceph
