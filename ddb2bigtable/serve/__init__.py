"""The DynamoDB-compatible endpoint over Bigtable (`ddb2bigtable serve`).

An application keeps its AWS SDK and changes only `endpoint_url`: DynamoDB's JSON protocol
is answered over the stage's Bigtable tables, reading and writing the very rows `load` and
`replicate` write, through the same codec. docs/serve.md has the semantics; docs/layout.md
names every module of every room.

The rooms, in the order a request walks them:
- `protocol/`: the ASGI app, the server, SigV4 (the only room that knows HTTP).
- `expressions/`: DynamoDB expressions through moto's parser, evaluated and checked as
  DynamoDB does; legacy parameters in expression form.
- `items/`: GetItem, PutItem, UpdateItem, DeleteItem, counters, the batch operations.
- `queries/`: Query and Scan, on tables and indexes (the views of cloud stages).
- `tables/`: DescribeTable and the other table operations, created tables, TTL, the record of types.

What every room shares stays here, the kernel no room may bypass:
- `errors.ServeError`: DynamoDB's error shape, raised anywhere, answered by the protocol.
- `wire.item_to_codec`: wire items (base64 binary, numbers as text) <-> the codec's items.
- `catalog.catalog`: DynamoDB table names -> spec table, codec, Bigtable table, app profiles.
- `store.Store`: Bigtable calls with deadlines; the CheckAndMutate guard of a read-check-write
  (`reverse_rows` reads a range backwards).
- `session.Session`: the catalog, one data client per process, the read of one item by key.
- `capacity.consumed`: ReturnConsumedCapacity's units, as DynamoDB counts them.
- `requests.GetItem`, `requests.PutItem`, ...: each operation's typed request, made by the
  protocol from the JSON body, taken by the operation.
"""
