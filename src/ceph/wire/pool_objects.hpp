#pragma once

/// Names RBD's objects in a pool (librbd/Utils.h, cls_rbd) and decodes the pool-wide ones:
/// the values of `rbd_directory` (format 2 and the format 1 tmap), `rbd_trash` and
/// `rbd_children`, and the requests that ask cls_rbd for them. Plain bytes in, plain
/// values out, as header_decoder.hpp.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rbdsync::ceph {

/// The pool-wide objects of a pool or namespace.
inline constexpr const char* k_directory_object = "rbd_directory";
inline constexpr const char* k_trash_object = "rbd_trash";
inline constexpr const char* k_children_object = "rbd_children";
/// What every key of an image id in `rbd_directory` and `rbd_trash` starts with.
inline constexpr const char* k_image_id_key_prefix = "id_";

/// The key of image `image_id` in `rbd_directory` and `rbd_trash`: id_<id>.
std::string image_id_key(const std::string& image_id);
/// The header object of the format 2 image `image_id`: rbd_header.<id>.
std::string header_object_name(const std::string& image_id);
/// The object map of image `image_id`'s head: rbd_object_map.<id>.
std::string object_map_name(const std::string& image_id);
/// The object map of snapshot `snap_id` of image `image_id`: rbd_object_map.<id>.<snap id
/// in 16 hex digits>, as librbd's ObjectMap::object_map_name().
std::string object_map_name(const std::string& image_id, std::uint64_t snap_id);

/// The name stored in an `rbd_directory` `id_<id>` value; nullopt when not understood.
std::optional<std::string> decode_directory_name(const std::string& bytes);

/// The head of an `rbd_trash` `id_<id>` value (cls::rbd::TrashImageSpec).
struct TrashSpecHead {
  std::uint8_t source = 0;  ///< RBD_TRASH_IMAGE_SOURCE_*: 3 is "removing" (`rbd rm`)
  std::string name;
};

/// An `rbd_trash` `id_<id>` value's source and image name; nullopt when not understood.
std::optional<TrashSpecHead> decode_trash_spec(const std::string& bytes);

/// The image name in an `rbd_trash` `id_<id>` value; nullopt when not understood.
std::optional<std::string> decode_trash_name(const std::string& bytes);

/// The image names of a format 1 `rbd_directory`'s data (a tmap: a bufferlist header,
/// then map<string, bufferlist>); nullopt when it does not decode to its last byte.
/// Empty data is an empty list.
std::optional<std::vector<std::string>> decode_format1_directory(const std::string& bytes);

/// The cls_rbd dir_get_name request for the group (or image) id `id`: the id as a string.
std::string encode_dir_get_name_request(const std::string& id);

/// The `rbd_children` key under which cls_rbd lists the clone v1 children of snapshot
/// `snap_id` of image `image_id` in pool `pool_id` (default namespace).
std::string clone_v1_children_key(std::int64_t pool_id, const std::string& image_id,
                                  std::uint64_t snap_id);

/// The child image ids in an `rbd_children` value (a set of ids); nullopt when not
/// understood.
std::optional<std::vector<std::string>> decode_child_ids(const std::string& bytes);

}  // namespace rbdsync::ceph
