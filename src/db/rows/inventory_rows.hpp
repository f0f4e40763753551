#pragma once

/// Inside db/ only: the inventory's tables, and each inventory record as a row of one
/// of them in PostgreSQL's text format. Each table's columns are declared once
/// (inventory_rows.cpp, db/rows/columns.hpp); they and sql/ must agree, which
/// SchemaTest.DeclaredColumnsMatchTheMigratedSchema checks.

#include <string>
#include <vector>

#include "db/rows/table_sync.hpp"
#include "inventory/inventory.hpp"
#include "sync/sink.hpp"

namespace rbdsync::db {

const Table& pools_table();
const Table& namespaces_table();
const Table& images_table();
const Table& snapshots_table();
const Table& trash_table();

Row pool_row(const std::string& fsid, const inventory::Pool& pool);
Row namespace_row(const std::string& fsid, const inventory::Namespace& ns);
Row image_row(const std::string& fsid, const inventory::Image& image);
/// One row per snapshot of `image`.
std::vector<Row> snapshot_rows(const std::string& fsid, const inventory::Image& image);
Row trash_row(const std::string& fsid, const inventory::TrashEntry& entry);
/// The columns of the temporary table `stale_images`, and a row of it.
const std::vector<ColumnType>& stale_image_types();
Row stale_row(const sync::StaleImage& image);

}  // namespace rbdsync::db
