import sys

from kb_tools.cli import main

sys.exit(main())
