"""``python -m clarray_gemm``: see :mod:`clarray_gemm.cli`."""
import sys

from .cli import main

sys.exit(main())
