# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""What a fitted private estimator records about its guarantee."""

import math
from dataclasses import asdict, dataclass, field


from ..exceptions import PrivacyBudgetError
from ._accounting import epsilon_of, holds
from ._random_allocation import RandomAllocationDpEvent
from ._counts import adjacency_text

__all__ = [
    "ADJACENCY_CONVERSION",
    "NON_PRIVATE_LIMIT",
    "PUBLIC_ROWS_CAVEAT",
    "SEEDED_TEXT",
    "WEIGHTS_CAVEAT",
    "PrivacyRecord",
    "check_budget",
    "plain_language",
    "weights_caveats",
]

#: How a record at ``epsilon=inf`` introduces what the fit ran (the exact
#: statistics, no noise), rather than the private mechanism it stands for:
#: the records of the private transformers and of the metric frame.
NON_PRIVATE_LIMIT = "non-private limit (epsilon=inf, no noise): "

#: What the summary of a seeded fit says (also used by the report).
SEEDED_TEXT = (
    "Seeded fit: the noise is reproducible from random_state, so this is not "
    "a private release (the guarantee above holds only while the seed stays "
    "secret and is used for no other fit); refit with random_state=None to "
    "release."
)

#: The caveat of every weighted fit (weights not all 1), whatever the
#: estimator or solver (:func:`weights_caveats`). An estimator cannot know where
#: its weights came from: a reduction such as fairlearn's ExponentiatedGradient
#: computes them from the private labels and groups of every record, so one
#: record then moves every weight, which no per-record guarantee covers.
WEIGHTS_CAVEAT = (
    "sample_weight is public: the weights are treated as public inputs and "
    "used as given, so the guarantee protects one record with its own weight "
    "while every other record keeps its weight; weights computed from the "
    "private data (for example fairlearn's ExponentiatedGradient reweighting "
    "by the private labels and groups) change with every record and are "
    "outside the guarantee"
)

#: The caveat of a fit that reads rows declared public (``public_mask``):
#: semi-private learning protects the private rows only.
PUBLIC_ROWS_CAVEAT = (
    "the rows marked public in public_mask are not protected: only the "
    "private rows are"
)

# Slack when comparing a spent epsilon with the budget: a calibrated sigma is
# certified by the accountant, so this only absorbs float round-off (e.g. when
# a user passes the calibrated noise multiplier back in).
_BUDGET_RTOL = 1e-9


#: How a replace-one guarantee compares with an add/remove one. A replacement
#: is a removal followed by an addition, so group privacy for two records
#: (Dwork and Roth 2014, Theorem 2.2, with delta) turns add/remove
#: (eps, delta) into replace-one (2 eps, (1 + e^eps) delta); nothing turns
#: replace-one into add/remove, since it bounds datasets of one size only.
ADJACENCY_CONVERSION = (
    "Comparing adjacencies: add/remove (eps, delta) implies replace-one "
    "(2 eps, (1 + e^eps) delta), so an add/remove fit at epsilon e compares "
    "with a replace-one fit at 2e. Replace-one (eps, delta) bounds only "
    "datasets of the same size: it protects against changing a record, but "
    "does not by itself hide whether a record is present when n is public, "
    "and implies no add/remove guarantee."
)

# What "one record" is compared against, in plain words, per adjacency.
_PLAIN_NEIGHBOUR = {
    "add_remove": "than if it had been left out",
    "replace_one": "than if it had been replaced by any other record",
}


# Who is protected and what is released, in plain words, per kind of release:
# a fitted model protects its training records; a private evaluation (noisy
# per-group counts of predictions) protects the evaluated records.
_SUBJECTS = {
    "training": {
        "record": "training record",
        "holds": "features, label or target, sensitive group and sample weight",
        "release": "the released model or its outputs",
        "step": "training",
    },
    "evaluation": {
        "record": "evaluation record",
        "holds": "sensitive group, true label and the model's prediction",
        "release": "the released metrics",
        "step": "evaluation",
    },
}


def plain_language(
    epsilon, delta, adjacency, caveats=(), seeded=False, subject="training"
):
    """The guarantee in two or three plain sentences, for a non-specialist.

    What is protected and against whom, what is public, what is not
    covered. Shared by :meth:`PrivacyRecord.plain_language` and the report
    of estimators that set their privacy attributes without a record.

    Parameters
    ----------
    epsilon, delta : float
        The guarantee.
    adjacency : str or None
        The neighbouring relation (``"add_remove"`` or ``"replace_one"``).
    caveats : sequence of str, default=()
        The record's caveats.
    seeded : bool, default=False
        Whether the fit's noise is reproducible from a seed.
    subject : {"training", "evaluation"}, default="training"
        What the release is: a model fitted on the records, or metrics of
        predictions on them (what a record holds and what is released).

    Returns
    -------
    text : str
        One paragraph.

    Examples
    --------
    >>> from sklearn_dpfair.privacy._record import plain_language
    >>> print(plain_language(1.0, 1e-5, "add_remove"))  # doctest: +ELLIPSIS
    In plain words: each training record (one person's features, ...
    >>> print(plain_language(1.0, 1e-5, "add_remove", subject="evaluation"))
    ... # doctest: +ELLIPSIS
    In plain words: each evaluation record (one person's sensitive group, ...
    """
    words = _SUBJECTS[subject]
    record = words["record"]
    if math.isinf(epsilon):
        released = words["release"].split(" or ")[0]
        return (
            "In plain words: this fit is not differentially private "
            f"(epsilon = inf), so {released} may reveal any {record}."
        )
    neighbour = _PLAIN_NEIGHBOUR.get(adjacency, "than if it had been changed")
    public_rows = PUBLIC_ROWS_CAVEAT in caveats
    which = f"each private {record}" if public_rows else f"each {record}"
    protected = (
        f"In plain words: {which} (one person's {words['holds']}) is "
        f"protected against anyone who sees {words['release']}, who can learn "
        f"little more about it {neighbour} (epsilon = {epsilon:.3g}, delta = "
        f"{delta:.3g}; a smaller epsilon is stronger)."
    )
    public = (
        "Public, and not protected: "
        + ("the rows marked public, " if public_rows else "")
        + "the parameters declared to the estimator (such as epsilon, delta, "
        f"the label set, the groups and the bounds) and the number of {record}s."
    )
    not_covered = [f"the checks of the input before {words['step']}"]
    others = [c for c in caveats if c not in (WEIGHTS_CAVEAT, PUBLIC_ROWS_CAVEAT)]
    if WEIGHTS_CAVEAT in caveats:
        not_covered.append(
            "sample weights computed from the private data (weights are taken "
            "as given)"
        )
    if adjacency == "replace_one":
        not_covered.append(
            "whether a record is present at all (the guarantee is for "
            "replacing a record; the number of records is public)"
        )
    if others:
        not_covered.append(
            f"the {len(others)} further caveat{'s' if len(others) > 1 else ''} "
            "listed below"
        )
    if len(not_covered) > 1:
        listed = ", ".join(not_covered[:-1]) + " and " + not_covered[-1]
    else:
        listed = not_covered[0]
    covered = f"Not covered: {listed}."
    if seeded:
        covered = covered[:-1] + (
            "; and this fit was seeded, so it is not a private release."
        )
    return " ".join((protected, public, covered))


@dataclass(frozen=True)
class PrivacyRecord:
    """The privacy guarantee of one fit, enough for an auditor to recompute it.

    Parameters
    ----------
    epsilon, delta : float
        The (epsilon, delta) spent, as computed by ``accountant`` from
        ``dp_event``.
    adjacency : {"add_remove", "replace_one"}
        The neighbouring relation the guarantee is stated for.
    accountant : {"rdp", "pld"}
        The dp-accounting accountant that computed ``epsilon``.
    dp_event : dp_accounting.DpEvent
        Description of the mechanism.
    mechanism : str
        Human-readable name of the mechanism.
    noise_multiplier : float or None
        Noise standard deviation in units of the sensitivity; None when no
        single multiplier describes the fit (a private pipeline's steps, a
        planned record of several mechanisms): ``dp_event`` does.
    clip_norm : float or None
        Per-record sensitivity (clip threshold) of each released sum.
    sampling_probability : float or None
        Poisson sampling rate of each step.
    steps : int or None
        Number of noisy releases composed.
    caveats : tuple of str
        Quantities read from the private data that the guarantee does not cover.
    seed : str or None, default=None
        Fingerprint of the seed of a seeded fit (``random_state`` not None,
        see :func:`~sklearn_dpfair.privacy.check_noise_generator`): its noise
        is reproducible from the seed, so the fit is not a private release,
        and fits with the same fingerprint drew the same noise. None when
        the noise came from fresh OS entropy.
    declared_counts : tuple of (str, int) pairs, default=()
        Counts the fit took as declared public values instead of reading
        them from the data (e.g. ``(("n_private", 1000),)``); empty: the
        counts are read from the data, treated as public under add/remove
        (:mod:`~sklearn_dpfair.privacy._counts`).
    additional_delta : float, default=0.0
        Delta spent outside ``dp_event`` and added by the union bound (the
        threshold of a private category discovery): the fit is
        ``(epsilon, delta + additional_delta)``-DP, which the plain-language
        and technical texts state; ``delta`` is what the accountant was
        given for ``dp_event``.

    Examples
    --------
    >>> from sklearn_dpfair.privacy import PrivacyRecord
    >>> from sklearn_dpfair.privacy._accounting import noisy_sgd_event
    >>> rec = PrivacyRecord.from_event(
    ...     noisy_sgd_event(1.0, 0.01, 100), delta=1e-5, adjacency="add_remove",
    ...     accountant="rdp", mechanism="DP-SGD", noise_multiplier=1.0,
    ...     clip_norm=1.0, sampling_probability=0.01, steps=100)
    >>> round(rec.epsilon, 2) == round(rec.recompute_epsilon(), 2)
    True
    """

    epsilon: float
    delta: float
    adjacency: str
    accountant: str
    dp_event: object
    mechanism: str
    noise_multiplier: float | None
    clip_norm: float | None = None
    sampling_probability: float | None = None
    steps: int | None = None
    caveats: tuple = field(default_factory=tuple)
    seed: str | None = None
    declared_counts: tuple = field(default_factory=tuple)
    additional_delta: float = 0.0

    @classmethod
    def from_event(cls, dp_event, *, delta, accountant, **kwargs):
        """Build a record, computing epsilon from the event with the accountant."""
        epsilon = epsilon_of(dp_event, delta, accountant)
        return cls(
            epsilon=epsilon,
            delta=delta,
            accountant=accountant,
            dp_event=dp_event,
            **kwargs,
        )

    @property
    def total_delta(self):
        """The delta of the guarantee: ``delta + additional_delta``."""
        return self.delta + self.additional_delta

    @property
    def seeded(self):
        """Whether the noise is reproducible from a seed (not a release)."""
        return self.seed is not None

    def plain_language(self):
        """The guarantee in two or three plain sentences.

        What is protected and against whom, what is public and what is not
        covered, for a reader who is not a privacy specialist (a
        data-protection officer); :meth:`technical_text` is the rest.

        Returns
        -------
        text : str
            One paragraph.
        """
        return plain_language(
            self.epsilon, self.total_delta, self.adjacency, self.caveats, self.seeded
        )

    def technical_text(self):
        """The technical record: guarantee, adjacency, mechanism, noise, caveats.

        Returns
        -------
        text : str
            One statement per line.
        """
        if math.isinf(self.epsilon):
            head = "No differential privacy (epsilon = inf): non-private fit."
        else:
            head = (
                f"({self.epsilon:.4g}, {self.total_delta:.3g})-differential "
                "privacy with respect to "
                f"{adjacency_text(self.adjacency, self.declared_counts)}."
            )
        lines = [head]
        if self.additional_delta and not math.isinf(self.epsilon):
            lines.append(
                f"Delta: {self.delta:.3g} for the accounted event and "
                f"{self.additional_delta:.3g} spent outside it (union bound)."
            )
        if self.adjacency == "replace_one" and not math.isinf(self.epsilon):
            lines.append(ADJACENCY_CONVERSION)
        if self.seeded and not math.isinf(self.epsilon):
            # A non-private fit has no guarantee for a seed to void.
            lines.append(SEEDED_TEXT)
        lines.append(f"Mechanism: {self.mechanism}.")
        if self.noise_multiplier:
            detail = f"Noise multiplier {self.noise_multiplier:.4g}"
            if self.clip_norm is not None:
                detail += f" x sensitivity {self.clip_norm:.4g}"
            if self.sampling_probability is not None:
                detail += f", Poisson sampling rate {self.sampling_probability:.4g}"
            if self.steps is not None:
                detail += f", {self.steps} steps"
            lines.append(detail + ".")
        if self.delta == 0 and not math.isinf(self.epsilon):
            lines.append(
                "Pure epsilon-DP: the epsilons of the Laplace releases add up "
                "(exact at delta = 0, which dp-accounting does not state)."
            )
        elif holds(self.dp_event, RandomAllocationDpEvent):
            # dp-accounting has no random-allocation event: its PLD comes
            # from pld-accounting (Feldman and Shenfeld, 2026).
            lines.append("Accounted with pld-accounting (the random-allocation PLD).")
        else:
            lines.append(f"Accounted with dp-accounting ({self.accountant.upper()}).")
        for caveat in self.caveats:
            if "guarantee" in caveat or "not protected" in caveat:
                lines.append(f"Caveat: {caveat}.")
            else:
                lines.append(f"Caveat: {caveat} (not covered by the guarantee).")
        return "\n".join(lines)

    def recompute_epsilon(self):
        """Recompute epsilon from ``dp_event`` with dp-accounting.

        Returns
        -------
        epsilon : float
            What the accountant gives for ``dp_event`` at ``delta``.
        """
        return epsilon_of(self.dp_event, self.delta, self.accountant)

    def to_dict(self):
        """The record as a plain dict (the event as its repr).

        Returns
        -------
        record : dict
            One entry per field.
        """
        d = asdict(self)
        d["dp_event"] = repr(self.dp_event)
        d["caveats"] = list(self.caveats)
        return d

    def __str__(self):
        return f"{self.plain_language()}\n\nTechnical record:\n{self.technical_text()}"


def weights_caveats(sample_weight):
    """The weights caveat when ``sample_weight`` weights the fit.

    Parameters
    ----------
    sample_weight : array-like of shape (n_samples,) or None
        The weights passed to ``fit`` (or None).

    Returns
    -------
    caveats : tuple of str
        ``(WEIGHTS_CAVEAT,)`` whenever weights are passed, whatever their
        values: the record is released, so what it says may depend on the
        caller's choice to pass weights (public) but never on the weights a
        record brings (weights all 1 except one record's would otherwise
        tell its neighbours apart).

    Examples
    --------
    >>> from sklearn_dpfair.privacy._record import weights_caveats
    >>> weights_caveats(None)
    ()
    >>> weights_caveats([1.0, 1.0])[0].startswith("sample_weight is public")
    True
    """
    if sample_weight is None:
        return ()
    return (WEIGHTS_CAVEAT,)


def check_budget(record, epsilon, *, calibrated):
    """Raise :class:`PrivacyBudgetError` if ``record`` spends more than ``epsilon``.

    Parameters
    ----------
    record : PrivacyRecord
        The guarantee of the fit.
    epsilon : float
        The budget.
    calibrated : bool
        Whether the library chose the noise itself (then overspending is a
        bug) or the user passed ``noise_multiplier`` (then the message says
        how to fix the parameters).

    Examples
    --------
    >>> from sklearn_dpfair.privacy._accounting import gaussian_event
    >>> from sklearn_dpfair.privacy._record import PrivacyRecord, check_budget
    >>> record = PrivacyRecord.from_event(
    ...     gaussian_event(5.0), delta=1e-5, accountant="rdp",
    ...     adjacency="add_remove", mechanism="Gaussian", noise_multiplier=5.0)
    >>> check_budget(record, 2.0, calibrated=False)  # within budget: silent
    """
    if record.epsilon <= epsilon * (1 + _BUDGET_RTOL):
        return
    if calibrated:
        raise PrivacyBudgetError(
            f"The fit spends epsilon={record.epsilon:.6g}, more than the budget "
            f"{epsilon:g}; this is a bug, please report it."
        )
    raise PrivacyBudgetError(
        f"The requested noise_multiplier={record.noise_multiplier:.4g} spends "
        f"epsilon={record.epsilon:.4g}, more than the budget epsilon={epsilon:g}."
        " Raise noise_multiplier or epsilon, or leave noise_multiplier=None "
        "to calibrate it."
    )
