import sys

from adapter_sdk.conformance.cli import main

sys.exit(main())
