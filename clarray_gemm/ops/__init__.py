"""Operations with NumPy's semantics, one module per family; importing them fills the dispatch
table that ``DeviceArray.__array_function__`` / ``__array_ufunc__`` consult."""
from . import elementwise, matmul, views  # noqa: F401
from . import convolve  # noqa: F401
from . import ufuncs, reductions, indexing, arrayfuncs, einsum  # noqa: F401
from . import joining, broadcast, padding, composed, sorting, counting, numeric  # noqa: F401
from . import along_axis, sets, scatter, nanfunctions, fft, linalg  # noqa: F401
