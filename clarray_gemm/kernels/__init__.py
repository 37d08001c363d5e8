"""The kernel catalogues (one per operation family), selection, the program cache and tuning."""

from . import gemm_variants  # noqa: F401,E402  (registers tiled, regtile, vec, image, const_b, gemv, cpu)
from . import tuning  # noqa: F401,E402  (installs the tuned-parameters hook into dispatch)
from . import gemm_gpu  # noqa: F401,E402  (registers gpu_blocked in the GEMM catalogue)
