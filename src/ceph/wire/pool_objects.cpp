#include "ceph/wire/pool_objects.hpp"

#include <utility>

#include "ceph/wire/encoding.hpp"
#include "common/text.hpp"

namespace rbdsync::ceph {

std::string image_id_key(const std::string& image_id) {
  return k_image_id_key_prefix + image_id;
}

std::string header_object_name(const std::string& image_id) {
  return "rbd_header." + image_id;
}

std::string object_map_name(const std::string& image_id) {
  return "rbd_object_map." + image_id;
}

std::string object_map_name(const std::string& image_id, std::uint64_t snap_id) {
  return object_map_name(image_id) + "." + hex_u64(snap_id);
}

std::optional<std::string> decode_directory_name(const std::string& bytes) {
  Decoder in(bytes);
  std::string name = in.text();
  return in.at_end() ? std::optional<std::string>(std::move(name)) : std::nullopt;
}

std::optional<TrashSpecHead> decode_trash_spec(const std::string& bytes) {
  // TrashImageSpec: ENCODE_START(2, 1) { u8 source, name, deletion and deferment end
  // times, (v2) u8 state }.
  Decoder outer(bytes);
  Decoder in = outer.envelope(1);
  TrashSpecHead head;
  head.source = in.number<std::uint8_t>();
  head.name = in.text();
  if (!in.ok() || !outer.at_end()) {
    return std::nullopt;
  }
  return head;
}

std::optional<std::string> decode_trash_name(const std::string& bytes) {
  auto head = decode_trash_spec(bytes);
  return head ? std::optional<std::string>(std::move(head->name)) : std::nullopt;
}

std::optional<std::vector<std::string>> decode_format1_directory(const std::string& bytes) {
  std::vector<std::string> names;
  if (bytes.empty()) {
    return names;
  }
  Decoder in(bytes);
  in.skip(in.number<std::uint32_t>());
  // count() bounds the count by what the bytes left can hold (two u32 lengths an entry),
  // so a damaged count cannot make the vector reserve or loop beyond the input.
  const std::uint32_t count = in.count(2 * sizeof(std::uint32_t));
  for (std::uint32_t i = 0; i < count && in.ok(); ++i) {
    std::string name = in.text();
    in.skip(in.number<std::uint32_t>());
    names.push_back(std::move(name));
  }
  if (!in.at_end()) {
    return std::nullopt;
  }
  return names;
}

std::string encode_dir_get_name_request(const std::string& id) {
  std::string request;
  for (int i = 0; i < 4; ++i) {
    request.push_back(static_cast<char>((id.size() >> (8 * i)) & 0xff));
  }
  return request + id;
}

std::string clone_v1_children_key(std::int64_t pool_id, const std::string& image_id,
                                  std::uint64_t snap_id) {
  // cls_rbd's parent_key(): pool id, image id, snapshot id, as encode() writes them.
  std::string key;
  const auto put = [&key](std::uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) {
      key.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
    }
  };
  put(static_cast<std::uint64_t>(pool_id), 8);
  put(image_id.size(), 4);
  key += image_id;
  put(snap_id, 8);
  return key;
}

std::optional<std::vector<std::string>> decode_child_ids(const std::string& bytes) {
  Decoder in(bytes);
  const auto count = in.count(sizeof(std::uint32_t));
  std::vector<std::string> ids;
  for (std::uint32_t i = 0; i < count && in.ok(); ++i) {
    ids.push_back(in.text());
  }
  if (!in.at_end()) {
    return std::nullopt;
  }
  return ids;
}

}  // namespace rbdsync::ceph
