"""Market data fetched at run time: ``gpuplan refresh`` pulls current prices and FX rates from providers' public
price APIs into a local SQLite store (:mod:`gpuplan.market.store`) with full history; the catalog overlays the
newest refreshed rows on the bundled ones (:mod:`gpuplan.market.overlay`). Nothing else here needs the network.
"""

import os

OFFLINE_ENV = "GPUPLAN_OFFLINE"  # set: nothing may use the network (the test suite sets it)
NOT_OFFLINE = ("", "0", "false", "no", "off")  # values of it that leave the network allowed


def is_offline() -> bool:
    """Whether GPUPLAN_OFFLINE forbids the network: set to anything but '', 0, false, no or off."""
    return os.environ.get(OFFLINE_ENV, "").strip().lower() not in NOT_OFFLINE
