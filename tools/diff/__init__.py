"""`provenance diff`: the production models run on what a pull request actually builds. The base and head relation
of each changed dataset are read from the warehouse (the same rows, joined on a unique key, sampled by a hash of
the key in SQL), each production model downstream scores both sides, and the paired metrics, rows gone and new,
and a data diff of every column the model reads go to the same policy as `assess`."""
