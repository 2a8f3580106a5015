"""Tests of the demo worker (app/worker): demos against their theory, the HTTP API, isolation."""
