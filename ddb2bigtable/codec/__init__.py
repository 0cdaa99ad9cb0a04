"""One DynamoDB item <-> the cells of one Bigtable row, and back.

- `codec.Codec`: encode an item to a `mutations.RowMutation`, decode a row back to items.
- `type_inference.infer_types` / `declared_types`: the attribute types the codec encodes by.
- `type_inference.held_types`: the one rule between the spec's declared types and the types a
  table's cells hold (its record): load, replicate, verify and serve all apply it.
- `row_keys`, `cell_values`, `timestamps`: row keys, cell bytes and cell times, each on its own.
- `items.Item`: the typed item form the export reader, the codec and verify share.
- `app_writes.item_write`: an application's write after the load, in the load's conventions
  (TTL tables: cells stamped with the expiry, old cells deleted first); `app_writes.counter_add`:
  DynamoDB's `ADD` on a counter as one AddToCell.
"""
