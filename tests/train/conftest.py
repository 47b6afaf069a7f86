"""Training tests run numpy's BLAS on one thread: small matmuls on a shared 2-core machine are
many times slower when OpenBLAS threads compete for the cores (see bench/RESULTS.md, training)."""

import pytest


@pytest.fixture(autouse=True, scope="package")
def _one_blas_thread():
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # scikit-learn (test extra) brings it; without it, keep the default
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield
