"""One file per revision, each naming the one before it (``down_revision``)."""
