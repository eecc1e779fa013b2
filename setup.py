"""Build the compiled core of ttrsim.

The Cython sources live in ``ext/ttrsim/`` so that every module is compiled under its
package name (``ttrsim._engine`` ...) and ``cimport ttrsim._x`` resolves with ``ext`` on
the include path. The ``.pxd`` declaration files are copied into the installed package so
that users can compile their own policies against them (see ``ttrsim.get_include()``).
"""
import glob
import os
import platform

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_py import build_py

MODULES = ["_engine", "_policy", "_planning", "_policies", "_batch", "_env", "_fuzz", "_search",
           "_expert", "_counter"]

DIRECTIVES = {
    "language_level": 3,
    "boundscheck": False,
    "wraparound": False,
    "cdivision": True,
    "initializedcheck": False,
    "embedsignature": True,
}


def cpu_flags():
    """-mpopcnt when the build machine is an x86-64 whose CPU has the popcount instruction
    (bit counts are the core's most frequent operation); nothing that could change
    floating-point results (no -march=native: FMA contraction would alter policy
    decisions). TTRSIM_PORTABLE=1 builds for any x86-64."""
    if os.environ.get("TTRSIM_PORTABLE") or platform.machine().lower() not in ("x86_64", "amd64"):
        return []
    try:
        with open("/proc/cpuinfo") as f:
            info = f.read()
    except OSError:
        return []
    for line in info.splitlines():
        if line.startswith("flags") and "popcnt" in line.split(":", 1)[-1].split():
            return ["-mpopcnt"]
    return []


class build_py_with_pxd(build_py):
    """Ship the .pxd files inside the package for user-compiled policies."""

    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "ttrsim")
        self.mkpath(target)
        for pxd in glob.glob(os.path.join("ext", "ttrsim", "*.pxd")):
            self.copy_file(pxd, target)


extensions = [
    Extension(
        f"ttrsim.{name}",
        [os.path.join("ext", "ttrsim", f"{name}.pyx")],
        extra_compile_args=["-O3"] + cpu_flags(),
    )
    for name in MODULES
]

setup(
    ext_modules=cythonize(extensions, include_path=["ext"], compiler_directives=DIRECTIVES),
    cmdclass={"build_py": build_py_with_pxd},
)
