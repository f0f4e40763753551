#include "ceph/librbd_batch.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "ceph/image_reader.hpp"
#include "ceph/in_flight.hpp"

namespace rbdsync::ceph {

namespace {

/// Owns an aio completion: librbd's are reference-counted and released, never deleted.
struct CompletionRelease {
  void operator()(librbd::RBD::AioCompletion* completion) const { completion->release(); }
};
using Completion = std::unique_ptr<librbd::RBD::AioCompletion, CompletionRelease>;

/// One image being opened, read or closed.
struct Slot {
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

using Slots = InFlight<Slot>;
using Then = Slots::Then;

/// Opens and closes images with many in flight; the calling thread reads each opened
/// image between the two.
class Batch {
 public:
  explicit Batch(std::size_t size) : m_slots(size) {}
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  /// Waits for every open and close in flight and closes what is still open, so that no
  /// callback can reach a destroyed Batch and no Image is destroyed while librbd uses it.
  ~Batch() {
    for (;;) {
      std::vector<std::size_t> unfinished;
      bool all_free = false;
      m_slots.wait_until([&](std::size_t free_slots) {
        for (std::size_t at = 0; at < m_slots.size(); ++at) {
          const Slot& slot = m_slots.slot(at);
          // Opened (or failed to) and not yet closing: the calling thread left it.
          if (slot.open && slot.opened && !slot.closing) {
            unfinished.push_back(at);
          }
        }
        all_free = free_slots == m_slots.size();
        return all_free || !unfinished.empty();
      });
      if (all_free) {
        return;
      }
      for (const std::size_t at : unfinished) {
        finish(at, open_result(at));
      }
    }
  }

  bool has_free() { return m_slots.has_free(); }

  /// Waits until a slot is free (its image closed).
  void wait_free() { m_slots.wait_free(); }

  /// Starts opening refs[index] in a free slot.
  void start_open(librbd::RBD& rbd, librados::IoCtx& io, const inventory::ImageRef& ref,
                  std::size_t index) {
    const std::size_t at = m_slots.take_free(/*renew=*/false);
    Slot& slot = m_slots.slot(at);
    slot.reset();
    slot.index = index;
    slot.open.reset(new librbd::RBD::AioCompletion(m_slots.callback_arg(at), &Batch::on_opened));
    // Format 1 images have no id and are opened by name.
    const int r =
        ref.image_id.empty()
            ? rbd.aio_open_read_only(io, slot.image, ref.name.c_str(), nullptr, slot.open.get())
            : rbd.aio_open_by_id_read_only(io, slot.image, ref.image_id.c_str(), nullptr,
                                           slot.open.get());
    if (r < 0) {
      // Not queued: no callback will come. Report it like a failed open.
      m_slots.update(at, [r](Slot& failed) {
        failed.opened = true;
        failed.open_error = r;
        return Then::ready;
      });
    }
  }

  /// Waits for an open to finish; returns its slot and what the open returned.
  std::pair<std::size_t, int> wait_opened() {
    const std::size_t at = m_slots.wait_ready();
    return {at, open_result(at)};
  }

  Slot& slot(std::size_t at) { return m_slots.slot(at); }

  /// Closes the image of slot `at` (if it opened) and frees the slot once librbd is done.
  void finish(std::size_t at, int opened) {
    if (opened < 0) {
      m_slots.update(at, [](Slot& slot) {
        slot.reset();
        return Then::free;
      });
      return;
    }
    start_close(at);
  }

 private:
  /// What opening slot `at` returned; only once it has opened (or failed to).
  int open_result(std::size_t at) {
    const Slot& slot = m_slots.slot(at);
    return slot.open_error != 0 ? slot.open_error : static_cast<int>(slot.open->get_return_value());
  }

  static void on_opened(librbd::completion_t /*completion*/, void* arg) {
    auto [slots, at] = Slots::from_callback(arg);
    slots.update(at, [](Slot& slot) {
      slot.opened = true;
      return Then::ready;
    });
  }

  static void on_closed(librbd::completion_t /*completion*/, void* arg) {
    auto [slots, at] = Slots::from_callback(arg);
    slots.update(at, [](Slot& slot) {
      slot.closed = true;
      // aio_close() clears the Image's handle only after queuing the close: the slot may
      // be reused only once aio_close() has returned too.
      if (!slot.closing) {
        return Then::wait;
      }
      slot.reset();
      return Then::free;
    });
  }

  void start_close(std::size_t at) {
    Slot& slot = m_slots.slot(at);
    slot.close.reset(new librbd::RBD::AioCompletion(m_slots.callback_arg(at), &Batch::on_closed));
    const int r = slot.image.aio_close(slot.close.get());
    m_slots.update(at, [r](Slot& closing) {
      closing.closing = true;
      if (r < 0 || closing.closed) {
        closing.reset();
        return Then::free;
      }
      return Then::wait;
    });
  }

  Slots m_slots;
};

}  // namespace

std::vector<std::size_t> read_images_librbd(librbd::RBD& rbd, librados::IoCtx& io,
                                            const inventory::Pool& pool,
                                            const std::vector<inventory::ImageRef>& refs,
                                            bool exact_usage,
                                            const sync::InventorySource::OnRead& on_read,
                                            std::size_t in_flight) {
  std::vector<std::size_t> refused;
  Batch batch(std::max<std::size_t>(1, std::min(in_flight, refs.size())));
  std::size_t next = 0;
  std::size_t opening = 0;
  while (next < refs.size() || opening > 0) {
    while (next < refs.size() && batch.has_free()) {
      // ImageCtx copies the IoCtx when the open starts, namespace included.
      io.set_namespace(refs[next].pool_namespace);
      if (auto refused = refuse_damaged_layout(io, refs[next])) {
        on_read(next++, std::move(*refused));
        continue;
      }
      batch.start_open(rbd, io, refs[next], next);
      ++next;
      ++opening;
    }
    if (opening == 0) {
      batch.wait_free();  // every slot is closing its image
      continue;
    }
    const auto [at, opened] = batch.wait_opened();
    --opening;
    Slot& slot = batch.slot(at);
    const inventory::ImageRef& ref = refs[slot.index];
    io.set_namespace(ref.pool_namespace);
    std::optional<sync::ImageRead> read =
        read_open_image(rbd, io, pool, ref, exact_usage, slot.image, opened);
    const std::size_t index = slot.index;
    batch.finish(at, opened);
    if (read) {
      on_read(index, std::move(*read));
    } else {
      refused.push_back(index);
    }
  }
  io.set_namespace("");
  return refused;
}

}  // namespace rbdsync::ceph
