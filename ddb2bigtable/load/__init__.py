"""Bulk load of an export into Bigtable, its resume state, verify, and the local stage.

- `run.run_load`: the fast local loader (encoder processes beside the async writer);
  `reports.LoadReport`: what a load, local or Beam, reports.
- `beam.direct.run_beam_load` / `beam.dataflow.launch_dataflow`: the same transform on Apache Beam.
- `verify.verify_table`: every export item read back, decoded and compared.
- `local_stage.up`: the `local` stage on the emulator (tables, load, verify).
- `jobs.load_jobs`: which loads a cloud stage launches after `pulumi up`.
- `state`: resume state (table creation and the emulator are in `ddb2bigtable.bigtable`).
"""
