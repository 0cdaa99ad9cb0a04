"""Table operations and what serve keeps about tables.

- `admin_ops.describe_table`, `admin_ops.list_tables`, `admin_ops.create_table`,
  `admin_ops.update_table`, `admin_ops.delete_table`.
- `created_tables.create` / `created_tables.resolve`: tables an application creates on emulator
  stages, kept in the instance's registry table; `table_requests.checked_request`: CreateTable's
  checks; `table_updates.updated_definition`: UpdateTable's changes applied to a table's
  definition; `table_counts.counted`: ItemCount.
- `ttl_ops.describe_time_to_live`, `ttl_ops.update_time_to_live`.
- `types_record.recorded`: serve's part in each table's record of its attribute types.
"""
