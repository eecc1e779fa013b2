"""The package version, in a module of its own so that manifests and reports can read it
without importing the package face (``ttrsim/__init__.py``) that imports everything."""
__version__ = "0.2.0"
