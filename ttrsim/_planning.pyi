"""Type stub of the planning helpers (ext/ttrsim/_planning.pyx): C-level only, for compiled
policies that ``cimport ttrsim._planning``; nothing is exposed to Python."""
