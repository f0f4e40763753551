#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "inventory/inventory.hpp"
#include "sync/source.hpp"
#include "sync/usage_marks.hpp"

namespace rbdsync::ceph {

/// The ways an image is read, as sync::ReadMethods::images and --json's read.images name
/// them: decoded from its header objects, or opened through librbd.
inline constexpr const char* k_read_from_header = "header";
inline constexpr const char* k_read_through_librbd = "librbd";

/// Called by the batch readers with the index of an image into the page of references
/// they were given and how reading it went. CephSource turns it into the
/// sync::InventorySource::OnRead of the reference, checking that every image of the
/// page is reported exactly once.
using OnPageRead = std::function<void(std::size_t index, sync::ImageRead read)>;

/// Images one reader handed to the other, by reason (ceph/fallback_reason.hpp): the
/// direct reader's to librbd, and the librbd reader's that librbd may not open to the
/// header decoder. Both are --json's read.fallbacks (docs/glossary.md, "fallback").
using FallbackCounts = std::map<std::string, std::size_t>;

/// One way of reading a page of one pool's images: the direct reader
/// (ceph/direct/direct_reader.hpp) or the librbd reader (ceph/librbd/librbd_reader.hpp).
/// CephSource holds the sync's one and counts what it answers: images by way ("header":
/// decoded from their headers, "librbd": opened through librbd; a way the reader reports
/// is listed in --json's read.images even at 0), and why images went from one reader to
/// the other (FallbackCounts).
class BatchReader {
 public:
  BatchReader() = default;
  BatchReader(const BatchReader&) = delete;
  BatchReader& operator=(const BatchReader&) = delete;
  BatchReader(BatchReader&&) = delete;
  BatchReader& operator=(BatchReader&&) = delete;
  virtual ~BatchReader() = default;

  /// Reads `refs` of `pool`, telling `on_read` of each by its index exactly once, and
  /// says how. `marks`: the stored images' usage marks, nullptr when none may be carried
  /// (the librbd reader carries none). Throws as CephSource::read_image() does, after
  /// the reads in flight have finished.
  virtual sync::ReadMethods read(const inventory::Pool& pool,
                                 const std::vector<inventory::ImageRef>& refs,
                                 const sync::UsageMarks* marks, const OnPageRead& on_read) = 0;
};

}  // namespace rbdsync::ceph
