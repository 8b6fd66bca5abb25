"""The frozen build's entry point: the same `mediaassist` command as the wheel's script.

The thumbnail worker is started as ``sys.executable -m mediaassist.ui.disk_thumbnails``; frozen,
``sys.executable`` is this program, so it serves that one module itself (else every thumbnail of
the frozen app would be a placeholder)."""

import sys

from mediaassist.entry import main

THUMBNAIL_WORKER = "mediaassist.ui.disk_thumbnails"

if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "-m" and sys.argv[2] == THUMBNAIL_WORKER:
        from mediaassist.ui.disk_thumbnails import serve

        serve()
        sys.exit(0)
    sys.exit(main())
