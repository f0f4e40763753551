#include "ceph/librbd_batch.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "ceph/image_reader.hpp"

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
  // Set by librbd's callback threads, read by the calling thread (under Batch::m_mutex).
  bool opened = false;
  bool closed = false;
  // The calling thread's own view: a close is queued and aio_close() has returned.
  bool closing = false;
};

/// The slots and the queue of events from librbd's threads. The callbacks only record
/// the event and wake the calling thread: librbd must never block in them
/// (ceph-notes.md, aio pitfalls).
class Batch {
 public:
  explicit Batch(std::size_t size) : m_args(size) {
    for (std::size_t i = 0; i < size; ++i) {
      m_slots.push_back(std::make_unique<Slot>());
      m_args[i] = Arg{this, i};
      m_free.push_back(i);
    }
  }

  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  /// Waits for every open and close in flight and closes what is still open, so that no
  /// callback can reach a destroyed Batch and no Image is destroyed while librbd uses it.
  ~Batch() {
    std::unique_lock lock(m_mutex);
    for (;;) {
      for (std::size_t i = 0; i < m_slots.size(); ++i) {
        Slot& slot = *m_slots[i];
        if (slot.open && slot.opened && !slot.closing) {
          lock.unlock();
          start_close(i);  // cannot fail for an image that opened
          lock.lock();
        }
      }
      if (m_free.size() == m_slots.size()) {
        break;
      }
      m_changed.wait(lock);
    }
  }

  bool has_free() {
    std::lock_guard lock(m_mutex);
    return !m_free.empty();
  }

  /// Waits until a slot is free (its image closed).
  void wait_free() {
    std::unique_lock lock(m_mutex);
    m_changed.wait(lock, [this] { return !m_free.empty(); });
  }

  /// Starts opening refs[index] in a free slot.
  void start_open(librbd::RBD& rbd, librados::IoCtx& io, const inventory::ImageRef& ref,
                  std::size_t index) {
    std::size_t at = 0;
    {
      std::lock_guard lock(m_mutex);
      at = m_free.front();
      m_free.pop_front();
    }
    Slot& slot = *m_slots[at];
    slot.index = index;
    slot.opened = slot.closed = slot.closing = false;
    slot.open.reset(new librbd::RBD::AioCompletion(make_arg(at), &Batch::on_opened));
    // Format 1 images have no id and are opened by name.
    const int r =
        ref.image_id.empty()
            ? rbd.aio_open_read_only(io, slot.image, ref.name.c_str(), nullptr, slot.open.get())
            : rbd.aio_open_by_id_read_only(io, slot.image, ref.image_id.c_str(), nullptr,
                                           slot.open.get());
    if (r < 0) {
      // Not queued: no callback will come. Report it like a failed open.
      std::lock_guard lock(m_mutex);
      slot.opened = true;
      m_open_results[at] = r;
      m_ready.push_back(at);
    }
  }

  /// Waits for an open to finish; returns its slot and what the open returned.
  std::pair<std::size_t, int> wait_opened() {
    std::unique_lock lock(m_mutex);
    m_changed.wait(lock, [this] { return !m_ready.empty(); });
    const std::size_t at = m_ready.front();
    m_ready.pop_front();
    const auto found = m_open_results.find(at);
    int r = 0;
    if (found != m_open_results.end()) {
      r = found->second;
      m_open_results.erase(found);
    } else {
      r = static_cast<int>(m_slots[at]->open->get_return_value());
    }
    return {at, r};
  }

  Slot& slot(std::size_t at) { return *m_slots[at]; }

  /// Closes the image of slot `at` (if it opened) and frees the slot once librbd is done.
  void finish(std::size_t at, int open_result) {
    if (open_result < 0) {
      std::lock_guard lock(m_mutex);
      release(at);
      return;
    }
    start_close(at);
  }

 private:
  static void on_opened(librbd::completion_t /*completion*/, void* arg) {
    auto* self = static_cast<Arg*>(arg);
    std::lock_guard lock(self->batch->m_mutex);
    self->batch->m_slots[self->at]->opened = true;
    self->batch->m_ready.push_back(self->at);
    self->batch->m_changed.notify_all();
  }

  static void on_closed(librbd::completion_t /*completion*/, void* arg) {
    auto* self = static_cast<Arg*>(arg);
    std::lock_guard lock(self->batch->m_mutex);
    Slot& slot = *self->batch->m_slots[self->at];
    slot.closed = true;
    // aio_close() clears the Image's handle only after queuing the close: the slot may
    // be reused only once aio_close() has returned too.
    if (slot.closing) {
      self->batch->release(self->at);
    }
    self->batch->m_changed.notify_all();
  }

  void start_close(std::size_t at) {
    Slot& slot = *m_slots[at];
    slot.close.reset(new librbd::RBD::AioCompletion(make_arg(at), &Batch::on_closed));
    const int r = slot.image.aio_close(slot.close.get());
    std::lock_guard lock(m_mutex);
    slot.closing = true;
    if (r < 0 || slot.closed) {
      release(at);
    }
    m_changed.notify_all();
  }

  /// Called with m_mutex held.
  void release(std::size_t at) {
    Slot& slot = *m_slots[at];
    slot.open.reset();
    slot.close.reset();
    slot.opened = slot.closed = slot.closing = false;
    m_free.push_back(at);
  }

  struct Arg {
    Batch* batch;
    std::size_t at;
  };
  void* make_arg(std::size_t at) { return &m_args[at]; }

  std::vector<Arg> m_args;  ///< the callbacks' arguments, one per slot; never resized
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::vector<std::unique_ptr<Slot>> m_slots;
  std::deque<std::size_t> m_free;
  std::deque<std::size_t> m_ready;
  std::map<std::size_t, int> m_open_results;
};

}  // namespace

void read_images_librbd(librbd::RBD& rbd, librados::IoCtx& io, const inventory::Pool& pool,
                        const std::vector<inventory::ImageRef>& refs, bool exact_usage,
                        const sync::InventorySource::OnRead& on_read, std::size_t in_flight) {
  Batch batch(std::max<std::size_t>(1, std::min(in_flight, refs.size())));
  std::size_t next = 0;
  std::size_t opening = 0;
  while (next < refs.size() || opening > 0) {
    while (next < refs.size() && batch.has_free()) {
      // ImageCtx copies the IoCtx when the open starts, namespace included.
      io.set_namespace(refs[next].pool_namespace);
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
    sync::ImageRead read = read_open_image(rbd, io, pool, ref, exact_usage, slot.image, opened);
    const std::size_t index = slot.index;
    batch.finish(at, opened);
    on_read(index, std::move(read));
  }
  io.set_namespace("");
}

}  // namespace rbdsync::ceph
