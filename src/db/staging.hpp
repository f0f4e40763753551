#pragma once

/// Inside db/ only: the rows a sync adds, on their way into the transaction's temporary
/// staging tables while Ceph is still being read. Each kind collects its rows as COPY
/// text in one buffer of at most about `batch_bytes`; a full buffer goes to the server
/// as one COPY and is reused. So the sink holds what is in flight, never the inventory.

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "db/table_sync.hpp"

namespace rbdsync::db {

/// The kinds of rows a sync stages, each into a staging table of its own.
enum class StagedKind : std::size_t { pools, namespaces, images, snapshots, trash };
inline constexpr std::size_t k_staged_kinds = 5;

/// COPY text a kind collects before it goes to the server as one COPY. Large enough
/// that a batch's round trip and statement overhead (~1 ms) is small against its rows
/// (~800 images), small enough that five kinds in flight cost a few MiB.
inline constexpr std::size_t k_batch_bytes = std::size_t{512} << 10U;

/// Rows of one kind as COPY text lines, separated (not terminated) by newlines: the form
/// tablewriter::write_raw_line() sends in one piece, adding the last newline itself.
class CopyBatch {
 public:
  void add(const Row& row);
  const std::string& lines() const { return m_lines; }
  std::size_t rows() const { return m_rows; }
  std::size_t bytes() const { return m_lines.size(); }
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

/// The rows of one sync, per kind, into their staging tables, inside `work`. add() COPYs
/// a kind's batch once it reaches the cap; finish() COPYs what is left. Rows reach the
/// server's temporary tables only, which no other session sees, and go with the
/// transaction if it does not commit.
class RowStager {
 public:
  RowStager(pqxx::work& work, std::array<StagingTable, k_staged_kinds> tables,
            std::size_t batch_bytes);

  /// Adds `row` to `kind`'s batch, COPYing the batch when it is full. Throws Error when
  /// PostgreSQL fails the COPY (the run fails; nothing is visible).
  void add(StagedKind kind, const Row& row);

  /// COPYs every batch not yet sent. Throws as add().
  void finish();

  /// Rows added of `kind` so far: the staged count of TableSync.
  std::size_t staged(StagedKind kind) const;

 private:
  void write(StagedKind kind);

  pqxx::work& m_work;
  std::array<StagingTable, k_staged_kinds> m_tables;
  std::size_t m_batch_bytes;
  std::array<CopyBatch, k_staged_kinds> m_batches;
  std::array<std::size_t, k_staged_kinds> m_staged{};
};

}  // namespace rbdsync::db
