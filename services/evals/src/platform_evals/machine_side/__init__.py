"""What runs on the machine (sent there as text, never imported by the service): `bootstrap`
(standard library only: the virtual environment, then `inspect_run` in it) and `inspect_run`
(the eval through Inspect's Python API, its progress as lines the service parses)."""
