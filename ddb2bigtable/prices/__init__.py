"""`prices refresh`: the providers' price APIs -> the price lock, prices.lock.json (I/O at the edge; the
lock's model and reader live in the plan package's price_lock module, which the pure planner reads).

- `refresh.refresh` / `refresh.write_lock`: both APIs read, then the lock written atomically (spec.output_file).
- `catalog.fetch`: Bigtable SKUs from the Cloud Billing Catalog API (google-cloud-billing, REST).
- `price_list.fetch`: DynamoDB products from the AWS Price List Query API (boto3 `pricing`).
"""
