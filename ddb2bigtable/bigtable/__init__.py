"""Bigtable's table admin, call deadlines and the emulator, shared by `load` and `serve`.

Both create tables (the load for `up --stage local` and `load --create-tables`, serve for
an application's CreateTable on emulator stages) and both bound every Bigtable call, so
these live below both of them and import only the plan and spec models.

- `table_admin.ensure_tables`: a plan's tables, families and GC rules, created or updated.
- `preflight.check_target`: the table is there with the mapping's families, before a load.
- `deadlines.lookup_table`: a data-client table handle whose reads are bounded.
- `emulator.start`: the emulator process, started on 127.0.0.1 with a free port, stopped by PID.
- `table_types.record_types`: each table's attribute types recorded with it (first writer
  wins) by loads; `table_types.mark_unnamed`: serve's and replicate's mark that what the
  record does not name is `mixed`; all of them read it (`table_types.read_types`).
"""
