"""`python -m simd` is the `simd` command."""

import sys

from simd.cli import main

sys.exit(main())
