"""Accounts: users, Argon2 passwords, sessions, invites, sign-in limits (accounts mode).

May import: :mod:`app.storage` and itself. Never the web, the CLI or torch
(tests/test_architecture.py).
"""
