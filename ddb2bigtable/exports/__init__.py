"""DynamoDB exports to S3 as AWS writes them: manifests first, then data files.

- `manifests.open_export` / `reader.read_records`: the manifests, then each data file's records.
- `types.export_types`: the attribute types of an export, one data file at a time.
- `writer`: writes exports laid out like AWS's (test fixtures, the shipped `exports/`).
- `locations.store_for`: where an export's files are read from (a folder, `s3://`, `gs://`).
"""
