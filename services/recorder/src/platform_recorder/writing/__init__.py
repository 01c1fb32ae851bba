"""Writing recordings from the session stream: the consumer loop and its puller, the writer (one
`Recording` per recorded session: part files, exactly-once appends, crash recovery), episodes
built into `.npz` files, sub-session recordings, lives and their frame thinning."""
