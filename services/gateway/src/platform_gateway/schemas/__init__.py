"""Request and response bodies of the REST API, one module per resource."""
