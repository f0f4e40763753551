#pragma once

/// Decodes what the direct reader reads of RBD mirroring: an image's entry in the
/// `rbd_mirroring` object of its pool namespace (cls::rbd::MirrorImage), which with the
/// mirror snapshots of its header (HeaderSnapshot::mirror) gives what librbd's
/// mirror_image_get_info() and mirror_image_get_mode() report. Plain bytes in, plain
/// values out, bounded as header_decoder is: the bytes are untrusted.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ceph/or_fallback.hpp"
#include "ceph/wire/header_decoder.hpp"
#include "inventory/inventory.hpp"

namespace rbdsync::ceph {

/// The object of a pool namespace that holds its mirroring mode, peers and image entries.
inline constexpr const char* k_mirroring_object = "rbd_mirroring";

/// The `rbd_mirroring` omap key of the entry of image `image_id`.
std::string mirror_image_key(const std::string& image_id);

/// An image's mirroring entry (cls::rbd::MirrorImage, encodings 1 and 2).
struct MirrorImageEntry {
  std::string global_id;
  std::uint8_t state = 0;  ///< cls MirrorImageState: 0 disabling, 1 enabled, 2 disabled, 3 creating
  std::uint8_t mode = 0;   ///< cls MirrorImageMode: 0 journal, 1 snapshot
};

/// One entry value; nullopt when not understood (truncated, overlong, a newer
/// encoding).
std::optional<MirrorImageEntry> decode_mirror_image(const std::string& bytes);

/// The image's mirroring as the librbd reader records it, from its entry (nullptr: the
/// image has none, mirroring is disabled for it) and its snapshots in id order: none
/// when disabled; else mode, state and global id from the entry, and primary when the
/// latest mirror snapshot is a primary one (librbd's promotion state). A fallback for
/// journal mode (librbd asks the journal's tag owner) and for a mode it does not know.
OrFallback<std::optional<inventory::Mirroring>> image_mirroring(
    const MirrorImageEntry* entry, const std::vector<HeaderSnapshot>& snapshots);

}  // namespace rbdsync::ceph
