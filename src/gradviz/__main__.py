import sys

from gradviz.cli.main import main

sys.exit(main())
