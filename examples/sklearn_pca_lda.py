"""scikit-learn's PCA and LDA on device arrays, through the Array API (``array_api_dispatch``).

    python examples/sklearn_pca_lda.py [--samples N]

The estimators call the namespace of their input (``clarray_gemm.array_api``): the products
(``X.T @ X``, projections) run on the OpenCL GEMM kernels, the decompositions through the host.
The result is checked against the same fit on NumPy arrays. scikit-learn's Array API support
needs ``SCIPY_ARRAY_API=1`` before scipy is imported (set here).
"""
import argparse
import os

os.environ.setdefault("SCIPY_ARRAY_API", "1")

import numpy as np  # noqa: E402
import sklearn  # noqa: E402
from sklearn.datasets import make_classification  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis  # noqa: E402

import clarray_gemm as cg  # noqa: E402


def main(samples: int = 2000) -> None:
    X, y = make_classification(n_samples=samples, n_features=24, n_informative=8, n_classes=3,
                               random_state=0)
    X = X.astype(np.float32)
    X_dev, y_dev = cg.asarray(X), cg.asarray(y)

    pca_host = PCA(n_components=4, svd_solver="full").fit(X)
    with sklearn.config_context(array_api_dispatch=True):
        pca = PCA(n_components=4, svd_solver="full").fit(X_dev)
        projected = pca.transform(X_dev)
        lda = LinearDiscriminantAnalysis().fit(X_dev, y_dev)
        predicted = lda.predict(X_dev)
    lda_host = LinearDiscriminantAnalysis().fit(X, y)

    assert isinstance(projected, cg.DeviceArray)
    np.testing.assert_allclose(np.abs(np.asarray(projected)), np.abs(pca_host.transform(X)),
                               rtol=1e-3, atol=1e-3)
    agreement = float(np.mean(np.asarray(predicted) == lda_host.predict(X)))
    assert agreement > 0.99, agreement
    print(f"PCA: explained variance ratio {np.round(np.asarray(pca.explained_variance_ratio_), 3)}")
    print(f"LDA: training accuracy {float(np.mean(np.asarray(predicted) == y)):.3f}, "
          f"agreement with the NumPy fit {agreement:.3f}, result type {type(projected).__name__}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2000)
    main(parser.parse_args().samples)
