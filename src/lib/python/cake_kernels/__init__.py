"""cake_kernels — Cake's generated GPU kernels for NVIDIA Hopper (sm_90a), from Python.

    import cake_kernels
    c = cake_kernels.gemm(a, b)                                   # a @ b.T, bf16
    labels, centroids, n = cake_kernels.kmeans.fit(x, 1000)       # batch_kmeans_Euclid
    km = cake_kernels.kmeans.KMeans(1000).fit(x)
    o, ht = cake_kernels.kda.chunk_kda(q, k, v, g, beta, A_log, dt_bias, lower_bound=-5.0)   # FLA's API

The package is pure Python over ctypes: each family's libcake_FAMILY.so (written next to these
modules by `cake library FAMILY -o DIR`) is loaded on first use. Importing needs neither a
GPU nor torch; a call without a GPU raises CakeDeviceError, a shape outside a library's
domain CakeShapeError. Calls run on torch's current stream when given torch tensors.
"""
from ._native import (CakeArgumentError, CakeCudaError, CakeDeviceError, CakeError, CakeLibraryNotBuilt,
                      CakeShapeError, library_path)
from . import gemm
from . import kmeans
from . import kda

__version__ = "0.1.0"
__all__ = ["gemm", "kmeans", "kda", "CakeError", "CakeShapeError", "CakeArgumentError", "CakeDeviceError", "CakeCudaError",
           "CakeLibraryNotBuilt", "library_path", "available"]


def available():
    """The families whose library is in this package ("gemm", "kmeans", "kda")."""
    import os
    return [f for f in ("gemm", "kmeans", "kda") if os.path.exists(library_path(f))]
