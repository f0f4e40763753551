// The floor of an inventory read: list the images of each pool, then read each image's
// header object (`rbd_header.<id>`, its omap: size, features, snapshots, parent ...) with
// one omap_get_vals2 per image in one aio_operate, IN_FLIGHT at a time. Nothing is decoded
// and nothing is stored: no inventory can be read with fewer OSD round trips.
//
//   header_floor CONF CLIENT_ID POOL [POOL ...]        (env RBDSYNC_HEADER_FLOOR_IN_FLIGHT, 64)
//
// RBDSYNC_HEADER_FLOOR_ALSO=watchers,lock,map adds, one by one, the other reads rbd-sync's direct
// reader makes of each image (the header's watchers and exclusive-lock owner in the same
// operation; its head object map in a second one), to show what each costs (issue #18);
// lockxattr reads the lock's xattr in place of cls_lock's get_info.
//
// Prints one line: images, header omap keys read, what was also read, seconds inside the
// program.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <rados/librados.hpp>
#include <rbd/librbd.hpp>

namespace {

void fail(const std::string& what, int r) {
  std::fprintf(stderr, "header_floor: %s: error %d\n", what.c_str(), r);
  std::exit(1);
}

/// One header read; owned by the Reader until finish() releases its completion.
class Reader;

/// What RBDSYNC_HEADER_FLOOR_ALSO adds to each image's header read.
struct Also {
  bool watchers = false;
  bool lock = false;
  bool lock_xattr = false;
  bool map = false;
};

struct Read {
  Reader* owner = nullptr;
  librados::ObjectReadOperation op;
  std::map<std::string, librados::bufferlist> values;
  bool more = false;
  int result = 0;
  std::list<obj_watch_t> watchers;
  int watchers_result = 0;
  librados::bufferlist lock_in;
  librados::bufferlist lock_out;
  int lock_result = 0;
  librados::ObjectReadOperation map_op;
  librados::bufferlist map;
  int map_result = 0;
  librados::AioCompletion* completion = nullptr;
  librados::AioCompletion* map_completion = nullptr;
  int pending = 1;  ///< completions still to come (under the Reader's mutex)
};

/// cls_lock's get_info request for `name`: ENCODE_START(1, 1) and the name.
librados::bufferlist lock_info_request(const std::string& name) {
  librados::bufferlist request;
  const auto put32 = [&request](std::uint32_t value) {
    for (int byte = 0; byte < 4; ++byte) {
      request.append(static_cast<char>((value >> (8 * byte)) & 0xff));
    }
  };
  request.append(static_cast<char>(1));
  request.append(static_cast<char>(1));
  put32(static_cast<std::uint32_t>(4 + name.size()));
  put32(static_cast<std::uint32_t>(name.size()));
  request.append(name);
  return request;
}

class Reader {
 public:
  Reader(int in_flight, Also also) : m_limit(in_flight), m_also(also) {}

  void start(librados::IoCtx& io, const std::string& image_id) {
    std::unique_lock<std::mutex> lock(m_mutex);
    m_changed.wait(lock, [&] { return m_running < m_limit; });
    ++m_running;
    lock.unlock();
    auto read = std::make_unique<Read>();
    read->owner = this;
    read->op.omap_get_vals2("", 1024, &read->values, &read->more, &read->result);
    if (m_also.watchers) {
      read->op.list_watchers(&read->watchers, &read->watchers_result);
    }
    if (m_also.lock) {
      read->lock_in = lock_info_request("rbd_lock");
      read->op.exec("lock", "get_info", read->lock_in, &read->lock_out, &read->lock_result);
    }
    read->completion = librados::Rados::aio_create_completion(read.get(), &Reader::on_complete);
    if (m_also.lock_xattr) {
      read->op.getxattr("lock.rbd_lock", &read->lock_out, &read->lock_result);
      read->op.set_op_flags2(LIBRADOS_OP_FLAG_FAILOK);
    }
    if (m_also.map) {
      read->map_op.read(0, 0, &read->map, &read->map_result);
      read->map_completion =
          librados::Rados::aio_create_completion(read.get(), &Reader::on_complete);
      read->pending = 2;
    }
    Read* raw = read.get();
    {
      std::lock_guard<std::mutex> guard(m_mutex);
      m_pending.emplace(raw, std::move(read));
    }
    int r = io.aio_operate("rbd_header." + image_id, raw->completion, &raw->op, nullptr);
    if (r < 0) {
      fail("aio_operate rbd_header." + image_id, r);
    }
    if (m_also.map) {
      r = io.aio_operate("rbd_object_map." + image_id, raw->map_completion, &raw->map_op, nullptr);
      if (r < 0) {
        fail("aio_operate rbd_object_map." + image_id, r);
      }
    }
  }

  /// Waits for every read; returns the number of omap keys read.
  std::size_t finish() {
    std::unique_lock<std::mutex> lock(m_mutex);
    m_changed.wait(lock, [&] { return m_running == 0; });
    for (auto& read : m_done) {
      read->completion->release();
      if (read->map_completion != nullptr) {
        read->map_completion->release();
      }
    }
    m_done.clear();
    return m_keys;
  }

 private:
  static void on_complete(librados::completion_t /*completion*/, void* arg) {
    auto* raw = static_cast<Read*>(arg);
    Reader* self = raw->owner;
    std::unique_ptr<Read> read;
    {
      std::lock_guard<std::mutex> guard(self->m_mutex);
      if (--raw->pending > 0) {
        return;  // the other read of this image completes it
      }
      auto found = self->m_pending.find(raw);
      read = std::move(found->second);
      self->m_pending.erase(found);
    }
    const int r = read->completion->get_return_value();
    if (r < 0 || read->result < 0) {
      fail("reading a header", r < 0 ? r : read->result);
    }
    std::lock_guard<std::mutex> guard(self->m_mutex);
    self->m_keys += read->values.size();
    // What a read brought is dropped now; only its completion waits for finish().
    read->values.clear();
    read->watchers.clear();
    read->lock_in.clear();
    read->lock_out.clear();
    read->map.clear();
    // Released by finish(), not inside its own callback.
    self->m_done.push_back(std::move(read));
    --self->m_running;
    self->m_changed.notify_all();
  }

  const int m_limit;
  const Also m_also;
  std::mutex m_mutex;
  std::condition_variable m_changed;
  int m_running = 0;
  std::size_t m_keys = 0;
  std::map<Read*, std::unique_ptr<Read>> m_pending;
  std::vector<std::unique_ptr<Read>> m_done;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s CONF CLIENT_ID POOL [POOL ...]\n", argv[0]);
    return 64;
  }
  const char* in_flight_env = std::getenv("RBDSYNC_HEADER_FLOOR_IN_FLIGHT");
  const int in_flight = in_flight_env ? std::max(1, std::atoi(in_flight_env)) : 64;
  const char* also_env = std::getenv("RBDSYNC_HEADER_FLOOR_ALSO");
  const std::string also_text = also_env != nullptr ? also_env : "";
  Also also;
  std::size_t from = 0;
  while (from <= also_text.size()) {
    const std::size_t comma = std::min(also_text.find(',', from), also_text.size());
    const std::string word = also_text.substr(from, comma - from);
    also.watchers = also.watchers || word == "watchers";
    also.lock = also.lock || word == "lock";
    also.lock_xattr = also.lock_xattr || word == "lockxattr";
    also.map = also.map || word == "map";
    from = comma + 1;
  }

  const auto start = std::chrono::steady_clock::now();
  librados::Rados rados;
  int r = rados.init(argv[2]);
  if (r == 0) {
    r = rados.conf_read_file(argv[1]);
  }
  if (r == 0) {
    r = rados.connect();
  }
  if (r < 0) {
    fail("connecting", r);
  }

  std::size_t images = 0;
  std::size_t keys = 0;
  for (int arg = 3; arg < argc; ++arg) {
    librados::IoCtx io;
    if ((r = rados.ioctx_create(argv[arg], io)) < 0) {
      fail(std::string("opening pool ") + argv[arg], r);
    }
    librbd::RBD rbd;
    std::vector<librbd::image_spec_t> specs;
    if ((r = rbd.list2(io, &specs)) < 0) {
      fail(std::string("listing pool ") + argv[arg], r);
    }
    Reader reader(in_flight, also);
    for (const auto& spec : specs) {
      reader.start(io, spec.id);
    }
    keys += reader.finish();
    images += specs.size();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("header_floor: images=%zu keys=%zu in_flight=%d also=%s seconds=%.3f\n", images, keys,
              in_flight, also_text.empty() ? "-" : also_text.c_str(), seconds);
  return 0;
}
