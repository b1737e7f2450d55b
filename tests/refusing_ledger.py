# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""A privacy ledger that refuses every fit, as a remote copy of one cannot record."""

from sklearn_dpfair.exceptions import PrivacyAccountingError
from sklearn_dpfair.privacy import PrivacyLedger


class RefusingLedger(PrivacyLedger):
    """A ledger that cannot record this fit's event (as a remote copy cannot)."""

    def check_recordable(self, dp_event, *, adjacency="add_remove"):
        raise PrivacyAccountingError("this ledger refuses the fit")
