"""Places the top-level ``resources/`` inside the built package (``mediaassist/resources``).

Everything else about the build is in pyproject.toml; this only adds that one copy, so a wheel,
pipx or a frozen build carries the resources that a checkout keeps beside the package.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyWithResources(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode:  # an editable install reads the checkout's own resources/
            return
        target = Path(self.build_lib) / "mediaassist" / "resources"
        shutil.copytree(Path(__file__).parent / "resources", target, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


setup(cmdclass={"build_py": BuildPyWithResources})
