#include "db/staging.hpp"

#include <utility>

#include "db/pg_connection.hpp"

namespace rbdsync::db {

namespace {

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

RowStager::RowStager(pqxx::work& work, std::array<StagingTable, k_staged_kinds> tables,
                     std::size_t batch_bytes)
    : m_work(work), m_tables(std::move(tables)), m_batch_bytes(batch_bytes) {}

void RowStager::add(StagedKind kind, const Row& row) {
  CopyBatch& batch = m_batches[index_of(kind)];
  if (batch.rows() == 0) {
    // A row rarely passes a few KiB: the cap plus that is enough not to reallocate.
    batch.reserve(m_batch_bytes + (std::size_t{16} << 10U));
  }
  batch.add(row);
  ++m_staged[index_of(kind)];
  if (batch.bytes() >= m_batch_bytes) {
    write(kind);
  }
}

void RowStager::finish() {
  for (std::size_t k = 0; k < k_staged_kinds; ++k) {
    write(static_cast<StagedKind>(k));
  }
}

std::size_t RowStager::staged(StagedKind kind) const {
  return m_staged[index_of(kind)];
}

void RowStager::write(StagedKind kind) {
  CopyBatch& batch = m_batches[index_of(kind)];
  if (batch.rows() == 0) {
    return;
  }
  const StagingTable& table = m_tables[index_of(kind)];
  translated("writing the inventory",
             [&] { copy_into(m_work, table.name, table.columns, batch.lines()); });
  batch.clear();
}

}  // namespace rbdsync::db
