#pragma once

#include <cstddef>
#include <vector>

#include <rados/librados.hpp>
#include <rbd/librbd.hpp>

#include "ceph/batch_reader.hpp"
#include "ceph/connection.hpp"
#include "inventory/inventory.hpp"
#include "sync/source.hpp"

namespace rbdsync::ceph {

/// How many librbd opens the batch keeps in flight. librbd's open costs several OSD
/// operations and much client CPU, so a few dozen in flight saturate a small client and
/// more do not help (measured for #9; docs/performance.md has its cost).
inline constexpr std::size_t k_librbd_opens_in_flight = 32;

/// read_image() for many images of `pool`, `in_flight` opens at a time: the opens run
/// in librbd (aio_open_read_only), the reads of each opened image on the calling
/// thread, which also calls `on_read`; each image in its namespace's context of
/// `contexts`. When `on_read` or a read throws, every open still in flight is
/// waited for and every image closed before the exception leaves. Returns the indices of
/// the images librbd was not permitted to open (read_image() fell back), which
/// `on_read` has not heard of: the caller reads them another way.
std::vector<std::size_t> read_images_librbd(librbd::RBD& rbd, IoContexts& contexts,
                                            const inventory::Pool& pool,
                                            const std::vector<inventory::ImageRef>& refs,
                                            bool exact_usage, const OnPageRead& on_read,
                                            std::size_t in_flight = k_librbd_opens_in_flight);

/// The librbd reader as a BatchReader: read_images_librbd() over each page, counted
/// "librbd"; the images librbd was not permitted to open go to `refused`, a reader that
/// does not ask librbd again (the direct reader, LibrbdFallback::refused), counted
/// "header" with the reason Fallback::librbd_not_permitted.
class LibrbdReader final : public BatchReader {
 public:
  LibrbdReader(librbd::RBD& rbd, IoContexts& contexts, bool exact_usage, BatchReader& refused)
      : m_rbd(rbd), m_contexts(contexts), m_exact_usage(exact_usage), m_refused(refused) {}

  sync::ReadMethods read(const inventory::Pool& pool, const std::vector<inventory::ImageRef>& refs,
                         const sync::UsageMarks* marks, const OnPageRead& on_read) override;

 private:
  librbd::RBD& m_rbd;
  IoContexts& m_contexts;
  bool m_exact_usage;
  BatchReader& m_refused;
};

}  // namespace rbdsync::ceph
