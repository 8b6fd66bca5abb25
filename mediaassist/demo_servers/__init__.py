"""Built-in demo providers: real HTTP servers on 127.0.0.1 for ``--demo`` and the tests."""
