import sys

from ttrsim.cli import main

sys.exit(main())
