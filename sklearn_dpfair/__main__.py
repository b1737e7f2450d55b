# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import sys

from ._cli import main

if __name__ == "__main__":
    sys.exit(main())
