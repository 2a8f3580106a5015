"""Accounts: users, Argon2 passwords, invites and sign-in limits (``QUIZLAB_AUTH=accounts``).

May import: :mod:`app.storage` and itself. Never the web, the CLI or torch
(tests/test_architecture.py).
"""
