"""A scikit-learn pipeline fitted on tlaloc arrays.

scikit-learn dispatches on `__array_namespace__` when array API dispatch is on, so the
scaler, the PCA and the discriminant analysis below compute with tlaloc (recorded, fused,
run by XLA or tlaloc's interpreter) and their fitted attributes are tlaloc arrays.
SciPy must see SCIPY_ARRAY_API=1 before it is first imported (scikit-learn imports it).

Run: python examples/sklearn_on_tlaloc.py
"""
import os

os.environ["SCIPY_ARRAY_API"] = "1"     # before SciPy or scikit-learn is imported

import numpy as np  # noqa: E402
import sklearn  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis  # noqa: E402
from sklearn.metrics import accuracy_score, confusion_matrix  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

import tlaloc as xp  # noqa: E402


def make_data(n=600, n_features=8, n_classes=3, seed=0):
    """Gaussian blobs around random centres, as NumPy arrays."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=2.0, size=(n_classes, n_features))
    labels = rng.integers(0, n_classes, size=n)
    features = centres[labels] + rng.normal(size=(n, n_features))
    return features, labels


def main():
    sklearn.set_config(array_api_dispatch=True)
    features, labels = make_data()
    X, y = xp.asarray(features), xp.asarray(labels)        # tlaloc arrays from here on
    X_train, X_test, y_train, y_test = X[:400], X[400:], y[:400], y[400:]

    model = make_pipeline(StandardScaler(), PCA(n_components=3), LinearDiscriminantAnalysis())
    model.fit(X_train, y_train)

    scaler, pca, lda = model.named_steps.values()
    print("fitted:", " -> ".join(type(step).__name__ for step in model.named_steps.values()))
    print("  StandardScaler.mean_:", type(scaler.mean_).__name__, scaler.mean_.shape,
          scaler.mean_.dtype)
    print("  PCA explained variance ratio:", pca.explained_variance_ratio_)
    print("  LDA classes:", lda.classes_, " coef_ shape:", lda.coef_.shape)

    predicted = model.predict(X_test)                     # a tlaloc array
    score = model.score(X_test, y_test)                   # a Python float
    print("predictions:", type(predicted).__name__, predicted.shape, predicted.dtype)
    print("confusion matrix (test):")
    print(confusion_matrix(y_test, predicted))
    print(f"test accuracy: {score:.3f} (accuracy_score: {accuracy_score(y_test, predicted):.3f})")
    print("programs run by tlaloc:", xp.cache_info())


if __name__ == "__main__":
    main()
