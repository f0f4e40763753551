#include "ceph/ceph_source.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <ctime>
#include <list>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include <spdlog/spdlog.h>
#include <rados/librados.hpp>
#include <rbd/librbd.hpp>

#include "ceph/ceph_error.hpp"
#include "ceph/connection.hpp"
#include "ceph/direct/clone_links.hpp"
#include "ceph/direct/direct_reader.hpp"
#include "ceph/directory_pager.hpp"
#include "ceph/librbd/image_reader.hpp"
#include "ceph/librbd/librbd_reader.hpp"
#include "ceph/not_permitted.hpp"
#include "ceph/pool_figures.hpp"
#include "ceph/wire/pool_objects.hpp"
#include "common/error.hpp"
#include "common/text.hpp"
#include "inventory/librbd_names.hpp"

namespace rbdsync::ceph {

using inventory::ImageRef;
using inventory::Pool;

namespace {

std::string namespace_suffix(const std::string& pool_namespace) {
  return pool_namespace.empty() ? std::string() : " namespace '" + pool_namespace + "'";
}

/// Sends one mon command and returns its output; any failure is cluster-level.
std::string mon_command(librados::Rados& rados, const std::string& command, const char* what) {
  librados::bufferlist in;
  librados::bufferlist out;
  std::string status;
  check(rados.mon_command(command, in, &out, &status),
        std::string("the mon command '") + what + "' failed" +
            (status.empty() ? std::string() : " (" + status + ")"));
  return out.to_str();
}

Pool make_pool(std::int64_t id, const std::string& name) {
  Pool pool;
  pool.id = id;
  pool.name = name;
  return pool;
}

/// 0 when this client may read the pool `io` (its default namespace), else the negative
/// errno of one stat of its directory. The OSD checks the caps before it looks for the
/// object, so a pool never `rbd pool init`-ed (ENOENT) counts as readable.
int pool_read_error(librados::IoCtx& io) {
  std::uint64_t size = 0;
  std::time_t mtime = 0;
  const int r = io.stat(k_directory_object, &size, &mtime);
  return r == -ENOENT ? 0 : std::min(r, 0);
}

/// How many of `key` were added between `before` and `after`.
std::size_t added(const std::map<std::string, std::size_t>& before,
                  const std::map<std::string, std::size_t>& after, const std::string& key) {
  const auto was = before.find(key);
  const auto is = after.find(key);
  return (is == after.end() ? 0 : is->second) - (was == before.end() ? 0 : was->second);
}

/// Says how the direct reader read the images of `pool`: the read methods' growth.
void log_direct_reads(const Pool& pool, const sync::ReadMethods& before,
                      const sync::ReadMethods& after) {
  std::string reasons;
  for (const auto& [reason, count] : after.fallbacks) {
    if (const std::size_t more = added(before.fallbacks, after.fallbacks, reason); more > 0) {
      reasons += (reasons.empty() ? "" : ", ") + reason + ": " + std::to_string(more);
    }
  }
  spdlog::info("pool '{}': {} images decoded from their headers, {} read through librbd{}",
               pool.name, added(before.images, after.images, k_read_from_header),
               added(before.images, after.images, k_read_through_librbd),
               reasons.empty() ? std::string() : " (" + reasons + ")");
}

}  // namespace

/// The connection and the pool handles. Declared in this order on purpose: members are
/// destroyed in reverse, so every IoCtx is closed before the Rados handle shuts down.
struct CephSource::Cluster {
  librados::Rados rados;
  IoContexts contexts{rados};
  librbd::RBD rbd;
  std::string client_name;
  std::string cluster;  ///< the name it was initialised with
  ReaderKind reader = ReaderKind::librbd;
  sync::ReadMethods read_methods;
  /// The direct reader's lookups of clone parents and children, kept for the whole sync.
  CloneLinks links{rados, contexts};
  /// The librbd reader's for the images librbd may not open; none with the direct reader.
  std::optional<DirectReader> refused_reader;
  /// The sync's reader (config.reader).
  std::unique_ptr<BatchReader> batch_reader;

  /// The pool's context in its default namespace.
  librados::IoCtx& pool_context(const Pool& pool) { return contexts.at(pool, ""); }
};

CephSource::CephSource(const CephConfig& config) : m_cluster(std::make_unique<Cluster>()) {
  m_cluster->reader = config.reader;
  m_cluster->client_name = config.client_name;
  m_cluster->cluster = config.cluster;
  connect(m_cluster->rados, config);
  Cluster& cluster = *m_cluster;
  if (config.reader == ReaderKind::direct) {
    cluster.batch_reader = std::make_unique<DirectReader>(
        cluster.rados, cluster.rbd, cluster.contexts, cluster.links, config.exact_usage);
  } else {
    cluster.refused_reader.emplace(cluster.rados, cluster.rbd, cluster.contexts, cluster.links,
                                   config.exact_usage, LibrbdFallback::refused);
    cluster.batch_reader = std::make_unique<LibrbdReader>(
        cluster.rbd, cluster.contexts, config.exact_usage, *cluster.refused_reader);
  }
}

CephSource::~CephSource() = default;

std::string CephSource::cluster_fsid() {
  std::string fsid;
  check(m_cluster->rados.cluster_fsid(&fsid), "cannot read the cluster fsid");
  return fsid;
}

std::string CephSource::cluster_name() {
  std::string name;
  const int r = m_cluster->rados.conf_get("cluster", name);
  // Pacific keeps `cluster` outside its option table, so conf_get() answers ENOENT; the
  // name is then the one this client was initialised with.
  if (r == -ENOENT) {
    return m_cluster->cluster;
  }
  check(r, "cannot read the cluster name");
  return name;
}

sync::PoolSelection CephSource::list_pools(const std::vector<std::string>& names) {
  sync::PoolSelection selection;
  std::vector<Pool>& pools = selection.pools;
  if (!names.empty()) {
    for (const std::string& name : names) {
      const std::int64_t id = m_cluster->rados.pool_lookup(name.c_str());
      if (id == -ENOENT) {
        throw Error(ExitCode::config, "pool '" + name + "' does not exist",
                    "check the name with 'ceph osd pool ls', or leave out --pool to sync "
                    "every rbd pool");
      }
      check(static_cast<int>(id), "cannot look up pool '" + name + "'");
      pools.push_back(make_pool(id, name));
    }
  } else {
    std::list<std::pair<std::int64_t, std::string>> all;
    check(m_cluster->rados.pool_list2(all), "cannot list pools");
    for (const auto& [id, name] : all) {
      Pool pool = make_pool(id, name);
      std::set<std::string> applications;
      check(m_cluster->pool_context(pool).application_list(&applications),
            "cannot read the applications of pool '" + name + "'");
      if (applications.count("rbd") != 0) {
        pools.push_back(std::move(pool));
      }
    }
  }
  std::sort(pools.begin(), pools.end(),
            [](const Pool& a, const Pool& b) { return a.name < b.name; });
  pools.erase(std::unique(pools.begin(), pools.end(),
                          [](const Pool& a, const Pool& b) { return a.id == b.id; }),
              pools.end());
  keep_readable(names.empty(), selection);
  if (pools.empty()) {
    return selection;
  }

  apply_osd_dump(
      mon_command(m_cluster->rados, R"({"prefix":"osd dump","format":"json"})", "osd dump"), pools);
  // Pacific's mon answers `df` from the mgr's last digest: zeros when no mgr runs.
  apply_df(mon_command(m_cluster->rados, R"({"prefix":"df","detail":"detail","format":"json"})",
                       "df detail"),
           pools);
  for (Pool& pool : pools) {
    librados::IoCtx& io = m_cluster->pool_context(pool);
    rbd_mirror_mode_t mode = RBD_MIRROR_MODE_DISABLED;
    const int r = m_cluster->rbd.mirror_mode_get(io, &mode);
    if (r != -ENOENT) {  // ENOENT: never `rbd pool init`-ed, so never mirrored
      check(r, "cannot read the mirror mode of pool '" + pool.name + "'");
    }
    pool.mirror_mode = inventory::pool_mirror_mode_name(mode);
  }
  return selection;
}

void CephSource::keep_readable(bool every_pool, sync::PoolSelection& selection) {
  std::vector<Pool> readable;
  for (Pool& pool : selection.pools) {
    librados::IoCtx& io = m_cluster->pool_context(pool);
    const int r = pool_read_error(io);
    if (r == 0) {
      readable.push_back(std::move(pool));
      continue;
    }
    if (r == -ETIMEDOUT) {
      // The mon answered (it listed the pool) and no OSD did. Since Reef the mon issues
      // no OSD ticket to a client without osd caps, so such a client waits out its
      // timeout instead of being refused as on Pacific: both causes are named.
      throw Error(ExitCode::unavailable,
                  "cannot read pool '" + pool.name + "': " + errno_text(-r) +
                      " (the mon answered, no OSD did)",
                  "check that the OSDs are up (ceph -s) and that client '" +
                      m_cluster->client_name +
                      "' has osd caps (give it osd 'profile rbd-read-only': Ceph 18 and later "
                      "do not answer a client without any), or raise --ceph-timeout");
    }
    if (!is_permission_errno(-r)) {
      check(r, "cannot read pool '" + pool.name + "'");
    }
    if (!every_pool) {
      throw Error(ExitCode::no_permission,
                  "Ceph client '" + m_cluster->client_name + "' may not read pool '" + pool.name +
                      "': " + errno_text(-r),
                  "add osd 'profile rbd-read-only pool=" + pool.name +
                      "' to its caps (ceph auth caps sets them all: repeat the ones it has), or "
                      "leave the pool out of --pool");
    }
    spdlog::debug("pool '{}': this client may not read it: {}",
                  display_text(pool.name, Controls::escape), errno_text(-r));
    selection.unreadable.push_back(sync::UnreadablePool{pool.id, pool.name, errno_text(-r)});
  }
  selection.pools = std::move(readable);
  if (selection.pools.empty() && !selection.unreadable.empty()) {
    std::string all;
    for (const sync::UnreadablePool& pool : selection.unreadable) {
      all += (all.empty() ? "'" : ", '") + pool.name + "'";
    }
    throw Error(ExitCode::no_permission,
                "Ceph client '" + m_cluster->client_name + "' may read none of the rbd pools (" +
                    all + "): " + selection.unreadable.front().error,
                "give it osd 'profile rbd-read-only' (every pool) or 'profile rbd-read-only "
                "pool=NAME' for each pool it should sync (docs/usage.md: Least-privilege clients)");
  }
}

std::vector<std::string> CephSource::every_namespace(const Pool& pool) {
  librados::IoCtx& io = m_cluster->pool_context(pool);
  std::vector<std::string> named;
  const int r = m_cluster->rbd.namespace_list(io, &named);
  // A pool that was never `rbd pool init`-ed has no namespace directory yet.
  if (r != -ENOENT) {
    check(r, "cannot list the RBD namespaces of pool '" + pool.name + "'");
  }
  named.insert(named.begin(), "");
  return named;
}

sync::PoolListing CephSource::list_pool(const Pool& pool) {
  const std::vector<std::string> names = every_namespace(pool);
  sync::PoolListing listing;
  for (auto name = names.begin() + 1; name != names.end(); ++name) {
    listing.namespaces.push_back(inventory::Namespace{pool.id, *name});
  }
  for (const std::string& ns : names) {
    list_namespace_trash(pool, ns, listing.trash);
    listing.image_count += count_directory(m_cluster->contexts.at(pool, ns));
  }
  return listing;
}

std::vector<inventory::TrashEntry> CephSource::list_trash(const Pool& pool) {
  const std::vector<std::string> names = every_namespace(pool);
  std::vector<inventory::TrashEntry> entries;
  for (const std::string& ns : names) {
    list_namespace_trash(pool, ns, entries);
  }
  return entries;
}

void CephSource::list_namespace_trash(const Pool& pool, const std::string& ns,
                                      std::vector<inventory::TrashEntry>& entries) {
  std::vector<librbd::trash_image_info_t> trash;
  const int trashed = m_cluster->rbd.trash_list(m_cluster->contexts.at(pool, ns), trash);
  if (trashed != -ENOENT) {
    check(trashed, "cannot list the trash of pool '" + pool.name + "'" + namespace_suffix(ns));
  }
  for (const librbd::trash_image_info_t& entry : trash) {
    entries.push_back(trash_entry(pool, ns, entry));
  }
}

namespace {

/// Tells `on_read` of a directory entry whose name does not decode: reading it cannot
/// name it, and a second try would meet the same bytes.
void report_damaged_entry(const ImageRef& ref, const sync::InventorySource::OnRead& on_read) {
  sync::ImageRead read;
  read.outcome = sync::ImageRead::Outcome::failed;
  read.error = "its rbd_directory entry cannot be decoded (the name is not an encoded string)";
  read.retriable = false;
  on_read(ref, std::move(read));
}

}  // namespace

void CephSource::read_pool_images(const Pool& pool, const sync::UsageMarks& marks,
                                  const OnRead& on_read) {
  const std::vector<std::string> names = every_namespace(pool);
  const sync::ReadMethods before = m_cluster->read_methods;
  for (const std::string& ns : names) {
    read_namespace(pool, ns, marks, on_read);
  }
  if (m_cluster->reader == ReaderKind::direct) {
    log_direct_reads(pool, before, m_cluster->read_methods);
    spdlog::debug("clone parents and children looked up so far in this sync: {}",
                  m_cluster->links.lookups());
  }
}

void CephSource::read_namespace(const Pool& pool, const std::string& ns,
                                const sync::UsageMarks& marks, const OnRead& on_read) {
  librados::IoCtx& io = m_cluster->contexts.at(pool, ns);
  std::map<std::string, ImageRef> removing = list_removing_images(io);
  if (ns.empty()) {
    read_page(pool, list_format1_images(io), marks, on_read);
  }
  DirectoryPager pager(io);
  while (std::optional<DirectoryPage> page = pager.next()) {
    // Between its trash entry and its directory entry's removal, an image being removed
    // is in both: met once, in the directory.
    for (const ImageRef& ref : page->images) {
      removing.erase(ref.image_id);
    }
    for (const ImageRef& ref : page->damaged) {
      removing.erase(ref.image_id);
      report_damaged_entry(ref, on_read);
    }
    read_page(pool, page->images, marks, on_read);
  }
  std::vector<ImageRef> rest;
  rest.reserve(removing.size());
  for (auto& entry : removing) {
    rest.push_back(std::move(entry.second));
  }
  read_page(pool, rest, marks, on_read);
}

void CephSource::read_page(const Pool& pool, const std::vector<ImageRef>& refs,
                           const sync::UsageMarks& marks, const OnRead& on_read) {
  if (refs.empty()) {
    return;
  }
  std::vector<bool> reported(refs.size(), false);
  read_indexed(pool, refs, &marks, [&](std::size_t index, sync::ImageRead read) {
    if (index >= refs.size() || reported[index]) {
      throw Error(ExitCode::internal, "the reader reported image " + std::to_string(index) +
                                          " of a page of pool '" + pool.name +
                                          "' twice or out of range");
    }
    reported[index] = true;
    on_read(refs[index], std::move(read));
  });
  for (std::size_t index = 0; index < refs.size(); ++index) {
    if (!reported[index]) {
      throw Error(ExitCode::internal,
                  "the reader never reported image '" +
                      display_text(inventory::image_path(pool, refs[index]), Controls::escape) +
                      "'");
    }
  }
}

sync::ImageRead CephSource::read_image(const Pool& pool, const ImageRef& ref) {
  // The syncer's one retry of a failed read goes the same way as the first: with the
  // direct reader, a damaged header is refused again, never handed to librbd, which may
  // not survive it.
  sync::ImageRead result;
  read_indexed(pool, {ref}, nullptr, [&result](std::size_t /*index*/, sync::ImageRead read) {
    result = std::move(read);
  });
  return result;
}

void CephSource::read_indexed(const Pool& pool, const std::vector<ImageRef>& refs,
                              const sync::UsageMarks* marks, const OnPageRead& on_read) {
  // The one place read_methods is written.
  m_cluster->read_methods.add(m_cluster->batch_reader->read(pool, refs, marks, on_read));
}

bool CephSource::keeps_stored_usage() const {
  return m_cluster->reader == ReaderKind::direct;
}

sync::ReadMethods CephSource::read_methods() const {
  return m_cluster->read_methods;
}

}  // namespace rbdsync::ceph
