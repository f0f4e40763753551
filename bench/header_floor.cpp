// The floor of an inventory read: list the images of each pool, then read each image's
// header object (`rbd_header.<id>`, its omap: size, features, snapshots, parent ...) with
// one omap_get_vals2 per image in one aio_operate, IN_FLIGHT at a time. Nothing is decoded
// and nothing is stored: no inventory can be read with fewer OSD round trips.
//
//   header_floor CONF CLIENT_ID POOL [POOL ...]        (env HEADER_FLOOR_IN_FLIGHT, 64)
//
// Prints one line: images, header omap keys read, seconds inside the program.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
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

struct Read {
  Reader* owner = nullptr;
  librados::ObjectReadOperation op;
  std::map<std::string, librados::bufferlist> values;
  bool more = false;
  int result = 0;
  librados::AioCompletion* completion = nullptr;
};

class Reader {
 public:
  explicit Reader(int in_flight) : m_limit(in_flight) {}

  void start(librados::IoCtx& io, const std::string& image_id) {
    std::unique_lock<std::mutex> lock(m_mutex);
    m_changed.wait(lock, [&] { return m_running < m_limit; });
    ++m_running;
    lock.unlock();
    auto read = std::make_unique<Read>();
    read->owner = this;
    read->op.omap_get_vals2("", 1024, &read->values, &read->more, &read->result);
    read->completion = librados::Rados::aio_create_completion(read.get(), &Reader::on_complete);
    Read* raw = read.get();
    {
      std::lock_guard<std::mutex> guard(m_mutex);
      m_pending.emplace(raw, std::move(read));
    }
    const int r = io.aio_operate("rbd_header." + image_id, raw->completion, &raw->op, nullptr);
    if (r < 0) {
      fail("aio_operate rbd_header." + image_id, r);
    }
  }

  /// Waits for every read; returns the number of omap keys read.
  std::size_t finish() {
    std::unique_lock<std::mutex> lock(m_mutex);
    m_changed.wait(lock, [&] { return m_running == 0; });
    for (auto& read : m_done) {
      read->completion->release();
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
    read->values.clear();
    // Released by finish(), not inside its own callback.
    self->m_done.push_back(std::move(read));
    --self->m_running;
    self->m_changed.notify_all();
  }

  const int m_limit;
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
  const char* in_flight_env = std::getenv("HEADER_FLOOR_IN_FLIGHT");
  const int in_flight = in_flight_env ? std::max(1, std::atoi(in_flight_env)) : 64;

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
    Reader reader(in_flight);
    for (const auto& spec : specs) {
      reader.start(io, spec.id);
    }
    keys += reader.finish();
    images += specs.size();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("header_floor: images=%zu keys=%zu in_flight=%d seconds=%.3f\n", images, keys,
              in_flight, seconds);
  return 0;
}
