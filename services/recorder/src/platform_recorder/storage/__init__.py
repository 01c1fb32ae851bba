"""The recordings storage: what one can do (`interface.Storage`), a folder (`folder`), an S3
bucket (`s3`), the one a setting names (`opening`), and durable local files (`durable_files`)."""
