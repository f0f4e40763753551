#pragma once

#include <optional>
#include <string>

#include <rados/librados.hpp>
#include <rbd/librbd.hpp>

#include "ceph/or_fallback.hpp"
#include "inventory/inventory.hpp"
#include "sync/source.hpp"

namespace rbdsync::ceph {

/// The inventory's view of a trash entry of `pool` in namespace `pool_namespace`.
inventory::TrashEntry trash_entry(const inventory::Pool& pool, const std::string& pool_namespace,
                                  const librbd::trash_image_info_t& info);

/// The `failed` read of an image whose header layout would crash librbd (layout_damage():
/// a stripe count librbd divides by zero with, ...), or nullopt when librbd may open it.
/// One small omap read; every path that opens an image through librbd asks it first.
std::optional<sync::ImageRead> refuse_damaged_layout(librados::IoCtx& io,
                                                     const inventory::ImageRef& ref);

/// One listed image as librbd reaches it; every member is borrowed from the caller.
struct ListedImage {
  librbd::RBD& rbd;
  librados::IoCtx& io;  ///< the context of the image's pool and namespace (IoContexts)
  const inventory::Pool& pool;
  const inventory::ImageRef& ref;  ///< its entry in the pool's directory
};

/// Reads one listed image through librbd, read-only (after refuse_damaged_layout()). A
/// failure confined to the image becomes the `gone` or `failed` outcome; an errno that
/// means the cluster or our access to it is in trouble (is_beyond_one_image) throws Error.
/// `exact_usage` computes usage even where no valid fast-diff map makes it cheap (what
/// `rbd du` does then: object by object). What this client may not read
/// (ceph/not_permitted.hpp: the clones of a snapshot, the name of a group, usage in a data
/// pool) is stored as unknown with its reason. A fallback (Fallback::librbd_not_permitted) when
/// librbd was not permitted to open the image at all (EPERM/EACCES): librbd opens a clone's parent
/// with it, and this client may not read the parent's pool; the caller decodes its header instead
/// (read_images_direct()).
OrFallback<sync::ImageRead> read_image(const ListedImage& listed, bool exact_usage);

/// read_image() of an image already being opened (the caller asked refuse_damaged_layout()) into
/// `image`: `opened` is what opening it returned (0 or a negative errno), or nullopt to open it
/// here. The caller closes `image`; a retry after a vanished snapshot opens the image again on its
/// own.
OrFallback<sync::ImageRead> read_open_image(const ListedImage& listed, bool exact_usage,
                                            librbd::Image& image, std::optional<int> opened);

}  // namespace rbdsync::ceph
