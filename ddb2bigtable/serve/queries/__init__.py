"""Query and Scan: on a table's rows, and on its secondary indexes.

- `query_ops.query`, `query_ops.scan`: key conditions as row ranges (`key_ranges`), pages in
  DynamoDB's order (`paging`), reverse reads, parallel-scan segments.
- `index_ops.query_index`, `index_ops.scan_index`: IndexName, answered from the table on
  emulator stages and from the plan's materialized view on cloud stages.
- `views.query_page`: a view page, read with Bigtable's SQL (`view_sql.query_statement`,
  `view_reads.view_rows`, `prepared_views.prepared_queries`: one PrepareQuery per shape).
"""
