# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""A privacy and fairness report for any fitted estimator.

:func:`privacy_report` reads what a fitted estimator recorded about its
privacy guarantee (``privacy_record_`` and the fitted privacy attributes) and,
given evaluation data, computes metrics per sensitive group with fairlearn's
:class:`~fairlearn.metrics.MetricFrame`. The resulting :class:`ModelReport`
prints as text, converts to pandas DataFrames and renders as HTML in notebooks.
Nothing here touches the training data: the report is post-processing of the
released model (free under differential privacy) plus whatever evaluation
data the caller passes.
"""

import html
import math
from functools import partial

import numpy as np
import pandas as pd
from fairlearn.metrics import (
    MetricFrame,
    count,
    false_positive_rate,
    selection_rate,
    true_positive_rate,
)
from sklearn.base import is_classifier
from sklearn.metrics import accuracy_score, mean_absolute_error, mean_squared_error
from sklearn.pipeline import Pipeline
from sklearn.utils import check_consistent_length
from sklearn.utils.validation import check_is_fitted

from .fairness._sensitive import sensitive_features_shape
from .pipeline._pipeline import _nested_parts
from .privacy._ledger import PrivacyLedger
from .privacy._record import ADJACENCY_CONVERSION, PrivacyRecord, plain_language

__all__ = ["ModelReport", "privacy_report"]

# Fitted attributes some estimators set beyond the shared privacy record,
# with the label the report prints for each. An attribute an estimator does
# not have is skipped, so estimators join the report by naming theirs here.
_EXTRA_PRIVACY_ATTRIBUTES = {
    "dual_noise_multiplier_": "dual noise multiplier",
    "effective_noise_multiplier_": "effective noise multiplier",
    "sampling_probability_": "sampling rate",
    "clip_norm_": "clip norm",
    "noise_std_": "noise standard deviation",
    "rho_spent_": "zCDP budget spent per component",
    "optimizer_epsilon_": "epsilon of the optimizer part",
    "marginal_noise_multiplier_": "group-marginal noise multiplier",
    "n_public_": "public rows",
    "n_private_": "private rows",
    "silo_epsilon_": "epsilon per silo",
    "silo_delta_": "delta per silo",
    "silo_noise_multiplier_": "noise multiplier per silo",
    "central_epsilon_": (
        "central epsilon (holds only if secure aggregation is deployed)"
    ),
}

_SEEDED_ROW = "yes: the noise is reproducible from random_state, not a private release"

# The rows of the privacy table, in print order, with their labels.
_PRIVACY_FIELDS = {
    "epsilon": "epsilon",
    "delta": "delta",
    "adjacency": "adjacency",
    "mechanism": "mechanism",
    "accountant": "accountant",
    "noise_multiplier": "noise multiplier",
    "clip_norm": "sensitivity (clip norm)",
    "sampling_rate": "sampling rate",
    "steps": "steps",
}


class ModelReport:
    """Privacy guarantee and per-group metrics of one fitted estimator.

    Build it with :func:`privacy_report`. Print it (or call
    :meth:`to_text`) for a plain-text report, use :meth:`to_frame`,
    :meth:`privacy_frame` and :meth:`group_frame` for pandas DataFrames; in a
    notebook it renders as HTML.

    Read more in the :ref:`User Guide <report>`.

    Parameters
    ----------
    estimator_name : str
        Name of the reported estimator (class name of the final model).
    privacy : dict
        The privacy guarantee: ``private`` (bool), ``epsilon``, ``delta``,
        ``adjacency``, ``mechanism``, ``accountant``, ``noise_multiplier``,
        ``clip_norm``, ``sampling_rate``, ``steps`` (None where unknown),
        ``seeded`` (True when the fit's noise is reproducible from its
        ``random_state``, so that it is not a private release; None where
        unknown), ``plain`` (the guarantee in two or three plain sentences:
        what is protected and against whom, what is public, what is not
        covered), ``summary`` (the estimator's own statement, led by
        ``plain``), ``caveats`` (list of str) and ``extra`` (dict of
        estimator-specific privacy attributes).
    metric_frame : fairlearn.metrics.MetricFrame, default=None
        Metrics per sensitive group; None when no sensitive features were
        given.
    overall : dict, default=None
        Overall value of each metric; None when no evaluation data were
        given.
    notes : list of str, default=()
        What the report adds about how the model was built (pipelines,
        hyperparameter searches).
    title : str, default="Model report"
        Heading of the text and HTML forms ("Evaluation report" for a
        private evaluation, which releases metrics, not a model).

    Attributes
    ----------
    estimator_name : str
        As given.
    privacy : dict
        As given.
    metric_frame : fairlearn.metrics.MetricFrame or None
        As given.
    overall : dict or None
        As given.
    notes : list of str
        As given.

    See Also
    --------
    privacy_report : Build the report of a fitted estimator.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn_dpfair import DPLogisticRegression
    >>> from sklearn_dpfair.report import privacy_report
    >>> X, y = make_classification(n_samples=1000, random_state=0)
    >>> clf = DPLogisticRegression(classes=[0, 1], random_state=0).fit(X, y)
    >>> report = privacy_report(clf, X, y, sensitive_features=X[:, 0] > 0)
    >>> report.privacy["epsilon"] <= 1.0
    True
    >>> report.group_frame().index.tolist()
    [False, True, 'overall', 'difference']
    """

    def __init__(
        self,
        estimator_name,
        privacy,
        metric_frame=None,
        overall=None,
        notes=(),
        title="Model report",
    ):
        self.estimator_name = estimator_name
        self.title = title
        self.privacy = privacy
        self.metric_frame = metric_frame
        self.overall = overall
        self.notes = list(notes)

    def privacy_frame(self):
        """The privacy guarantee as a one-column table.

        Returns
        -------
        frame : pandas.DataFrame
            One row per quantity (the plain-language statement, epsilon,
            delta, adjacency, mechanism, accountant, noise multiplier,
            sensitivity, sampling rate, steps, then the estimator-specific
            extras and caveats), column ``"value"``. Unknown quantities are
            omitted.
        """
        rows = {}
        if self.privacy.get("plain") is not None:
            rows["in plain words"] = self.privacy["plain"]
        rows.update(
            (label, self.privacy[key])
            for key, label in _PRIVACY_FIELDS.items()
            if self.privacy.get(key) is not None
        )
        if self.privacy.get("seeded"):
            rows["seeded fit"] = _SEEDED_ROW
        if "epsilon_recomputed" in self.privacy:
            rows["epsilon recomputed from dp_event_"] = self.privacy[
                "epsilon_recomputed"
            ]
        rows.update(self.privacy["extra"])
        for i, caveat in enumerate(self.privacy["caveats"], start=1):
            rows[f"caveat {i}"] = caveat
        frame = pd.DataFrame({"value": pd.Series(rows, dtype=object)})
        frame.index.name = self.estimator_name
        return frame

    def group_frame(self):
        """Metrics per sensitive group, with the overall value and the gap.

        Returns
        -------
        frame : pandas.DataFrame or None
            One row per group, then ``"overall"`` and ``"difference"`` (the
            largest minus the smallest group value, fairlearn's
            ``between_groups`` difference); one column per metric. None when
            the report has no sensitive features.
        """
        if self.metric_frame is None:
            return None
        by_group = self.metric_frame.by_group
        if isinstance(by_group.index, pd.MultiIndex):
            # Intersectional groups: one label per row, so that the summary
            # rows below fit in the same index.
            by_group = by_group.set_axis(
                [" & ".join(map(str, key)) for key in by_group.index]
            )
        summary = pd.DataFrame(
            [self.metric_frame.overall, self.metric_frame.difference()],
            index=["overall", "difference"],
        )
        return pd.concat([by_group, summary])

    def to_frame(self):
        """One-row summary, for comparing models with :func:`pandas.concat`.

        Returns
        -------
        frame : pandas.DataFrame
            Indexed by the estimator name. Columns: the privacy quantities
            (``epsilon``, ``delta``, ``adjacency``, ``mechanism``,
            ``accountant``, ``noise_multiplier``, ``clip_norm``,
            ``sampling_rate``, ``steps``), ``private``, ``seeded`` (the fit's
            noise is reproducible from a seed: not a private release), the
            overall value of each metric,
            and, with sensitive features, ``<metric>_difference`` between
            groups. Binary classifiers also get
            ``demographic_parity_difference`` and, when labels were given,
            ``equalized_odds_difference`` (both as defined by fairlearn).
        """
        row = {key: self.privacy.get(key) for key in _PRIVACY_FIELDS}
        row["private"] = self.privacy["private"]
        row["seeded"] = self.privacy.get("seeded")
        if self.overall is not None:
            row.update(self.overall)
        if self.metric_frame is not None:
            difference = self.metric_frame.difference()
            for name in self.metric_frame.by_group.columns:
                if name != "count":
                    row[f"{name}_difference"] = difference[name]
            if "selection_rate" in difference:
                row["demographic_parity_difference"] = difference["selection_rate"]
            if {"true_positive_rate", "false_positive_rate"} <= set(difference.index):
                row["equalized_odds_difference"] = max(
                    difference["true_positive_rate"], difference["false_positive_rate"]
                )
        return pd.DataFrame([row], index=pd.Index([self.estimator_name], name="model"))

    def to_text(self):
        """The report as plain text.

        Returns
        -------
        text : str
            The privacy statement (in plain words first, then the technical
            record), the notes, the overall metrics and the per-group table.
        """
        lines = [f"{self.title}: {self.estimator_name}", "", "Privacy", "-------"]
        lines.append(self.privacy["summary"])
        for key, value in self.privacy["extra"].items():
            lines.append(f"{key}: {_format_value(value)}")
        if "epsilon_recomputed" in self.privacy:
            lines.append(
                "epsilon recomputed from dp_event_ with dp-accounting: "
                f"{self.privacy['epsilon_recomputed']:.6g}"
            )
        for note in self.notes:
            lines.append(f"Note: {note}")
        if self.overall is not None:
            lines += ["", "Metrics", "-------"]
            lines += [
                f"{name}: {_format_value(value)}"
                for name, value in self.overall.items()
            ]
        groups = self.group_frame()
        if groups is not None:
            lines += ["", "Metrics by group", "----------------"]
            lines.append(groups.to_string(float_format=_format_value))
        return "\n".join(lines)

    def __str__(self):
        return self.to_text()

    def __repr__(self):
        epsilon = self.privacy["epsilon"]
        return f"<ModelReport of {self.estimator_name}: epsilon={epsilon:.4g}>"

    def _repr_html_(self):
        parts = [
            f"<div><h4>{html.escape(self.title)}: "
            f"{html.escape(self.estimator_name)}</h4>",
            f"<p>{html.escape(self.privacy['summary']).replace(chr(10), '<br>')}</p>",
        ]
        parts += [f"<p><em>Note:</em> {html.escape(note)}</p>" for note in self.notes]
        parts.append(self.privacy_frame().rename_axis(None).to_html())
        groups = self.group_frame()
        if groups is not None:
            parts.append("<h5>Metrics by group</h5>")
            parts.append(groups.to_html(float_format=_format_value))
        elif self.overall is not None:
            parts.append("<h5>Metrics</h5>")
            parts.append(pd.Series(self.overall, name="value").to_frame().to_html())
        parts.append("</div>")
        return "\n".join(parts)


def privacy_report(
    estimator,
    X=None,
    y=None,
    *,
    sensitive_features=None,
    metrics=None,
    recompute_epsilon=False,
):
    """Summarize the privacy guarantee and per-group metrics of a fitted model.

    Works for any fitted scikit-learn estimator: private estimators report
    their recorded guarantee, non-private ones are reported as such. A
    :class:`~sklearn.pipeline.Pipeline` is reported through its final step,
    and a fitted hyperparameter search (``best_estimator_``) through the
    selected model, with a note on what the guarantee does not cover; a
    :class:`~sklearn_dpfair.model_selection.PrivateHyperparameterSearch` is
    reported with its own guarantee, which covers the whole search.

    Read more in the :ref:`User Guide <report>`.

    Parameters
    ----------
    estimator : estimator object
        A fitted estimator, pipeline or search.
    X : array-like of shape (n_samples, n_features), default=None
        Evaluation data. Without it, the report holds the guarantee only.
        The metrics on it are exact (fairlearn's ``MetricFrame``), hence not
        covered by any guarantee if these rows are private: the report says
        so, and :class:`~sklearn_dpfair.metrics.PrivateMetricFrame` is the
        private alternative.
    y : array-like of shape (n_samples,), default=None
        True labels or targets of ``X``. Without them only the metrics of
        the predictions alone (selection rate, mean prediction, count) are
        computed.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, k), \
default=None
        Group membership of the rows of ``X``; several columns define
        intersectional groups (as in fairlearn).
    metrics : dict of str to callable, default=None
        Metrics ``metric(y_true, y_pred)`` to compute overall and per group.
        None uses accuracy, selection rate, true and false positive rates
        and count for binary classifiers (accuracy and count for other
        classifiers), and mean squared error, mean absolute error, mean
        prediction and count for regressors.
    recompute_epsilon : bool, default=False
        Recompute epsilon from the recorded ``dp_event_`` with dp-accounting
        and add it to the report, so a reader can check the printed epsilon.

    Returns
    -------
    report : ModelReport
        The report.

    See Also
    --------
    ModelReport : The report object.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn_dpfair import DPLogisticRegression
    >>> from sklearn_dpfair.report import privacy_report
    >>> X, y = make_classification(n_samples=1000, random_state=0)
    >>> clf = DPLogisticRegression(epsilon=0.5, classes=[0, 1], random_state=0)
    >>> clf = clf.fit(X, y)
    >>> report = privacy_report(clf, X, y, sensitive_features=X[:, 0] > 0)
    >>> print(report.to_text().splitlines()[0])
    Model report: DPLogisticRegression
    >>> row = report.to_frame().iloc[0]
    >>> round(float(row["epsilon"]), 2), row["adjacency"]
    (0.5, 'add_remove')
    """
    check_is_fitted(estimator)
    final, notes = _final_estimator(estimator)
    privacy = _privacy_of(final)
    record = getattr(final, "privacy_record_", None)
    if recompute_epsilon and isinstance(record, PrivacyRecord):
        privacy["epsilon_recomputed"] = record.recompute_epsilon()
    if not privacy["private"]:
        # What a pipeline or a search adds to a guarantee is moot without one.
        notes = []
    metric_frame = overall = None
    if X is not None:
        if not hasattr(estimator, "predict"):
            raise TypeError(
                f"X: {type(estimator).__name__} has no predict, so there is "
                "nothing to measure on X; call privacy_report without X for "
                "its guarantee."
            )
        metric_frame, overall = _metrics_of(
            estimator, final, X, y, sensitive_features, metrics
        )
        if privacy["private"]:
            notes = [*notes, _EXACT_METRICS_NOTE]
    elif y is not None or sensitive_features is not None:
        raise ValueError("y and sensitive_features need the evaluation data X.")
    # A private evaluation (PrivateMetricFrame) released metrics, not a model.
    subject = getattr(getattr(estimator, "privacy_record_", None), "subject", None)
    return ModelReport(
        type(final).__name__,
        privacy,
        metric_frame=metric_frame,
        overall=overall,
        notes=notes,
        title="Evaluation report" if subject == "evaluation" else "Model report",
    )


_EXACT_METRICS_NOTE = (
    "The metrics are computed exactly on the evaluation rows passed, not "
    "privately: if those rows are private, the metrics are releases outside "
    "the guarantee above. sklearn_dpfair.metrics.PrivateMetricFrame releases "
    "per-group metrics under its own (epsilon, delta)."
)


def _spends_budget(step):
    """Whether a fitted step, or a part nested in it, made private releases.

    A private transformer may sit inside a nested ``Pipeline``, a fitted
    ``ColumnTransformer``'s blocks or a ``FeatureUnion``'s parts: its
    budget adds to the final model's all the same.
    """
    if getattr(step, "privacy_record_", None) is not None:
        return True
    parts = _nested_parts(step, fitted=True) or []
    return any(_spends_budget(part) for part in parts if not isinstance(part, str))


def _final_estimator(estimator):
    """The model that carries the guarantee, and notes on what wraps it."""
    notes = []
    while True:
        if isinstance(estimator, Pipeline):
            steps = [
                name
                for name, step in estimator.steps[:-1]
                if step not in (None, "passthrough")
            ]
            private = [
                name for name, step in estimator.steps[:-1] if _spends_budget(step)
            ]
            if steps:
                notes.append(
                    f"pipeline steps {steps} were fit before the final model; their "
                    "fitted statistics are outside this guarantee unless they use "
                    "public information only."
                    + (
                        f" The private steps {private} spent their own budgets on "
                        "the same rows, which add to the final model's (sequential "
                        "composition): the pipeline is not private at this "
                        "epsilon. make_private_pipeline composes them into one "
                        "record."
                        if private
                        else ""
                    )
                )
            estimator = estimator[-1]
        elif hasattr(estimator, "best_estimator_") and hasattr(
            estimator, "privacy_record_"
        ):
            # A private search carries the guarantee of the whole search.
            notes.append(
                f"selected by {type(estimator).__name__} among "
                f"{estimator.n_candidates_} candidates: the privacy statement of "
                "this report covers the whole search (every candidate fit, the noisy "
                "validation scores, the selection and the returned model)."
            )
            return estimator, notes
        elif hasattr(estimator, "best_estimator_"):
            n_candidates, n_evaluations = _candidates_of(estimator.cv_results_)
            n_splits = getattr(estimator, "n_splits_", 1)
            evaluated = (
                f"{n_candidates} candidates x {n_splits} folds"
                if n_evaluations == n_candidates
                else f"{n_candidates} candidates ({n_evaluations} candidate "
                f"evaluations over successive rounds, each x {n_splits} folds)"
            )
            notes.append(
                f"selected by {type(estimator).__name__} among {evaluated} "
                "on the same data: the privacy statement of this report "
                "covers one fit only. A shared PrivacyLedger composes the "
                f"{n_evaluations * n_splits + 1} training fits, but the selection "
                "and the scores in cv_results_ were computed without noise on "
                "private held-out rows: they are further releases that no "
                "ledger accounts for (use sklearn_dpfair.model_selection for an "
                "accounted search)."
            )
            estimator = estimator.best_estimator_
            final = estimator[-1] if isinstance(estimator, Pipeline) else estimator
            ledger = getattr(final, "accountant", None)
            if isinstance(ledger, PrivacyLedger):
                notes.append(_ledger_note(ledger))
        else:
            return estimator, notes


def _candidates_of(cv_results):
    """(distinct candidates, candidate evaluations) of a search's ``cv_results_``.

    A successive-halving search (``HalvingGridSearchCV``) evaluates the
    surviving candidates again in each round, one ``cv_results_`` entry per
    evaluation; its round ``iter == 0`` holds every candidate once.
    """
    n_evaluations = len(cv_results["params"])
    if "iter" not in cv_results:
        return n_evaluations, n_evaluations
    return int(np.sum(np.asarray(cv_results["iter"]) == 0)), n_evaluations


def _ledger_note(ledger):
    """What a shared ledger says the training fits of a search spent."""
    try:
        total = ledger.total_epsilon()
    except ValueError as exc:  # releases under different adjacencies
        return f"the shared PrivacyLedger holds {len(ledger)} fits: {exc}"
    delta = max((e.delta for e in ledger.entries), default=0.0)
    return (
        f"the shared PrivacyLedger holds {len(ledger)} training fits with a "
        f"composed total of epsilon = {total:.4g} at delta = {delta:.3g} "
        "(the training releases only, see above)."
    )


def _privacy_of(estimator):
    """The privacy dict of a fitted estimator, from its record or attributes."""
    fitted = {
        attr: getattr(estimator, attr, None)
        for attr in (
            "privacy_record_",
            "epsilon_",
            "delta_",
            "adjacency_",
            "noise_multiplier_",
            "privacy_caveats_",
            *_EXTRA_PRIVACY_ATTRIBUTES,
        )
    }
    record = fitted["privacy_record_"]
    extra = {
        label: fitted[attr]
        for attr, label in _EXTRA_PRIVACY_ATTRIBUTES.items()
        if fitted[attr] is not None
    }
    if isinstance(record, PrivacyRecord):
        return {
            "private": not math.isinf(record.epsilon),
            "plain": record.plain_language(),
            "epsilon": record.epsilon,
            "delta": record.total_delta,
            "adjacency": record.adjacency,
            "mechanism": record.mechanism,
            "accountant": record.accountant,
            # A private record with no single Gaussian multiplier holds None
            # (a private pipeline) or 0 (a local randomizer): unknown.
            "noise_multiplier": (
                record.noise_multiplier
                if record.noise_multiplier or math.isinf(record.epsilon)
                else None
            ),
            "clip_norm": record.clip_norm,
            "sampling_rate": record.sampling_probability,
            "steps": record.steps,
            "seeded": record.seeded,
            "summary": str(record),
            "caveats": list(record.caveats),
            "extra": extra,
        }
    if fitted["epsilon_"] is not None:
        # A private estimator without the shared record: report what it set.
        epsilon = fitted["epsilon_"]
        privacy = {
            "private": not math.isinf(epsilon),
            "epsilon": epsilon,
            "delta": fitted["delta_"],
            "adjacency": fitted["adjacency_"],
            "mechanism": None,
            "accountant": getattr(estimator, "accountant", None),
            "noise_multiplier": fitted["noise_multiplier_"],
            "clip_norm": None,
            "sampling_rate": None,
            "steps": None,
            "seeded": None,
            "caveats": list(fitted["privacy_caveats_"] or []),
            "extra": extra,
        }
        privacy["plain"] = plain_language(
            epsilon, privacy["delta"], privacy["adjacency"], privacy["caveats"]
        )
        privacy["summary"] = (
            f"{privacy['plain']}\n\nTechnical record:\n"
            f"(epsilon={epsilon:.4g}, delta={privacy['delta']})-differential "
            f"privacy, adjacency {privacy['adjacency']}."
        )
        if privacy["adjacency"] == "replace_one" and not math.isinf(epsilon):
            privacy["summary"] += f"\n{ADJACENCY_CONVERSION}"
        return privacy
    plain = (
        f"In plain words: {type(estimator).__name__} is not a private "
        "estimator, so nothing protects the training records: its fitted "
        "parameters may reveal any of them."
    )
    return {
        "private": False,
        "plain": plain,
        "epsilon": math.inf,
        "delta": None,
        "adjacency": None,
        "mechanism": "none (not a differentially private estimator)",
        "accountant": None,
        "noise_multiplier": None,
        "clip_norm": None,
        "sampling_rate": None,
        "steps": None,
        "seeded": None,
        "summary": (
            f"{plain}\n\nTechnical record:\nNo differential privacy: "
            f"{type(estimator).__name__} is not a private estimator."
        ),
        "caveats": [],
        "extra": extra,
    }


def _default_metrics(final, y_pred, has_labels):
    """Metrics suited to the estimator type and to whether labels are known."""
    if not is_classifier(final):
        metrics = {"mean_prediction": _mean_prediction}
        if has_labels:
            metrics = {
                "mean_squared_error": mean_squared_error,
                "mean_absolute_error": mean_absolute_error,
                **metrics,
            }
        return {**metrics, "count": count}
    classes = getattr(final, "classes_", np.unique(y_pred))
    metrics = {"accuracy": accuracy_score} if has_labels else {}
    if len(classes) == 2:
        positive = classes[1]
        metrics["selection_rate"] = partial(selection_rate, pos_label=positive)
        if has_labels:
            metrics["true_positive_rate"] = partial(
                true_positive_rate, pos_label=positive
            )
            metrics["false_positive_rate"] = partial(
                false_positive_rate, pos_label=positive
            )
    metrics["count"] = count
    return metrics


def _mean_prediction(y_true, y_pred):
    return float(np.mean(y_pred))


# Columns of ModelReport.to_frame that a metric of the same name would
# overwrite: a metric called "epsilon" would replace the guarantee.
_RESERVED_COLUMNS = frozenset(
    [
        *_PRIVACY_FIELDS,
        "private",
        "seeded",
        "demographic_parity_difference",
        "equalized_odds_difference",
    ]
)


def _check_metrics(metrics):
    """Refuse metrics that are not named callables, or whose names are columns."""
    if not isinstance(metrics, dict) or not all(map(callable, metrics.values())):
        raise TypeError("metrics must be a dict mapping names to callables.")
    # to_frame adds "<name>_difference" for each metric: one metric must not
    # be named as another's difference either.
    taken = _RESERVED_COLUMNS | {f"{name}_difference" for name in metrics}
    clashing = sorted(str(name) for name in metrics if name in taken)
    if clashing:
        raise ValueError(
            f"metrics has names {clashing} that are columns of the report's "
            f"to_frame; rename them (reserved: {sorted(_RESERVED_COLUMNS)} and "
            "'<metric>_difference')."
        )


def _metrics_of(estimator, final, X, y, sensitive_features, metrics):
    """(MetricFrame or None, overall dict) of the predictions on ``X``."""
    if metrics is not None:
        _check_metrics(metrics)
    y_pred = np.asarray(estimator.predict(X))
    has_labels = y is not None
    if has_labels:
        check_consistent_length(y_pred, y)
        y_true = np.asarray(y)
    else:
        if metrics is not None:
            raise ValueError("metrics need the true labels or targets y.")
        # The default metrics without labels read the predictions only.
        y_true = y_pred
    if metrics is None:
        metrics = _default_metrics(final, y_pred, has_labels)
    if sensitive_features is None:
        overall = {name: metric(y_true, y_pred) for name, metric in metrics.items()}
        return None, overall
    # Rows counted as the package's estimators count them: a dict's columns,
    # not its keys; a scalar is no column.
    n_rows, _ = sensitive_features_shape(sensitive_features)
    if n_rows is None:
        raise ValueError(
            "sensitive_features must be 1-D or 2-D with one value (or one row "
            "of values) per row of X: an array, a Series, a DataFrame or a "
            "dict of equal-length columns; got an object of type "
            f"{type(sensitive_features).__name__}."
        )
    if n_rows != len(y_pred):
        raise ValueError(
            f"sensitive_features has {n_rows} rows but X has {len(y_pred)}."
        )
    frame = MetricFrame(
        metrics=metrics,
        y_true=y_true,
        y_pred=y_pred,
        sensitive_features=sensitive_features,
    )
    return frame, dict(frame.overall)


def _format_value(value):
    """Four significant digits; whole numbers (counts) in full."""
    if isinstance(value, (float, np.floating)):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.4g}"
    return str(value)
