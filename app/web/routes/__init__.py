"""HTTP routes, one module per feature; each parses, calls a module that does the work, renders."""
