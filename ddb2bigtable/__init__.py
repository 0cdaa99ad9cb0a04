"""ddb2bigtable: DynamoDB workloads onto Cloud Bigtable (README.md, docs/).

Importing the engine changes nothing in the process; the programs that run loads (the
CLI's package, the test session, the benchmarks) configure gRPC for the encoders' fork
themselves (load/encoder.py says why).
"""
