#include "ceph/ceph_source.hpp"

#include <algorithm>
#include <cerrno>
#include <list>
#include <map>
#include <set>
#include <utility>

#include <spdlog/spdlog.h>
#include <rados/librados.hpp>
#include <rbd/librbd.hpp>

#include "common/error.hpp"

namespace rbdsync::ceph {

using inventory::Image;
using inventory::ImageRef;
using inventory::Pool;

namespace {

/// Turns a negative errno from librados/librbd into the error type, naming what was
/// being attempted. The exit code follows the errno class.
[[noreturn]] void throw_ceph_error(int r, const std::string& what, std::string hint = {}) {
  const int error_number = -r;
  ExitCode code = ExitCode::unavailable;
  switch (error_number) {
    case EACCES:
    case EPERM:
      code = ExitCode::no_permission;
      if (hint.empty()) {
        hint = "grant the client 'mon profile rbd, osd profile rbd-read-only' caps";
      }
      break;
    case ETIMEDOUT:
    case ENOTCONN:
    case ECONNREFUSED:
    case ESHUTDOWN:
      code = ExitCode::unavailable;
      if (hint.empty()) {
        hint = "check that the cluster is up and reachable (ceph -s), or raise --ceph-timeout";
      }
      break;
    default:
      break;
  }
  throw Error(code, what + ": " + errno_text(error_number), std::move(hint));
}

void check(int r, const std::string& what, std::string hint = {}) {
  if (r < 0) {
    throw_ceph_error(r, what, std::move(hint));
  }
}

std::string image_path(const Pool& pool, const ImageRef& image) {
  if (image.pool_namespace.empty()) {
    return pool.name + "/" + image.name;
  }
  return pool.name + "/" + image.pool_namespace + "/" + image.name;
}

}  // namespace

/// The connection and the pool handles. Declared in this order on purpose: members are
/// destroyed in reverse, so every IoCtx is closed before the Rados handle shuts down.
struct CephSource::Cluster {
  librados::Rados rados;
  std::map<std::int64_t, librados::IoCtx> pools;
  librbd::RBD rbd;

  librados::IoCtx& pool_context(const Pool& pool) {
    auto found = pools.find(pool.id);
    if (found != pools.end()) {
      return found->second;
    }
    librados::IoCtx io;
    check(rados.ioctx_create2(pool.id, io), "cannot open pool '" + pool.name + "'");
    return pools.emplace(pool.id, std::move(io)).first->second;
  }
};

CephSource::CephSource(const CephConfig& config) : m_cluster(std::make_unique<Cluster>()) {
  librados::Rados& rados = m_cluster->rados;
  check(rados.init2(config.client_name.c_str(), "ceph", 0),
        "invalid Ceph client name '" + config.client_name + "'",
        "give --id NAME or --name client.NAME");

  // nullptr lets librados look at $CEPH_CONF and the default search path, as rbd does.
  const char* conf = config.conf_path.empty() ? nullptr : config.conf_path.c_str();
  const int r = rados.conf_read_file(conf);
  if (r < 0) {
    const std::string where = conf ? "'" + config.conf_path + "'"
                                   : "($CEPH_CONF, /etc/ceph/ceph.conf, ~/.ceph/ceph.conf)";
    throw Error(ExitCode::config, "cannot read Ceph config " + where + ": " + errno_text(-r),
                "give the path of a readable ceph.conf with --ceph-conf");
  }
  if (!config.keyring_path.empty()) {
    check(rados.conf_set("keyring", config.keyring_path.c_str()), "invalid --keyring");
  }

  // Without these a dead mon or a stuck OSD makes librados wait forever.
  const std::string timeout = std::to_string(config.timeout_seconds);
  for (const char* option :
       {"client_mount_timeout", "rados_mon_op_timeout", "rados_osd_op_timeout"}) {
    check(rados.conf_set(option, timeout.c_str()), std::string("cannot set ") + option);
  }
  // Ceph's own diagnostics would otherwise interleave with our one-line errors; they
  // still go to the client log file if ceph.conf names one.
  rados.conf_set("log_to_stderr", "false");
  rados.conf_set("err_to_stderr", "false");

  const int connected = rados.connect();
  if (connected == -ENOENT) {
    throw Error(ExitCode::config, "no keyring found for Ceph client '" + config.client_name + "'",
                "set 'keyring' in ceph.conf or give --keyring PATH");
  }
  if (connected == -EACCES || connected == -EPERM) {
    throw Error(ExitCode::no_permission,
                "Ceph refused to authenticate '" + config.client_name + "'",
                "check that the keyring holds that client's current key (ceph auth get " +
                    config.client_name + ")");
  }
  check(connected, "cannot connect to the Ceph cluster as '" + config.client_name + "'");
  spdlog::debug("connected to Ceph as {}", config.client_name);
}

CephSource::~CephSource() = default;

std::string CephSource::cluster_fsid() {
  std::string fsid;
  check(m_cluster->rados.cluster_fsid(&fsid), "cannot read the cluster fsid");
  return fsid;
}

std::vector<Pool> CephSource::list_pools(const std::vector<std::string>& names) {
  std::vector<Pool> pools;
  if (!names.empty()) {
    for (const std::string& name : names) {
      const std::int64_t id = m_cluster->rados.pool_lookup(name.c_str());
      if (id == -ENOENT) {
        throw Error(ExitCode::config, "pool '" + name + "' does not exist",
                    "check the name with 'ceph osd pool ls', or leave out --pool to sync "
                    "every rbd pool");
      }
      check(static_cast<int>(id), "cannot look up pool '" + name + "'");
      pools.push_back(Pool{id, name});
    }
  } else {
    std::list<std::pair<std::int64_t, std::string>> all;
    check(m_cluster->rados.pool_list2(all), "cannot list pools");
    for (const auto& [id, name] : all) {
      Pool pool{id, name};
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
  pools.erase(std::unique(pools.begin(), pools.end()), pools.end());
  return pools;
}

std::vector<ImageRef> CephSource::list_images(const Pool& pool) {
  librados::IoCtx& io = m_cluster->pool_context(pool);
  io.set_namespace("");
  std::vector<std::string> namespaces;
  const int r = m_cluster->rbd.namespace_list(io, &namespaces);
  // A pool that was never `rbd pool init`-ed has no namespace directory yet.
  if (r != -ENOENT) {
    check(r, "cannot list the RBD namespaces of pool '" + pool.name + "'");
  }
  namespaces.insert(namespaces.begin(), "");

  std::vector<ImageRef> refs;
  for (const std::string& ns : namespaces) {
    io.set_namespace(ns);
    std::vector<librbd::image_spec_t> specs;
    const int listed = m_cluster->rbd.list2(io, &specs);
    if (listed == -ENOENT) {
      continue;  // namespace removed since namespace_list, or no rbd_directory yet
    }
    check(listed, "cannot list the images of pool '" + pool.name +
                      (ns.empty() ? "" : "' namespace '" + ns) + "'");
    for (auto& spec : specs) {
      refs.push_back(ImageRef{ns, std::move(spec.id), std::move(spec.name)});
    }
  }
  io.set_namespace("");
  return refs;
}

std::optional<Image> CephSource::read_image(const Pool& pool, const ImageRef& ref) {
  librados::IoCtx& io = m_cluster->pool_context(pool);
  io.set_namespace(ref.pool_namespace);
  const std::string path = image_path(pool, ref);

  // Read-only: takes no exclusive lock and registers no watch, so the sync never
  // disturbs a client that has the image mapped.
  librbd::Image image;
  const int r = m_cluster->rbd.open_by_id_read_only(io, image, ref.image_id.c_str(), nullptr);
  if (r == -ENOENT) {
    return std::nullopt;
  }
  check(r, "cannot open image '" + path + "'");

  librbd::image_info_t info{};
  check(image.stat(info, sizeof info), "cannot stat image '" + path + "'");
  std::uint64_t features = 0;
  check(image.features(&features), "cannot read the features of image '" + path + "'");

  Image result;
  result.key = inventory::ImageKey{pool.id, ref.pool_namespace, ref.image_id};
  result.name = ref.name;
  result.size_bytes = info.size;
  result.object_size = info.obj_size;
  result.features = features;
  return result;
}

}  // namespace rbdsync::ceph
