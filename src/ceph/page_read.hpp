#pragma once

#include <cstddef>
#include <functional>

#include "sync/source.hpp"

namespace rbdsync::ceph {

/// Called by the batch readers with the index of an image into the page of references
/// they were given and how reading it went. CephSource turns it into the
/// sync::InventorySource::OnRead of the reference, checking that every image of the
/// page is reported exactly once.
using OnPageRead = std::function<void(std::size_t index, sync::ImageRead read)>;

}  // namespace rbdsync::ceph
