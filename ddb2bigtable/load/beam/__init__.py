"""The data load on Apache Beam: the local loader's transform, on DirectRunner or Dataflow.

- `pipeline.build_pipeline`: the transforms (read and encode, write, dead letters, counts).
- `direct.run_beam_load`: `load --runner beam`, in-process, with the local loader's report.
- `dataflow.launch_dataflow`: the post-deploy hook's launch of one load job on Dataflow.
"""
