"""Transactions across rows and tables (TransactWriteItems, TransactGetItems), coordinated
only in the Bigtable rows they touch: a lock and intent per row, a primary row whose lock
decides the fate, the next reader or writer resolving what a crashed worker left
(Percolator, haeinsa; docs/transactions.md).

`steps` holds the vocabulary (locks, row views, the single-row atomic operations), and
`resolve`, `writer` and `snapshot` the protocol as pure state machines over it, their
states enums, so that the same code is driven by Bigtable in serve and by an in-memory
store in the model checker (tests/serve/transactions/test_model_check.py); `behind` runs a
committed transaction's last steps after its answer.
"""
