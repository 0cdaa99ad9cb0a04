"""The DynamoDB-compatible endpoint over Bigtable (`ddb2bigtable serve`).

An application keeps its AWS SDK and changes only `endpoint_url`: DynamoDB's JSON protocol
is answered over the stage's Bigtable tables, reading and writing the very rows `load` and
`replicate` write, through the same codec. docs/serve.md has the semantics.

- `server.run`: uvicorn with N worker processes on 127.0.0.1 (by default) and a port.
- `app.ServeApp`: the ASGI application (protocol, dispatch, errors); `app.OPERATIONS`.
- `tables.catalog`: DynamoDB table names -> spec table, codec, Bigtable table, app profiles.
- `item_ops`, `counters`, `query_ops`, `index_ops`, `batch_ops`, `admin_ops`: the operations.
- `created_tables.create` / `created_tables.resolve`: tables an application creates on emulator
  stages, kept in the instance's registry table; `table_requests.checked_request`: CreateTable's checks.
- `expressions.condition` / `expressions.update`: DynamoDB expressions through moto's parser;
  `conditions.holds` evaluates its tree with DynamoDB's types, `validation`, `validation_keys`
  and `validation_updates` refuse what DynamoDB refuses, `list_updates` orders list-element updates.
- `store.Store`: Bigtable calls with deadlines; the CheckAndMutate guard of a read-check-write.
- `wire.item_to_codec`: wire items (base64 binary, numbers as text) <-> the codec's items.
- `signatures.check`: SigV4 verification against the key pairs of `DDB2BIGTABLE_SERVE_KEYS`.
- `errors.ServeError`: DynamoDB's error shape.
"""
