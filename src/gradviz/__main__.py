import sys

from gradviz.cli.main import main
from gradviz.workers.process import stop_forkserver

status = main()
stop_forkserver()  # run/render's worker forkserver, if this command started one
sys.exit(status)
