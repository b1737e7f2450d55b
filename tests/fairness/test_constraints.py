# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import numpy as np
import pytest

from sklearn_dpfair.fairness import (
    DemographicParity,
    EqualizedOdds,
    EqualOpportunity,
    make_constraint,
)

Y = np.array([0, 1, 2, 1, 1, 0])


def test_demographic_parity_one_block():
    c = DemographicParity()
    assert c.n_blocks(3) == 1
    assert c.block_index(Y).tolist() == [0] * 6
    assert c.block_weights(np.array([1.0])).tolist() == [1.0]


@pytest.mark.parametrize("weighting", ["label_prior", "uniform"])
def test_equalized_odds_blocks_and_weights(weighting):
    c = EqualizedOdds(weighting=weighting)
    assert c.n_blocks(3) == 3
    assert c.block_index(Y).tolist() == Y.tolist()
    freq = np.bincount(Y) / Y.size
    w = c.block_weights(freq)
    # freq_b * w_b must be p_Y (expectation form) or 1/l (uniform mean).
    expected = freq if weighting == "label_prior" else np.full(3, 1 / 3)
    np.testing.assert_allclose(freq * w, expected)


def test_equal_opportunity_selects_the_advantaged_class():
    c = EqualOpportunity(class_index=2)
    assert c.block_index(Y).tolist() == [-1, -1, 0, -1, -1, -1]
    np.testing.assert_allclose(c.block_weights(np.array([0.25])), [4.0])


def test_make_constraint():
    assert isinstance(make_constraint("demographic_parity"), DemographicParity)
    assert make_constraint("equalized_odds", weighting="uniform").weighting == "uniform"
    assert make_constraint("equal_opportunity", class_index=0).class_index == 0
    with pytest.raises(ValueError, match="advantaged class"):
        make_constraint("equal_opportunity")
    with pytest.raises(ValueError, match="constraint must be"):
        make_constraint("parity")
    with pytest.raises(ValueError, match="weighting"):
        EqualizedOdds(weighting="prior")


def test_advantaged_class_index():
    from sklearn_dpfair.fairness._constraints import advantaged_class_index

    assert advantaged_class_index(np.array([0, 1]), None) == 1
    assert advantaged_class_index(np.array(["a", "b", "c"]), "c") == 2
    with pytest.raises(ValueError, match="more than two classes"):
        advantaged_class_index(np.array([0, 1, 2]), None)
    # One class has no second to take: the message names what to declare.
    with pytest.raises(ValueError, match=r"fewer than two classes.*labels=\["):
        advantaged_class_index(np.array([1]), None, parameter="labels")
    with pytest.raises(ValueError, match="is not one of the classes"):
        advantaged_class_index(np.array([0, 1]), 5)


@pytest.mark.parametrize("name", ["demographic_parity", "equal_opportunity"])
@pytest.mark.parametrize("weighting", ["prior", None, ["uniform"]])
def test_weighting_is_checked_for_every_notion(name, weighting):
    # Demographic parity and equal opportunity ignore the weighting: a typo
    # there was accepted silently, by ermi_score and the 'ermi' scorer too.
    from sklearn_dpfair.metrics import ermi_score

    with pytest.raises(ValueError, match="weighting must be"):
        make_constraint(name, class_index=1, weighting=weighting)
    y = np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match="weighting must be"):
        ermi_score(
            y,
            y,
            sensitive_features=np.array([0, 0, 1, 1]),
            constraint=name,
            labels=[0, 1],
            weighting=weighting,
        )


@pytest.mark.parametrize("given", [[1], (1,), np.array([1]), [0, 1]])
def test_opportunity_class_is_one_label(given):
    # classes == [1] broadcast: a one-element list was taken as the label 1.
    from sklearn_dpfair.fairness._constraints import advantaged_class_index

    with pytest.raises(ValueError, match="opportunity_class must be a single label"):
        advantaged_class_index(np.array([0, 1]), given)
    assert advantaged_class_index(np.array([0, 1]), np.int64(1)) == 1
