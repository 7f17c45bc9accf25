"""FX rates: the European Central Bank's euro reference rates (public, no key), one XML file a working day."""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET

from gpuplan.market.source import Fetched, Request
from gpuplan.types import FxRate

ECB_DAILY = "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml"
ECB_DOC = ("https://www.ecb.europa.eu/stats/policy_and_exchange_rates/euro_reference_exchange_rates/html/"
           "index.en.html")
_NS = "{http://www.ecb.int/vocabulary/2002-08-01/eurofxref}"
QUOTES = ("USD", "CNY")  # 1 EUR = rate units of each


def fetch_ecb(req: Request) -> Fetched:
    f = req.fetcher
    text = f.text(ECB_DAILY)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise f.malformed(ECB_DAILY, f"not XML ({exc})") from None
    day = root.find(f"{_NS}Cube/{_NS}Cube[@time]")
    if day is None:
        raise f.malformed(ECB_DAILY, "no <Cube time=…> element")
    try:
        date = dt.date.fromisoformat(day.attrib["time"])
        rates = {c.attrib["currency"]: float(c.attrib["rate"]) for c in day.findall(f"{_NS}Cube")}
    except (KeyError, ValueError) as exc:
        raise f.malformed(ECB_DAILY, f"a rate or date cannot be read ({exc})") from None
    missing = [q for q in QUOTES if not rates.get(q, 0) > 0]
    if missing:
        raise f.malformed(ECB_DAILY, f"no positive rate for {', '.join(missing)}")
    source = f"ECB euro foreign exchange reference rate of {date.isoformat()} ({ECB_DAILY})"
    return Fetched(fx=[FxRate(date, "EUR", q, rates[q], source) for q in QUOTES], source_url=ECB_DAILY)
