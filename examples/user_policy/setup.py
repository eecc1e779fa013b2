"""Build the example policy in place: ``python setup.py build_ext --inplace``."""
import ttrsim
from Cython.Build import cythonize
from setuptools import Extension, setup

setup(
    name="greedy_claim",
    ext_modules=cythonize(
        [Extension("greedy_claim", ["greedy_claim.pyx"], extra_compile_args=["-O3"])],
        include_path=[ttrsim.get_include()],     # where ttrsim's .pxd files are
        compiler_directives={"language_level": 3},
    ),
)
