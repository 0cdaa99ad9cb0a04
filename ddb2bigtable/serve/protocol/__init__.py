"""HTTP in, one operation, HTTP out: the only room of `serve` that knows the wire protocol.

- `server.run`: uvicorn with N worker processes on 127.0.0.1 (by default) and a port.
- `app.ServeApp`: the ASGI application (DynamoDB's JSON 1.0 protocol, dispatch, errors);
  `app.OPERATIONS` maps each `X-Amz-Target` to how its body is read and its operation.
- `item_requests.get_item`, `put_item`, `delete_item`, `update_item`: bodies -> typed requests.
- `query_requests.query`, `query_requests.scan`: Query and Scan bodies -> typed requests.
- `batch_requests.batch_get_item`, `batch_write_item`: batch bodies -> typed requests.
- `transact_requests.transact_get_items`, `transact_write_items`: transaction bodies -> typed requests.
- `admin_requests`: DescribeTable, ListTables, CreateTable, DeleteTable, UpdateTable,
  Describe/UpdateTimeToLive bodies -> typed requests.
- `shapes.check`: a body's top-level members against botocore's model of DynamoDB.
- `signatures.check`: SigV4 verification against the key pairs of `DDB2BIGTABLE_SERVE_KEYS`.
"""
