# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Validation of privacy parameters and declared label sets; warnings located at the caller."""

import contextlib
import contextvars
import functools
import importlib
import inspect
import math
import os
import re
import sys
import threading
import warnings
from numbers import Number

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.exceptions import DataConversionWarning
from sklearn.utils import assert_all_finite as _sklearn_assert_all_finite
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, column_or_1d
from sklearn.utils.validation import validate_data as _sklearn_validate_data

from ..exceptions import PrivacyLeakWarning
from ._array_api import _is_array_api_array, to_numpy
from ._sklearn_compat import check_sample_weight, num_samples

__all__ = [
    "assert_all_finite",
    "check_classifier_metadata",
    "check_declared_groups",
    "check_delta_for_n",
    "check_fit_keywords",
    "check_public_targets",
    "check_public_weights",
    "check_sample_aligned",
    "check_sparse_sums_finite",
    "float64_target",
    "is_sparse_frame",
    "is_sparse_layout",
    "one_per_row",
    "refuse_weights_with_silos",
    "resolve_classes",
    "resolve_classification_targets",
    "suppressed_warnings",
    "validate_data",
    "warn_at_caller",
]

def validate_data(estimator, *args, **kwargs):
    """scikit-learn's ``validate_data``, without numpy's floating-point warnings.

    Its finiteness check sums ``X`` first (``np.isfinite(np.sum(X))``,
    silencing overflow only): a row holding ``1.7e308`` and ``-1.7e308``
    makes that sum ``inf - inf`` and numpy warns "invalid value encountered
    in reduce", so whether a fit warned depended on one record's values.
    The element-wise check that follows still refuses NaN and inf; casts
    that overflow are refused or rescued by the callers, never warned about.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_dpfair.utils._validation import validate_data
    >>> X = np.array([[1.7e308, 1.7e308, -1.7e308, -1.7e308], [1.0, 2.0, 3.0, 4.0]])
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error")
    ...     validate_data(LinearRegression(), X).shape
    (2, 4)
    """
    with np.errstate(over="ignore", invalid="ignore"):
        return _sklearn_validate_data(estimator, *args, **kwargs)


def assert_all_finite(X, **kwargs):
    """scikit-learn's ``assert_all_finite``, without numpy's floating-point warnings.

    The same first pass as :func:`validate_data`'s: ``np.sum(X)`` of rows
    holding ``1.7e308`` and ``-1.7e308`` is ``inf - inf``, whose warning
    would depend on one record's values. NaN and inf are still refused.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        _sklearn_assert_all_finite(X, **kwargs)


# Packages whose frames lie between the user's call and the code that warns:
# this package, scikit-learn's meta-estimators and the joblib loop they use.
_PASSTHROUGH_MODULES = ("sklearn_dpfair", "sklearn", "joblib")
# Frames of a loop of fits: scikit-learn's searches and cross-validation,
# its parallel helper (which re-installs the filters around each fit) and
# joblib, and this package's own meta-estimators. Not every scikit-learn
# frame: its fit decorator wraps every direct fit too. And the wrapper of
# every private fit (sklearn_dpfair._base): one fit shows a cause once even
# where a library it calls (Dask's client) resets Python's registry of
# shown warnings between two checks of the same parameter.
_LOOP_MODULES = (
    "sklearn.model_selection",
    "sklearn.utils.parallel",
    "joblib",
    "sklearn_dpfair._base",
    "sklearn_dpfair.model_selection",
    "sklearn_dpfair.pipeline",
)

# What one call of a loop of fits has shown (key -> the warning filters in
# force then) is kept in that call's outermost loop frame, as a local under
# a name no code can spell, so that it ends with the call: a later call (a
# second GridSearchCV.fit, a new PrivatePipeline.fit) shows its warnings
# again. Not kept here: frames take no weak references, a reference held here
# would keep a finished call's data (and its callers' frames) alive, and the
# next call's frame is often allocated at the same id().
_SHOWN = ".sklearn_dpfair_shown"
# Patterns of the warnings warn_at_caller drops within suppressed_warnings
# blocks: a context variable, so a block holds for its own thread (or task)
# only. warnings.catch_warnings swaps the process-wide filter list, and two
# threads' blocks overlapping left one's "ignore" filter installed for good.
_SUPPRESSED = contextvars.ContextVar("sklearn_dpfair_suppressed", default=())


@functools.cache
def _source_prefixes(names):
    """Path prefixes of modules: a package's directory, a module's file."""
    prefixes = []
    for name in names:
        path = os.path.abspath(importlib.import_module(name).__file__)
        is_package = os.path.basename(path) == "__init__.py"
        prefixes.append(os.path.dirname(path) + os.sep if is_package else path)
    return tuple(prefixes)


def _decorator_frames():
    """Files of the wrappers a decorated function of the package runs inside.

    A function decorated with ``@np.errstate(...)`` is called through
    numpy's wrapper (its ``errstate.__call__``; ``contextlib``'s for a
    ``ContextDecorator``): a frame outside the package between it and the
    user's line, which is not where the warning belongs.
    """
    files = [os.path.abspath(contextlib.__file__)]
    code = getattr(np.errstate.__call__, "__code__", None)
    if code is not None:
        files.append(os.path.abspath(code.co_filename))
    return tuple(files)


def _current_filters():
    # Python >= 3.14 may keep the filters in a context variable.
    get_filters = getattr(warnings, "_get_filters", None)
    filters = get_filters() if get_filters is not None else warnings.filters
    # The first matching filter wins, so later duplicates change nothing.
    return tuple(dict.fromkeys(filters))


def _matches(pattern, text):
    # Python's built-in filters hold plain strings, which match exactly.
    if pattern is None:
        return True
    if isinstance(pattern, str):
        return pattern == text
    return pattern.match(text) is not None


def _action(filters, text, category, module, lineno):
    for action, msg, cat, mod, ln in filters:
        if (
            _matches(msg, text)
            and issubclass(category, cat)
            and _matches(mod, module)
            and (ln == 0 or lineno == ln)
        ):
            return action
    return warnings.defaultaction


def _comparable(filters):
    # scikit-learn copies a plain-string filter as a compiled pattern: compare
    # the pattern texts.
    return tuple(
        (action, getattr(msg, "pattern", msg), cat, getattr(mod, "pattern", mod), ln)
        for action, msg, cat, mod, ln in filters
    )


@contextlib.contextmanager
def suppressed_warnings(pattern):
    """Drop the package's warnings whose text matches ``pattern``, in this block.

    Unlike ``warnings.catch_warnings`` with an ``"ignore"`` filter, which
    swaps the process-wide filter list (two threads' overlapping blocks can
    leave a filter installed for good), the block holds for the current
    thread or task only: :func:`warn_at_caller` consults a context variable.

    Parameters
    ----------
    pattern : str
        A regular expression matched at the start of the warning's text.

    Examples
    --------
    >>> import warnings
    >>> from sklearn_dpfair.utils._validation import (
    ...     suppressed_warnings, warn_at_caller)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     with suppressed_warnings("delta=.* is not smaller"):
    ...         warn_at_caller("delta=0.1 is not smaller than 1/n_samples")
    ...     warn_at_caller("another cause")
    >>> [str(w.message) for w in caught]
    ['another cause']
    """
    token = _SUPPRESSED.set((*_SUPPRESSED.get(), re.compile(pattern)))
    try:
        yield
    finally:
        _SUPPRESSED.reset(token)


def warn_at_caller(message, category=UserWarning):
    """Warn at the user's line that called into the package, once per cause.

    The warning is attributed to the first frame outside this package,
    scikit-learn and joblib: the line that called ``fit`` directly, or the
    line that called ``GridSearchCV.fit``, ``cross_validate`` or
    ``Pipeline.fit`` around it, also where the loop runs its fits in
    worker threads (joblib's threading backend: the line is on the thread
    that dispatched them). Python's ``"default"`` action then shows it
    once per location. scikit-learn (>= 1.7) re-installs the warning filters
    around every fit of a search, which makes Python forget what it has
    shown; so within one call of a loop of fits (a call that passed through
    scikit-learn's, joblib's or this package's meta-estimators: one
    ``GridSearchCV.fit``, one ``PrivatePipeline.fit``), under the
    ``"default"``, ``"module"`` and ``"once"`` actions, a warning already
    shown by that call at the same location, with the same filters in
    force, is not shown again. A later call is left to Python's rules, as a
    direct call is: a new ``warnings.catch_warnings`` block shows it again.
    Every other action (``"always"``, ``"error"``, ``"ignore"``) behaves as
    :func:`warnings.warn` does.

    Parameters
    ----------
    message : str
        The warning text.
    category : type of Warning, default=UserWarning
        The warning class.
    """
    text = str(message)
    if any(pattern.match(text) for pattern in _SUPPRESSED.get()):
        return
    prefixes = _source_prefixes(_PASSTHROUGH_MODULES) + _decorator_frames()
    loops = _source_prefixes(_LOOP_MODULES)
    # stacklevel=2 is this function's caller; count outwards from there.
    frame, stacklevel, loop = _callers_frame(sys._getframe(1), 2, prefixes, loops)
    dispatched = _dispatching_frames(frame, prefixes, loops)
    if dispatched is not None:
        # A task of a parallel loop in a worker thread (joblib's threading
        # backend): its own stack ends in the thread pool, and the user's
        # line is on the thread that dispatched the loop.
        frame, loop = dispatched
    filename, lineno = frame.f_code.co_filename, frame.f_lineno
    module = frame.f_globals.get("__name__", "<string>")
    filters = _current_filters()
    action = _action(filters, text, category, module, lineno)
    # Only a function's frame has locals of its own: a module's are its
    # globals, which outlive the call.
    if (
        loop is not None
        and loop.f_code.co_flags & inspect.CO_OPTIMIZED
        and action in ("default", "module", "once")
    ):
        if action == "default":
            key = (text, category, filename, lineno)
        elif action == "module":
            key = (text, category, filename)
        else:
            key = (text, category)
        # The call's memory, in any thread (a pool task of a loop of fits
        # has the dispatching thread's loop frame): a dict before Python
        # 3.13, a write-through proxy since (PEP 667); either way a name that
        # is not one of the function's variables is kept with the frame until
        # it ends.
        scope = loop.f_locals
        shown = scope.get(_SHOWN)
        if shown is None:
            shown = scope[_SHOWN] = {}
        seen_under = _comparable(filters)
        if shown.get(key) == seen_under:
            return
        shown[key] = seen_under
    if dispatched is None:
        warnings.warn(message, category, stacklevel=stacklevel)
        return
    # What warnings.warn does for a frame of its own thread's stack.
    globals_ = frame.f_globals
    warnings.warn_explicit(
        message,
        category,
        filename,
        lineno,
        module=module,
        registry=globals_.setdefault("__warningregistry__", {}),
        module_globals=globals_,
    )


def _callers_frame(frame, stacklevel, prefixes, loops):
    """``(frame, stacklevel, loop)``: the first frame outside ``prefixes``.

    Walks outwards from ``frame`` (at ``stacklevel``); ``loop`` is the
    outermost frame passed within ``loops`` (None if none).
    """
    loop = None
    while frame.f_back is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(prefixes):
            break
        if path.startswith(loops):
            loop = frame
        frame = frame.f_back
        stacklevel += 1
    return frame, stacklevel, loop


def _dispatching_frames(frame, prefixes, loops):
    """The dispatching thread's ``(user frame, loop frame)`` for a pool task.

    None unless ``frame``, where a worker thread's walk stopped, and every
    frame beyond it belong to the standard library's thread pools (the
    task ran in a pool thread, called by nothing of the user's), and the
    main thread is inside a loop of fits (waiting for the tasks). Then the
    main thread's stack, walked past the pool's waiting frames, gives the
    user's line and the call's loop frame, whose memory the main thread's
    own warnings (a search's refit) use too.
    """
    if threading.current_thread() is threading.main_thread():
        return None
    pools = _thread_pool_files()
    tail = frame
    while tail is not None:
        if not os.path.abspath(tail.f_code.co_filename).startswith(pools):
            return None
        tail = tail.f_back
    main = sys._current_frames().get(threading.main_thread().ident)
    if main is None:
        return None
    main_frame, _, loop = _callers_frame(main, 0, prefixes + pools, loops)
    if loop is None:
        return None
    return main_frame, loop


@functools.cache
def _thread_pool_files():
    """Files of the standard library's threads and thread pools."""
    import concurrent.futures.thread
    import multiprocessing.pool
    import queue

    modules = (threading, multiprocessing.pool, concurrent.futures.thread, queue)
    return tuple(os.path.abspath(module.__file__) for module in modules)

# Messages are constants so tests can match them exactly.
_CLASSES_INFERRED = (
    "classes was not given, so the label set was read from the private y. "
    "The label set (including which rare labels occur) is then not covered by "
    "the differential privacy guarantee. Pass classes=[...] to declare it."
)
# Validation is outside the guarantee, but its messages need not publish the
# private values that failed it: they name the problem and the parameter.
_UNDECLARED_LABELS = (
    "y contains labels that are not in the declared classes (the labels are "
    "not shown: they are private). Declare every possible label in classes, "
    "or drop the rows whose label is outside it."
)
_ONE_CLASS = (
    "y contains only one class; a classifier needs at least two. Declare the "
    "label set with classes=[...] if other labels are possible."
)


def is_sparse_frame(X):
    """Whether ``X`` is a DataFrame whose columns are all pandas ``SparseDtype``.

    scikit-learn's ``check_array`` makes such a frame a sparse matrix
    (``X.sparse.to_coo()``), so every estimator that validates it, and every
    step of a pipeline, fits it as one.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_dpfair.utils._validation import is_sparse_frame
    >>> frame = pd.DataFrame({"a": pd.arrays.SparseArray([0.0, 1.0])})
    >>> is_sparse_frame(frame), is_sparse_frame(frame.sparse.to_dense())
    (True, False)
    """
    if not hasattr(X, "columns"):
        return False
    dtypes = list(getattr(X, "dtypes", ()))
    return bool(dtypes) and all(
        type(dtype).__name__ == "SparseDtype" for dtype in dtypes
    )


def is_sparse_layout(X):
    """Whether an estimator given ``X`` fits a sparse matrix (a public property).

    A scipy sparse matrix, or a DataFrame of sparse columns only, which the
    estimator's validation converts to one (:func:`is_sparse_frame`). It reads
    the container, never a value: the plan of an estimator whose event
    depends on the layout (``privacy_plan``'s ``sparse``) is made on this
    answer, by the estimators, a private pipeline and a private search alike.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from sklearn_dpfair.utils._validation import is_sparse_layout
    >>> is_sparse_layout(sp.csr_matrix(np.eye(2))), is_sparse_layout(np.eye(2))
    (True, False)
    """
    return sp.issparse(X) or is_sparse_frame(X)


def check_sparse_sums_finite(X, input_name="X"):
    """Refuse a sparse ``X`` whose duplicate entries sum beyond the largest float.

    A CSR matrix may store one position several times; its value is their
    sum. scikit-learn's finiteness check reads each stored entry, so two
    entries of 1.7e308 at one position pass it, and the solvers, which sum
    the duplicates first, then hold an infinite entry: its row's clip factor
    is 0, and ``inf * 0`` put NaN in a noisy sum (a released model of NaNs
    on one dataset, finite on its neighbour). This is input validation,
    before anything is read for a release, as for an ``inf`` stored entry;
    the message shows no value. A matrix in canonical format (no duplicates)
    is not copied.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from sklearn_dpfair.utils._validation import check_sparse_sums_finite
    >>> data, indices, indptr = np.full(2, 1.7e308), [0, 0], [0, 2]
    >>> X = sp.csr_matrix((data, indices, indptr), shape=(1, 1))
    >>> check_sparse_sums_finite(X)
    Traceback (most recent call last):
    ...
    ValueError: Input X contains infinity or a value too large for ...
    """
    if not sp.issparse(X) or getattr(X, "has_canonical_format", True):
        return
    summed = X.copy()
    with np.errstate(over="ignore", invalid="ignore"):
        summed.sum_duplicates()
    if not np.all(np.isfinite(summed.data)):
        raise ValueError(
            f"Input {input_name} contains infinity or a value too large for "
            f"{summed.dtype!r}: duplicate stored entries of one position sum "
            "beyond the largest float (no value is shown: they are private)."
        )


def float64_target(y):
    """A validated regression target ``y`` as a float64 array, checked finite.

    ``validate_data(..., y_numeric=True)`` casts only an object-dtype ``y``,
    after its finiteness check (which sees no NaN in the string ``"nan"``),
    and leaves a unicode one as is: numeric strings are parsed here, and a
    value that is no number, or that parses to NaN or an infinity
    (``"nan"``, ``"1e400"``), is refused like a float NaN, naming ``y`` and
    showing no value (each value is a private record's).

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        The target as ``validate_data`` returns it (numpy).

    Returns
    -------
    y : ndarray of shape (n_samples,)
        float64 (the input itself when it is already float64).

    Raises
    ------
    ValueError
        If a value is not a number or not finite.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._validation import float64_target
    >>> float64_target(np.array(["1.5", "2"]))
    array([1.5, 2. ])
    >>> float64_target(np.array(["1.5", "nan"]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: Input y contains NaN or infinity...
    """
    try:
        y = np.asarray(y).astype(np.float64, copy=False)
    except (TypeError, ValueError):
        # The conversion's message quotes the value: raised outside the
        # handler, so that it is not attached as __context__ either.
        y = None
    if y is None:
        raise ValueError(
            "Input y holds a value that is not a number: a regression "
            "target must be numeric."
        )
    if not np.isfinite(y).all():
        raise ValueError(
            "Input y contains NaN or infinity (a value that parses to one): "
            "a regression target must be finite."
        )
    return y


def check_public_weights(sample_weight, X, name="sample_weight"):
    """Validated public ``sample_weight``, or None.

    The weights are public inputs: checking them (shape, sign, not all zero)
    reveals nothing about the private records. ``name`` is the parameter the
    messages name (a pipeline step's ``clf__sample_weight``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._validation import check_public_weights
    >>> check_public_weights([1, 3], np.zeros((2, 1)))
    array([1., 3.])
    """
    if sample_weight is None:
        return None
    # Host numpy, like the labels (public metadata): with array API dispatch
    # scikit-learn would move them to X's namespace, which it cannot do for
    # a list, a tuple or a Series, nor for a tensor that requires grad. A
    # tensor is copied to the host, detached from its autograd graph, and
    # the weights are checked against X's number of rows on the host.
    if _is_array_api_array(sample_weight):
        sample_weight = to_numpy(sample_weight)
    if _is_array_api_array(X):
        X = np.empty((num_samples(X), 0))
    if isinstance(sample_weight, (list, tuple)) or isinstance(
        getattr(sample_weight, "dtype", None), np.dtype
    ):
        # numpy's conversion errors print the offending value and not the
        # parameter (and the redaction of private values would hide even
        # that): the weights are public, the parameter is what to name.
        try:
            values = np.asarray(sample_weight)
        except ValueError:  # ragged: checked below as objects
            values = np.asarray(sample_weight, dtype=object)
        if values.dtype.kind not in "biuf" and not _all_real(
            values.astype(object)
        ):
            raise ValueError(
                f"{name} must be real numbers (float or int); got "
                f"{type(_first_unreal(values)).__name__} values."
            )
    try:
        weights = check_sample_weight(
            sample_weight, X, dtype=np.float64, ensure_non_negative=True
        )
    except ValueError as exc:
        # Some of scikit-learn's messages say "sample_weight", others
        # "Sample weights" (2-D, all zero); a pipeline's step names its own.
        if f"{name}." in str(exc) or f"{name} " in str(exc):
            raise
        raise ValueError(f"{name}: {exc}") from None
    weights = to_numpy(weights)
    if not np.any(weights > 0):
        raise ValueError(f"{name} are all zero: there is nothing to fit.")
    return weights


def _is_array_like(value):
    """Whether the fit parameter ``value`` is array-like: one value per sample."""
    return (
        value is not None
        and hasattr(value, "__len__")
        and not isinstance(value, (str, dict))
    )


def check_sample_aligned(params, n_samples, passed_as=None):
    """Raise if an array-like value of ``params`` has not ``n_samples`` rows.

    Fit parameters given as arrays (``sample_weight``, ``sensitive_features``,
    ``public_mask``) hold one value per sample; their lengths are public
    shapes. ``passed_as`` maps a key to the name the user passed it under.

    Examples
    --------
    >>> from sklearn_dpfair.utils._validation import check_sample_aligned
    >>> check_sample_aligned({"sample_weight": [1.0, 2.0]}, 3)
    Traceback (most recent call last):
    ...
    ValueError: sample_weight has 2 rows but X has 3; pass one value ...
    """
    passed_as = passed_as or {}
    for key, value in params.items():
        if _is_array_like(value) and num_samples(value) != n_samples:
            raise ValueError(
                f"{passed_as.get(key, key)} has {num_samples(value)} rows but "
                f"X has {n_samples}; "
                "pass one value (or one row of values) per sample."
            )


def check_fit_keywords(estimator, params):
    """Raise the ``TypeError`` of ``estimator.fit(X, y, **params)`` for a wrong keyword.

    A keyword that ``fit`` does not take is read from its signature (one
    with ``**kwargs`` takes any), so that a misspelled keyword is refused
    before anything is fitted, with the message of the call.

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_dpfair.utils._validation import check_fit_keywords
    >>> check_fit_keywords(LinearRegression(), {"sample_wieght": None})
    Traceback (most recent call last):
    ...
    TypeError: LinearRegression.fit() got an unexpected keyword argument 'sample_wieght'
    """
    fit = estimator.fit
    try:
        parameters = inspect.signature(fit).parameters
    except (TypeError, ValueError):  # pragma: no cover - a builtin's fit
        return
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        return
    for key in params:
        param = parameters.get(key)
        if param is None or param.kind in (param.POSITIONAL_ONLY, param.VAR_POSITIONAL):
            name = getattr(fit, "__qualname__", f"{type(estimator).__name__}.fit")
            raise TypeError(f"{name}() got an unexpected keyword argument {key!r}")


def check_public_targets(y, task, class_sets=()):
    """Refuse, on every row, a target that the estimators would refuse.

    ``task="classification"``: a label outside any label set of
    ``class_sets``, by the estimators' own check (:func:`resolve_classes`;
    None among them reads the set from ``y``, with its warning). ``task="regression"``:
    a target that is not a finite number. Run on all rows before any row
    is read for a release, the refusal is input validation; the messages
    show no value (they are private).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._validation import check_public_targets
    >>> check_public_targets(np.array([0, 1, 2]), "classification", [[0, 1]])
    Traceback (most recent call last):
    ...
    ValueError: y contains labels that are not in the declared classes ...
    """
    if task == "classification":
        for declared in class_sets:
            resolve_classes(declared, np.asarray(y))
        return
    if np.iscomplexobj(y):
        # As scikit-learn refuses it; the cast would warn and drop the
        # imaginary parts.
        raise ValueError("Input y: Complex data not supported (real targets only).")
    try:
        targets = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        # Raised outside the handler: the conversion's message, quoting the
        # value, is not attached as __context__.
        targets = None
    if targets is None:
        raise ValueError(
            "y must hold numbers for a regressor: a value could not be "
            "read as one (it is not shown: it is private)."
        )
    assert_all_finite(targets, input_name="y")


def check_declared_groups(sensitive_features, n_samples, group_sets, refused_by):
    """Refuse, on every row, sensitive features the private estimators refuse.

    A length other than ``n_samples``, a group outside any declared group
    set of ``group_sets`` (None: not declared, the groups are read from the
    values), or a missing value: no private estimator has a private
    treatment of a missing group. ``refused_by`` ends the message's
    sentence: who refuses them (``"the private candidates refuse"``).

    Examples
    --------
    >>> from sklearn_dpfair.utils._validation import check_declared_groups
    >>> check_declared_groups(["a", None], 2, [None], "DPFERMIClassifier refuses")
    Traceback (most recent call last):
    ...
    ValueError: sensitive_features has missing values (None/NaN), which ...
    """
    # Imported here: the fairness package validates with this module.
    from ..fairness._sensitive import encode_sensitive_features

    for groups in group_sets:
        encoding = encode_sensitive_features(
            sensitive_features, n_samples=n_samples, groups=groups
        )
        if encoding.n_missing:
            raise ValueError(
                "sensitive_features has missing values (None/NaN), which "
                f"{refused_by}: drop or impute those rows."
            )


_REAL_TYPES = (bool, int, float, np.bool_, np.integer, np.floating)


def _all_real(values):
    """Whether every entry of an object array is a real number (bools too)."""
    return _first_unreal(values) is None


def _first_unreal(values):
    """The first entry of an object array that is not a real number, or None."""
    return next((v for v in values.ravel() if not isinstance(v, _REAL_TYPES)), None)


def one_per_row(y, name, what="label"):
    """``y`` as a 1-D array: a column vector is raveled with one warning.

    As scikit-learn's estimators take a target (``column_or_1d``), with the
    warning pointed at the caller's line and naming the argument; any other
    shape but 1-D raises a ``ValueError`` saying that ``name`` holds one
    ``what`` per row.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._validation import one_per_row
    >>> one_per_row(np.array([1, 0, 1]), "y_true")
    array([1, 0, 1])
    """
    y = check_array(
        y,
        ensure_2d=False,
        dtype=None,
        input_name=name,
        ensure_all_finite=False,
        ensure_min_samples=0,
    )
    if y.ndim == 2 and y.shape[1] == 1:
        warn_at_caller(
            f"A column-vector {name} was passed when a 1d array was expected. "
            f"Please change the shape of {name} to (n_samples,), for example "
            "using ravel().",
            DataConversionWarning,
        )
    elif y.ndim != 1:
        raise ValueError(
            f"{name} must be 1-D (one {what} per row); got an array of shape "
            f"{y.shape}."
        )
    # The shape is checked above (column_or_1d's input_name needs
    # scikit-learn >= 1.7).
    return column_or_1d(y)


def check_delta_for_n(delta, n_samples):
    """Warn when ``delta >= 1/n``: such a delta allows publishing a record outright."""
    if delta * n_samples >= 1.0:
        # The rule, not this fit's n: one cause warns once across the folds
        # of a search (Python shows a warning once per text and line).
        warn_at_caller(
            f"delta={delta:g} is not smaller than 1/n_samples for the rows "
            "of this fit; a mechanism with this delta may reveal an entire "
            "record. Use delta well below 1/n (for example 1/n^1.1 or 1e-5 "
            "for n < 1e5).",
            UserWarning,
        )


def _is_missing(label):
    """Whether one label is a missing value: None, NaN, or pandas' NA or NaT."""
    if label is None or (isinstance(label, float) and math.isnan(label)):
        return True
    # pd.isna reads a list-like label (a tuple) elementwise: only a scalar
    # is one missing value.
    return bool(pd.api.types.is_scalar(label) and pd.isna(label))


def _declared_positions(classes_, y):
    """Index of each label of ``y`` in the sorted ``classes_``, and which are not in it.

    Numbers and strings of one kind are located by binary search. An object
    ``y`` is matched by equality, one declared class at a time, and never
    sorted: its labels may not be mutually comparable (a ``3`` among
    strings), and ordering them would raise a ``TypeError`` before the
    membership check could say that a label is undeclared.
    """
    if y.dtype != object and classes_.dtype != object:
        pos = np.clip(np.searchsorted(classes_, y), 0, classes_.size - 1)
        return pos, classes_[pos] != y
    pos = np.full(y.shape, -1, dtype=np.intp)
    labels = y.astype(object, copy=False)
    # A missing label (None, NaN, a nullable column's pd.NA) is in no
    # declared set (resolve_classes refuses a missing class), and comparing
    # pd.NA raises "boolean value of NA is ambiguous" instead of saying that
    # the label is undeclared: such rows are left unmatched, not compared.
    present = ~np.asarray(pd.isna(labels), dtype=bool)
    labels = labels[present]
    for k, label in enumerate(classes_.tolist()):
        hit = np.zeros(y.shape, dtype=bool)
        hit[present] = np.asarray(labels == label, dtype=bool)
        pos[hit & (pos < 0)] = k
    unknown = pos < 0
    pos[unknown] = 0
    return pos, unknown


def check_declared_classes(classes):
    """A declared label set, validated from the parameter alone, sorted.

    The check that a fit (:func:`resolve_classes`) and a privacy plan
    (:func:`planned_class_count`, before any data is read) share, so that no
    plan is made for a label set its fit would refuse: a 1-d array-like of
    at least two labels, none missing, none twice, none a non-integral
    number.

    Returns
    -------
    classes_ : ndarray
        The labels sorted, as scikit-learn orders a declared label set: its
        scorers and the binary decision_function/coef_ sign read
        ``classes_[1]`` as the positive class, so the declaration order must
        not change them (a new array: it does not alias the parameter).

    Examples
    --------
    >>> from sklearn_dpfair.utils._validation import check_declared_classes
    >>> check_declared_classes(["b", "a"])
    array(['a', 'b'], dtype='<U1')
    >>> check_declared_classes(["a", "a", "b"])
    Traceback (most recent call last):
    ...
    ValueError: classes contains duplicate labels: ['a', 'a', 'b'].
    >>> check_declared_classes([0, 0.5, 1])
    Traceback (most recent call last):
    ...
    ValueError: classes must hold integers or strings: ...
    """
    declared = np.asarray(classes)
    if declared.ndim != 1 or declared.size < 2:
        raise ValueError(
            "classes must be a 1-d array-like of at least two labels; got "
            f"{classes!r}."
        )
    if _mixes_strings_and_numbers(classes):
        # numpy would make strings of the numbers ('0' for 0), a class no
        # row's label equals; scikit-learn refuses such labels in y ("Mix of
        # label input types").
        raise ValueError(
            "classes mixes strings and numbers; declare labels of one kind "
            f"(as y holds them): got {classes!r}."
        )
    if any(_is_missing(label) for label in declared.tolist()):
        # scikit-learn refuses a missing label in y; a declared one would be
        # a class no row can have (NaN != NaN).
        raise ValueError(
            f"classes contains a missing value (None or NaN): {classes!r}."
        )
    classes_ = np.unique(declared)
    if classes_.size != declared.size:
        raise ValueError(f"classes contains duplicate labels: {classes!r}.")
    if np.issubdtype(classes_.dtype, np.inexact) and not np.all(
        np.isfinite(classes_) & (classes_ == np.round(classes_))
    ):
        # scikit-learn refuses such labels in y as a continuous target. Read
        # from the declaration, not from y: a fit that failed only when a
        # row holds the label 0.5 would tell whether one does.
        raise ValueError(
            "classes must hold integers or strings: non-integral or infinite "
            "numbers are refused as labels (scikit-learn's 'Unknown label "
            f"type: continuous'); got {classes!r}."
        )
    return classes_


def _mixes_strings_and_numbers(values):
    """Whether the labels ``values`` (as given, before numpy casts them) mix kinds."""
    labels = values.tolist() if hasattr(values, "tolist") else list(values)
    kinds = {
        "string" if isinstance(label, str) else "number"
        for label in labels
        if isinstance(label, (str, Number, np.generic)) and not _is_missing(label)
    }
    return len(kinds) > 1


def planned_class_count(classes, n_classes):
    """The number of classes a privacy plan is made for (public inputs only).

    That of the declared ``classes`` (checked as a fit checks them), which a
    given ``n_classes`` must equal; else ``n_classes`` (at least 2, as every
    classifier's fit requires), 2 by default.

    Examples
    --------
    >>> from sklearn_dpfair.utils._validation import planned_class_count
    >>> planned_class_count(["x", "y", "z"], None), planned_class_count(None, None)
    (3, 2)
    """
    if classes is None:
        if n_classes is not None and n_classes < 2:
            # A fit on y of one class refuses it: no plan for one.
            raise ValueError(f"n_classes must be >= 2; got {n_classes}.")
        return 2 if n_classes is None else n_classes
    declared = check_declared_classes(classes).size
    if n_classes is not None and n_classes != declared:
        raise ValueError(
            f"n_classes={n_classes} disagrees with the {declared} declared classes."
        )
    return declared


def resolve_classes(classes, y):
    """Return ``(classes_, y_encoded, caveats)`` for a classifier.

    If ``classes`` is declared, it is the public label set: labels of ``y``
    outside it raise ``ValueError``, and classes absent from ``y`` are kept.
    ``classes_`` is the declared set sorted (``np.unique``), whatever the
    order of the declaration, as scikit-learn's ``partial_fit(classes=...)``
    and ``unique_labels``: its scorers take ``classes_[1]`` as the positive
    class. Sorting reads only the declaration, not ``y``. Otherwise the label
    set is inferred from ``y`` with a :class:`PrivacyLeakWarning`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._validation import resolve_classes
    >>> classes_, y_encoded, _ = resolve_classes([1, 0], np.array([0, 1, 1]))
    >>> classes_, y_encoded
    (array([0, 1]), array([0, 1, 1]))
    """
    caveats = []
    if classes is not None:
        classes_ = check_declared_classes(classes)
        pos, unknown = _declared_positions(classes_, np.asarray(y))
        if np.any(unknown):
            # The message names the problem, not the labels: they are private.
            raise ValueError(_UNDECLARED_LABELS)
        return classes_, pos, caveats

    warn_at_caller(_CLASSES_INFERRED, PrivacyLeakWarning)
    caveats.append("label set inferred from the private data")
    classes_, y_encoded = np.unique(y, return_inverse=True)
    if classes_.size < 2:
        raise ValueError(_ONE_CLASS)
    return classes_, y_encoded, caveats


def resolve_classification_targets(classes, y):
    """:func:`resolve_classes` with scikit-learn's check of the target type.

    ``check_classification_targets`` sorts ``y``'s labels, which fails with a
    ``TypeError`` naming nothing on labels of mixed types (a ``3`` among
    strings). Against declared ``classes`` the membership check runs first,
    by equality, so that such a label is reported as undeclared; without
    them the target type is checked first, as scikit-learn does. With
    declared classes, whose kind :func:`check_declared_classes` has checked,
    the target type of ``y`` then depends only on its dtype, never on which
    declared labels the rows hold.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._validation import resolve_classification_targets
    >>> y = np.array(["no", "yes", 3], dtype=object)
    >>> resolve_classification_targets(["no", "yes"], y)
    Traceback (most recent call last):
    ...
    ValueError: y contains labels that are not in the declared classes ...
    """
    if classes is None:
        check_classification_targets(y)
        return resolve_classes(classes, y)
    resolved = resolve_classes(classes, y)
    check_classification_targets(y)
    return resolved


def refuse_weights_with_silos(sample_weight, silos):
    """Refuse ``sample_weight`` given with ``silos`` (federated DP-SGD)."""
    if sample_weight is not None and silos is not None:
        raise ValueError(
            "sample_weight cannot be combined with silos (federated DP-SGD)."
        )


def check_classifier_metadata(estimator, X, y, sample_weight, silos):
    """The public metadata of a DP-SGD classifier's fit, checked in fit order.

    Shared by the classifiers that may run federated (``silos``): the
    weights (:func:`check_public_weights`), refused beside ``silos`` (the
    silos' local fits and server weights are not weighted; the refusal
    reads whether weights were passed, never their values), the label set
    (:func:`resolve_classification_targets`), and for a central fit its
    ``delta`` against ``n`` (a federated fit's delta is each silo's,
    refused by ``check_silo_delta`` unless below ``1 / n_i`` of its silo).

    Returns
    -------
    weights : ndarray or None
    classes : ndarray
    y_encoded : ndarray of int
        Host numpy.
    caveats : list of str
    """
    weights = check_public_weights(sample_weight, X)
    refuse_weights_with_silos(weights, silos)
    # Labels are public metadata handled on the host; only X is large.
    classes, y_encoded, caveats = resolve_classification_targets(
        estimator.classes, to_numpy(y)
    )
    if silos is None:
        check_delta_for_n(estimator.delta, X.shape[0])
    return weights, classes, y_encoded, caveats
