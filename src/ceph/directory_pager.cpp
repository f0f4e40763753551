#include "ceph/directory_pager.hpp"

#include <cerrno>
#include <cstdint>
#include <utility>

#include <spdlog/spdlog.h>

#include "ceph/ceph_error.hpp"
#include "ceph/wire/encoding.hpp"
#include "ceph/wire/header_decoder.hpp"
#include "ceph/wire/pool_objects.hpp"
#include "common/error.hpp"
#include "common/text.hpp"
#include "sync/source.hpp"

namespace rbdsync::ceph {

namespace {

std::string in_namespace(const std::string& ns) {
  return ns.empty() ? std::string() : " namespace '" + display_text(ns, Controls::escape) + "'";
}

/// " pool 'NAME'" and its namespace, for messages: which listing failed.
std::string of_pool(const librados::IoCtx& io, const std::string& ns) {
  return " pool '" + display_text(io.get_pool_name(), Controls::escape) + "'" + in_namespace(ns);
}

}  // namespace

DirectoryPage directory_page(const std::string& ns,
                             const std::map<std::string, librados::bufferlist>& entries) {
  const std::string prefix = k_image_id_key_prefix;
  DirectoryPage page;
  page.images.reserve(entries.size());
  for (const auto& [key, value] : entries) {
    if (key.size() <= prefix.size() || key.compare(0, prefix.size(), prefix) != 0) {
      spdlog::warn("rbd_directory{}: entry '{}' names no image id; left out", in_namespace(ns),
                   display_text(key, Controls::escape));
      continue;
    }
    std::string id = key.substr(prefix.size());
    const std::string bytes = value.to_str();
    if (auto name = decode_directory_name(bytes)) {
      page.images.push_back(inventory::ImageRef{ns, std::move(id), std::move(*name)});
    } else {
      // A copy of the prefix, not the value's buffer cut short: that would keep its size.
      page.damaged.push_back(
          inventory::ImageRef{ns, std::move(id), bytes.substr(0, k_damaged_name_bytes)});
    }
  }
  return page;
}

DirectoryPager::DirectoryPager(librados::IoCtx& io, std::size_t page_size)
    : m_io(io), m_ns(io.get_namespace()), m_page_size(page_size) {
  request();
}

DirectoryPager::~DirectoryPager() {
  if (m_reply) {
    m_reply->wait_for_complete();
  }
}

void DirectoryPager::request() {
  m_entries.clear();
  m_more = false;
  m_entries_r = 0;
  m_op.emplace();
  m_op->omap_get_vals2(m_after, k_image_id_key_prefix, m_page_size, &m_entries, &m_more,
                       &m_entries_r);
  m_reply.reset(librados::Rados::aio_create_completion());
  const int r = m_io.aio_operate(k_directory_object, m_reply.get(), &*m_op, nullptr);
  if (r < 0) {
    m_reply.reset();
    throw_ceph_error(r, "cannot list the images of" + of_pool(m_io, m_ns) + " (rbd_directory)");
  }
}

int DirectoryPager::wait() {
  m_reply->wait_for_complete();
  const int r = m_reply->get_return_value();
  m_reply.reset();
  m_op.reset();
  return r < 0 ? r : m_entries_r;
}

std::optional<DirectoryPage> DirectoryPager::next() {
  if (m_done) {
    return std::nullopt;
  }
  const int r = wait();
  if (r == -ENOENT) {
    m_done = true;
    return std::nullopt;
  }
  check(r, "cannot list the images of" + of_pool(m_io, m_ns) + " (rbd_directory)");
  const std::map<std::string, librados::bufferlist> entries = std::move(m_entries);
  m_done = !m_more || entries.empty();
  if (!m_done) {
    m_after = entries.rbegin()->first;
    request();
  }
  return directory_page(m_ns, entries);
}

std::vector<inventory::ImageRef> list_format1_images(librados::IoCtx& io) {
  librados::bufferlist data;
  const int r = io.read(k_directory_object, data, 0, 0);
  if (r == -ENOENT) {
    return {};
  }
  check(r, "cannot read the format 1 images of" + of_pool(io, "") + " (rbd_directory)");
  const std::optional<std::vector<std::string>> names = decode_format1_directory(data.to_str());
  if (!names) {
    throw sync::PoolDamaged(ExitCode::data,
                            "the format 1 image list of" + of_pool(io, "") +
                                " (rbd_directory's data) cannot be decoded",
                            "check the pool's rbd_directory object (rados -p POOL get "
                            "rbd_directory -); the pool is left out of syncs until it decodes");
  }
  std::vector<inventory::ImageRef> images;
  images.reserve(names->size());
  for (const std::string& name : *names) {
    images.push_back(inventory::ImageRef{"", "", name});
  }
  return images;
}

std::map<std::string, inventory::ImageRef> list_removing_images(librados::IoCtx& io) {
  constexpr std::uint8_t k_source_removing = 3;  // RBD_TRASH_IMAGE_SOURCE_REMOVING
  const std::string prefix = k_image_id_key_prefix;
  const std::string ns = io.get_namespace();
  std::map<std::string, inventory::ImageRef> removing;
  std::string after;
  for (bool more = true; more;) {
    std::map<std::string, librados::bufferlist> entries;
    const int r =
        io.omap_get_vals2(k_trash_object, after, prefix, k_directory_page, &entries, &more);
    if (r == -ENOENT || (r >= 0 && entries.empty())) {
      break;
    }
    check(r, "cannot list the trash of" + of_pool(io, ns) + " (rbd_trash)");
    after = entries.rbegin()->first;
    for (const auto& [key, value] : entries) {
      std::optional<TrashSpecHead> spec = decode_trash_spec(value.to_str());
      if (spec && spec->source == k_source_removing && key.size() > prefix.size()) {
        std::string id = key.substr(prefix.size());
        removing.emplace(id, inventory::ImageRef{ns, id, std::move(spec->name)});
      }
    }
  }
  return removing;
}

std::size_t count_directory(librados::IoCtx& io) {
  std::size_t count = list_removing_images(io).size();
  count += io.get_namespace().empty() ? list_format1_images(io).size() : 0;
  DirectoryPager pager(io);
  while (auto page = pager.next()) {
    count += page->images.size() + page->damaged.size();
  }
  return count;
}

}  // namespace rbdsync::ceph
