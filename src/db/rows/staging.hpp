#pragma once

/// Inside db/ only: the rows a sync adds, on their way into the transaction's temporary
/// staging tables while Ceph is still being read. Each kind collects its rows as COPY
/// text in a batch of about `batch_bytes`; a full batch goes to a writer thread, which
/// owns the connection while the sync reads and sends each batch as one COPY. So the
/// sink holds what is in flight, never the inventory, and the reads do not wait for
/// the server.

#include <array>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/pqxx>

#include "db/rows/table_sync.hpp"

namespace rbdsync::db {

/// The kinds of rows a sync stages, each into a staging table of its own.
enum class StagedKind : std::size_t { pools, namespaces, images, snapshots, trash };
inline constexpr std::size_t k_staged_kinds = 5;

/// COPY text a kind collects before it goes to the server as one COPY. Large enough
/// that a batch's round trip and statement overhead is small against its rows (some
/// hundreds of images), small enough that five kinds filling cost under 3 MiB.
inline constexpr std::size_t k_batch_bytes = std::size_t{512} << 10U;

/// Memory of the filled batches waiting for the writer, the one it writes included,
/// before the reader waits for it. With the five batches filling, libpq's copy of the
/// one being sent and its output buffer, the sink holds at most about 8 MiB.
inline constexpr std::size_t k_queued_bytes = std::size_t{4} << 20U;

/// Rows of one kind as COPY text lines, separated (not terminated) by newlines: the form
/// tablewriter::write_raw_line() sends in one piece, adding the last newline itself.
class CopyBatch {
 public:
  void add(const Row& row);
  const std::string& lines() const { return m_lines; }
  std::size_t rows() const { return m_rows; }
  std::size_t bytes() const { return m_lines.size(); }
  /// The memory it holds, which may be more than bytes().
  std::size_t capacity() const { return m_lines.capacity(); }
  /// Empties the batch but keeps its memory for the next rows: a sync reuses the same
  /// few buffers throughout instead of growing the heap.
  void clear();
  void reserve(std::size_t bytes) { m_lines.reserve(bytes); }

 private:
  std::string m_lines;
  std::size_t m_rows = 0;
};

/// A staging table: its name and columns, as create_staging_table() made it.
struct StagingTable {
  std::string name;
  std::vector<ColumnType> columns;
};

/// The rows of one sync, per kind, into their staging tables inside `work`. Rows reach
/// the server's temporary tables only, which no other session sees, and go with the
/// transaction if it does not commit.
///
/// Threads. From construction to finish() (or destruction) a writer thread owns `work`
/// and its connection: the caller must not use them meanwhile, and may again once
/// finish() returned (it joins the writer, which orders the writer's use before the
/// caller's). What the two threads share, the queue of filled batches, its size, the
/// spare batches, the closing flags and the writer's error, is guarded by one mutex;
/// the batches being filled and the counts belong to the caller, the batch being
/// written to the writer. Cancelling the running statement from a third thread
/// (PgStore::cancel_running_statement) stays safe: PQcancel is meant for exactly that.
class RowStager {
 public:
  /// Whether the stager is being given up: a long first job may stop early.
  using Abandoned = std::function<bool()>;
  /// Work the writer does in the transaction before any batch, while the caller goes on.
  using FirstJob = std::function<void(pqxx::work& work, const Abandoned& abandoned)>;

  /// Starts the writer, which runs `first` (if any) and then writes batches. `queued_bytes`
  /// bounds the memory of filled batches not yet written. An exception from `first` is
  /// the writer's failure, as a failed batch is.
  RowStager(PgConnection& connection, pqxx::work& work,
            std::array<StagingTable, k_staged_kinds> tables, std::size_t batch_bytes,
            FirstJob first = {}, std::size_t queued_bytes = k_queued_bytes);
  /// Stops the writer without writing what it has not (the transaction is being given
  /// up) and joins it. Never throws.
  ~RowStager();
  RowStager(const RowStager&) = delete;
  RowStager& operator=(const RowStager&) = delete;

  /// Adds `row` to `kind`'s batch; a full batch goes to the writer, and waits while the
  /// writer is `queued_bytes` behind. Throws the writer's Error once it failed (the run
  /// fails; nothing is visible).
  void add(StagedKind kind, const Row& row);

  /// Hands over every batch not yet sent, waits until the writer has written them all,
  /// and ends it: `work` is the caller's again. Throws the writer's Error if it failed.
  void finish();

  /// Waits until the writer has done its first job. Throws the writer's Error if it
  /// failed (in the first job or since).
  void wait_for_first_job();

  /// Rows added of `kind` so far: the staged count of TableSync.
  std::size_t staged(StagedKind kind) const;

 private:
  struct Handed {
    StagedKind kind = StagedKind::pools;
    CopyBatch batch;
  };

  void hand_over(StagedKind kind);
  /// Throws the writer's Error, if it failed, to the reading thread, which holds the lock
  /// or has joined the writer.
  void raise_writer_error();
  /// The writer thread's body.
  void write_batches() noexcept;
  /// The writer's next batch; false when there is none to write any more.
  bool next_batch(Handed& next);
  void written(Handed& done);

  PgConnection& m_connection;
  pqxx::work& m_work;
  const std::array<StagingTable, k_staged_kinds> m_tables;
  const FirstJob m_first;
  const std::size_t m_batch_bytes;
  const std::size_t m_queued_limit;

  // The caller's.
  std::array<CopyBatch, k_staged_kinds> m_filling;
  std::array<std::size_t, k_staged_kinds> m_staged{};

  // Shared, under m_mutex.
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::deque<Handed> m_queue;
  std::size_t m_queued = 0;        ///< capacity of the queued batches and of the one being written
  std::vector<CopyBatch> m_spare;  ///< written batches, kept for their memory
  bool m_first_done = false;       ///< the first job, if any, is done
  bool m_closed = false;           ///< no more batches come
  bool m_abandoned = false;        ///< write nothing more
  std::exception_ptr m_error;      ///< why the writer stopped
  bool m_error_raised = false;     ///< m_error was thrown to the reader's thread

  std::thread m_writer;  ///< last: started once everything it uses exists
};

}  // namespace rbdsync::db
