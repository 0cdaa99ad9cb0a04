"""Operations on items named by key: one at a time, in batches, or as a transaction.

- `item_ops.get_item`, `item_ops.put_item`, `item_ops.update_item`, `item_ops.delete_item`:
  read-check-write, atomic per row through the store's CheckAndMutate guard.
- `counters.counter_adds`: UpdateItem `ADD` on counter attributes as AddToCell, with no read.
- `batch_ops.batch_get_item`, `batch_ops.batch_write_item`.
- `transact_ops.transact_get_items`, `transact_ops.transact_write_items`: across rows and
  tables, by the protocol of serve/transactions (docs/transactions.md).
- `locked_rows`: what the reads and writes above do on a row a transaction holds;
  `lock_tables`: every table a lock can name (spec, created, the token table).
- `lock_sweep`: each worker's settling of expired locks nobody touches.
"""
