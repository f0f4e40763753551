#pragma once

/// Inside ceph/ only: the images of a pool's namespace, listed from its `rbd_directory` a
/// page at a time instead of librbd's list2(), which builds the whole directory in memory
/// (a map, then a vector) before it returns.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <rados/librados.hpp>

#include "ceph/in_flight.hpp"
#include "inventory/inventory.hpp"

namespace rbdsync::ceph {

/// Directory entries per page: librbd's own page size for the same directory.
inline constexpr std::size_t k_directory_page = 1024;

/// The most of a damaged directory entry's bytes that stand in for its unknown name. An
/// omap value may hold megabytes; the name goes into log lines, the JSON report and a
/// stale row, each of which should stay short.
inline constexpr std::size_t k_damaged_name_bytes = 256;

/// One page of a directory, in image id order.
struct DirectoryPage {
  std::vector<inventory::ImageRef> images;
  /// Entries whose value is not an encoded name: the image id is known, its name is not
  /// (the ref's name holds the value's first k_damaged_name_bytes bytes as they are).
  std::vector<inventory::ImageRef> damaged;
};

/// Turns the `id_<id>` entries (id -> encoded name) of namespace `ns` into a page. Names
/// and ids are untrusted bytes: an entry whose value does not decode is damaged, one
/// without an id is left out (logged), and neither affects the others.
DirectoryPage directory_page(const std::string& ns,
                             const std::map<std::string, librados::bufferlist>& entries);

/// Pages the format 2 images of one namespace out of `rbd_directory` by image id
/// (omap_get_vals2 over the `id_` keys). A rename changes only the value of an `id_` key,
/// so it can make an image neither met twice nor missed, which paging by name could. The
/// request for the next page is sent before next() returns the current one, so that it
/// arrives while the current page is being read.
class DirectoryPager {
 public:
  /// Sends the request for the first page of the namespace of `io` (the context of one
  /// pool and namespace, IoContexts), which must outlive the pager.
  explicit DirectoryPager(librados::IoCtx& io, std::size_t page_size = k_directory_page);
  /// Waits for the request in flight: its results are written into this object.
  ~DirectoryPager();
  DirectoryPager(const DirectoryPager&) = delete;
  DirectoryPager& operator=(const DirectoryPager&) = delete;

  /// The next page, or nothing once the directory is done (or absent: a namespace
  /// removed meanwhile, a pool never `rbd pool init`-ed). Throws Error when the
  /// directory cannot be read.
  std::optional<DirectoryPage> next();

 private:
  void request();
  /// Waits for the request in flight and returns its result.
  int wait();

  librados::IoCtx& m_io;
  std::string m_ns;  ///< m_io's, for the pages' refs
  std::size_t m_page_size;
  std::string m_after;  ///< the last key received
  bool m_done = false;
  std::optional<librados::ObjectReadOperation> m_op;  ///< kept until its reply
  std::map<std::string, librados::bufferlist> m_entries;
  bool m_more = false;
  int m_entries_r = 0;
  CompletionPtr<librados::AioCompletion> m_reply;
};

/// The format 1 images of a pool (names, no ids), from the tmap in the data of its
/// `rbd_directory`, as librbd lists them: only the default namespace has any, so `io` is
/// the context of that one. Throws Error(ExitCode::data) for a tmap that does not decode
/// (its images cannot be told).
std::vector<inventory::ImageRef> list_format1_images(librados::IoCtx& io);

/// The images of the namespace of `io` being removed, by id: `rbd rm` moves an image to the
/// trash with source "removing" before it deletes it, and librbd's list2() lists those
/// as images while librbd's trash_list() leaves them out. Read from `rbd_trash` itself,
/// a page at a time; an entry that does not decode is left out (it is no image being
/// removed that this client can name).
std::map<std::string, inventory::ImageRef> list_removing_images(librados::IoCtx& io);

/// How many images the directory of the namespace of `io` lists now (format 1 and 2), counted
/// page by page without keeping them, and the images being removed.
std::size_t count_directory(librados::IoCtx& io);

}  // namespace rbdsync::ceph
