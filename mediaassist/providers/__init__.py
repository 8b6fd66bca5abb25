"""Providers: one per kind of callee. Qt-free, like the core."""
