#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ceph/batch_reader.hpp"
#include "inventory/inventory.hpp"
#include "sync/source.hpp"

namespace rbdsync::ceph {

/// How images are read (the core maps --reader, cli::ImageReader, onto it).
enum class ReaderKind {
  librbd,  ///< open each image read-only through librbd, as `rbd info` does
  direct,  ///< decode each image's header object; librbd for what it does not understand
};

/// How to reach the cluster; the same knobs the `rbd` CLI has.
struct CephConfig {
  std::string cluster = "ceph";  ///< $cluster in Ceph's search paths (/etc/ceph/$cluster.conf)
  /// empty: $CEPH_CONF, then Ceph's default search path, where a missing file is no error
  /// once CEPH_ARGS or `mon_host` names the mons
  std::string conf_path;
  std::string client_name;   ///< full name, e.g. "client.admin"
  std::string keyring_path;  ///< empty: the `keyring` setting of ceph.conf
  std::string mon_host;      ///< empty: the `mon_host` setting of ceph.conf or CEPH_ARGS
  std::string keyfile_path;  ///< empty: the key comes from the keyring
  int timeout_seconds = 30;  ///< mount, mon and OSD operation timeout
  /// Compute usage even without a valid fast-diff map, object by object (`rbd du` does
  /// that too, slowly); otherwise such usage is left unknown.
  bool exact_usage = false;
  ReaderKind reader = ReaderKind::direct;
};

/// Reads the RBD inventory through librados/librbd. Connects in the constructor and
/// disconnects in the destructor. The librados types stay inside the .cpp files.
class CephSource : public sync::InventorySource {
 public:
  /// Connects to the cluster, configured as `rbd` is: the conf file, then CEPH_ARGS, then
  /// `config`'s settings. Throws Error with ExitCode::config (no ceph.conf and no mon
  /// address, no keyring), ExitCode::no_permission (cephx refused) or ExitCode::unavailable
  /// (no mon answered within the timeout).
  explicit CephSource(const CephConfig& config);
  ~CephSource() override;
  CephSource(const CephSource&) = delete;
  CephSource& operator=(const CephSource&) = delete;

  std::string cluster_fsid() override;
  /// The cluster name the client was configured with (CephConfig::cluster).
  std::string cluster_name() override;
  /// Figures from one `osd dump` and one `df detail` mon command for all pools, and
  /// each pool's mirror mode. Whether this client may read a pool is asked with one stat
  /// of its directory (see sync::InventorySource::list_pools for what follows). A failing
  /// mon command throws Error (unavailable or no_permission: a client allowed to list
  /// pools at all holds `mon r`, which both commands need); an answer that is not the
  /// expected JSON, Error(ExitCode::data).
  sync::PoolSelection list_pools(const std::vector<std::string>& names) override;
  /// The namespaces and trash of `pool`; the images are counted, not kept: a pass over
  /// each namespace's directory (DirectoryPager) and the trash entries being removed.
  sync::PoolListing list_pool(const inventory::Pool& pool) override;
  /// librbd's trash_list() of each namespace: what `rbd trash ls` shows.
  std::vector<inventory::TrashEntry> list_trash(const inventory::Pool& pool) override;
  /// Never throws for a failure of this one image (see sync::ImageRead); throws Error
  /// for EACCES, EPERM, ETIMEDOUT, ENOTCONN, ECONNREFUSED and ESHUTDOWN, except the
  /// EPERM of what lives in another pool (ceph/not_permitted.hpp): stored as unknown.
  /// An image librbd may not open (its parent's pool is not readable) is decoded from
  /// its header, with either reader.
  sync::ImageRead read_image(const inventory::Pool& pool, const inventory::ImageRef& ref) override;
  /// Lists what librbd's list2() lists, a page of `rbd_directory` at a time (by image id,
  /// the next page requested while the current one is read): each namespace's format 2
  /// images, the default namespace's format 1 images, and the images being removed
  /// (trash source "removing") that the directory no longer lists. Each page is read with
  /// many reads in flight: 32 librbd opens, or 256 header reads with the direct reader. A
  /// directory entry whose name does not decode is reported failed, not retriable.
  /// Throws as read_image() does, after the reads in flight have finished. The direct
  /// reader carries the usage of the idle images of `marks`; the librbd reader reads all.
  void read_pool_images(const inventory::Pool& pool, const sync::UsageMarks& marks,
                        const OnRead& on_read) override;
  /// "header" (decoded by the direct reader) and "librbd" images; the direct reader's
  /// reasons for reading an image through librbd, and the librbd reader's for decoding
  /// one. The syncer's retry of a failed image (read_image()) is counted like any read.
  sync::ReadMethods read_methods() const override;
  /// True with the direct reader; the librbd reader reads every image's maps.
  bool keeps_stored_usage() const override;

 private:
  /// Moves the pools this client may not read out of `selection.pools`: into
  /// `unreadable` for a sync of every pool, else throws Error(ExitCode::no_permission).
  void keep_readable(bool every_pool, sync::PoolSelection& selection);
  /// Appends the trash entries of namespace `ns` of `pool` to `entries`.
  void list_namespace_trash(const inventory::Pool& pool, const std::string& ns,
                            std::vector<inventory::TrashEntry>& entries);
  /// The namespaces of `pool`: the default one (""), then the named ones.
  std::vector<std::string> every_namespace(const inventory::Pool& pool);
  /// Reads the images of namespace `ns` of `pool`, page by page.
  void read_namespace(const inventory::Pool& pool, const std::string& ns,
                      const sync::UsageMarks& marks, const OnRead& on_read);
  /// Reads one page of references; every one is reported to `on_read` exactly once.
  void read_page(const inventory::Pool& pool, const std::vector<inventory::ImageRef>& refs,
                 const sync::UsageMarks& marks, const OnRead& on_read);
  /// The batch readers over `refs`, reporting by index; `marks` nullptr: none carried.
  void read_indexed(const inventory::Pool& pool, const std::vector<inventory::ImageRef>& refs,
                    const sync::UsageMarks* marks, const OnPageRead& on_read);

  struct Cluster;
  std::unique_ptr<Cluster> m_cluster;
};

}  // namespace rbdsync::ceph
