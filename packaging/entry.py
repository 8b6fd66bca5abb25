"""The frozen build's entry point: the same `mediaassist` command as the wheel's script."""

import sys

from mediaassist.cli import main

if __name__ == "__main__":
    sys.exit(main())
