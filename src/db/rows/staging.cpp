#include "db/rows/staging.hpp"

#include <algorithm>
#include <exception>
#include <utility>

#include <spdlog/spdlog.h>

#include "db/pg_connection.hpp"

namespace rbdsync::db {

namespace {

/// Written batches kept for their memory: enough for the filling slots to swap into.
constexpr std::size_t k_spare_batches = k_staged_kinds;

std::size_t index_of(StagedKind kind) {
  return static_cast<std::size_t>(kind);
}

}  // namespace

void CopyBatch::add(const Row& row) {
  if (m_rows > 0) {
    m_lines += '\n';
  }
  append_copy_line(m_lines, row);
  ++m_rows;
}

void CopyBatch::clear() {
  m_lines.clear();
  m_rows = 0;
}

RowStager::RowStager(PgConnection& connection, pqxx::work& work,
                     std::array<StagingTable, k_staged_kinds> tables, std::size_t batch_bytes,
                     FirstJob first, std::size_t queued_bytes)
    : m_connection(connection),
      m_work(work),
      m_tables(std::move(tables)),
      m_first(std::move(first)),
      m_batch_bytes(batch_bytes),
      m_queued_limit(queued_bytes),
      m_writer([this] { write_batches(); }) {}

RowStager::~RowStager() {
  {
    const std::lock_guard<std::mutex> lock(m_mutex);
    m_closed = true;
    m_abandoned = true;
  }
  m_changed.notify_all();
  if (m_writer.joinable()) {
    m_writer.join();
  }
  // Abandoned because the sync failed for another reason (Ceph, an interruption): the
  // writer's own failure, if any, was never raised; the log keeps it.
  if (m_error && !m_error_raised) {
    try {
      std::rethrow_exception(m_error);
    } catch (const std::exception& e) {
      spdlog::warn("the staging writer had failed as well: {}", e.what());
    } catch (...) {
      spdlog::warn("the staging writer had failed as well");
    }
  }
}

void RowStager::add(StagedKind kind, const Row& row) {
  CopyBatch& batch = m_filling[index_of(kind)];
  if (batch.rows() == 0) {
    // A row rarely passes a few KiB: the cap plus that is enough not to reallocate (and
    // a test's huge cap reserves no more than a normal one).
    batch.reserve(std::min(m_batch_bytes, k_batch_bytes) + (std::size_t{16} << 10U));
  }
  batch.add(row);
  ++m_staged[index_of(kind)];
  if (batch.bytes() >= m_batch_bytes) {
    hand_over(kind);
  }
}

void RowStager::hand_over(StagedKind kind) {
  CopyBatch& batch = m_filling[index_of(kind)];
  {
    std::unique_lock<std::mutex> lock(m_mutex);
    // One batch may always wait, however large: the bound is never a deadlock.
    m_changed.wait(lock, [&] {
      return m_error || m_queued == 0 || m_queued + batch.capacity() <= m_queued_limit;
    });
    raise_writer_error();
    m_queued += batch.capacity();
    m_queue.push_back(Handed{kind, std::move(batch)});
    batch = CopyBatch();
    if (!m_spare.empty()) {
      batch = std::move(m_spare.back());
      m_spare.pop_back();
    }
  }
  m_changed.notify_all();
}

void RowStager::finish() {
  for (std::size_t k = 0; k < k_staged_kinds; ++k) {
    if (m_filling[k].rows() > 0) {
      hand_over(static_cast<StagedKind>(k));
    }
  }
  {
    const std::lock_guard<std::mutex> lock(m_mutex);
    m_closed = true;
  }
  m_changed.notify_all();
  m_writer.join();
  raise_writer_error();
}

void RowStager::wait_for_first_job() {
  std::unique_lock<std::mutex> lock(m_mutex);
  m_changed.wait(lock, [&] { return m_first_done || m_error; });
  raise_writer_error();
}

void RowStager::raise_writer_error() {
  if (m_error) {
    m_error_raised = true;
    std::rethrow_exception(m_error);
  }
}

std::size_t RowStager::staged(StagedKind kind) const {
  return m_staged[index_of(kind)];
}

bool RowStager::next_batch(Handed& next) {
  std::unique_lock<std::mutex> lock(m_mutex);
  m_changed.wait(lock, [&] { return m_abandoned || m_closed || !m_queue.empty(); });
  if (m_abandoned || m_queue.empty()) {
    return false;
  }
  next = std::move(m_queue.front());
  m_queue.pop_front();
  return true;
}

void RowStager::written(Handed& done) {
  {
    const std::lock_guard<std::mutex> lock(m_mutex);
    m_queued -= done.batch.capacity();
    done.batch.clear();
    if (m_spare.size() < k_spare_batches) {
      m_spare.push_back(std::move(done.batch));
    }
  }
  m_changed.notify_all();
}

void RowStager::write_batches() noexcept {
  try {
    if (m_first) {
      m_first(m_work, [this] {
        const std::lock_guard<std::mutex> lock(m_mutex);
        return m_abandoned;
      });
    }
    {
      const std::lock_guard<std::mutex> lock(m_mutex);
      m_first_done = true;
    }
    m_changed.notify_all();
    Handed next;
    while (next_batch(next)) {
      const StagingTable& table = m_tables[index_of(next.kind)];
      translated("writing the inventory", [&] {
        copy_into(m_connection, m_work, table.name, table.columns, next.batch.lines());
      });
      written(next);
    }
  } catch (...) {
    // Kept for the reading thread, which rethrows it at its next hand-over or in
    // finish(); what is still queued is never written.
    {
      const std::lock_guard<std::mutex> lock(m_mutex);
      m_error = std::current_exception();
    }
    m_changed.notify_all();
  }
}

}  // namespace rbdsync::db
