"""China compliance checklist for a serving plan: the rules that apply when the users are in mainland China.

The items are data (``gpuplan/data/compliance_cn.csv``, each with its issuing authority, dates and source).
A plan carries the checklist when its market is ``cn`` or its users are (``--users cn``). An item whose
``plan_effect`` is ``export`` applies to the plan itself when any of the fleet runs outside mainland China:
the users' prompts and logs then leave the country. No listed item obliges every generative service to run in
mainland China (storage in mainland is required of critical-infrastructure operators and processors above the
CAC's volume thresholds, which a planner cannot tell), so gpuplan does not restrict the offers: it says which
rules apply and how to plan in mainland China (``--market cn``). Information with sources, not legal advice.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuplan.catalog.csvload import Column, read_table
from gpuplan.errors import CatalogError
from gpuplan.types import Market

DATA_FILE = Path(__file__).resolve().parent.parent / "data" / "compliance_cn.csv"
USERS = ("cn", "global")
EFFECTS = ("none", "export")
COLUMNS = (Column("id", required=True), Column("name_zh", required=True), Column("name_en", required=True),
           Column("authority_zh", required=True), Column("authority_en", required=True),
           Column("title", required=True), Column("issued", "date", True), Column("in_force", "date", True),
           Column("source", required=True), Column("date_checked", "date", True),
           Column("verification", "enum", True, ("read-at-source", "secondhand")),
           Column("asks_zh", required=True), Column("asks_en", required=True),
           Column("plan_effect", "enum", True, EFFECTS), Column("notes"))
DISCLAIMER_EN = ("Information with sources, not legal advice: check the current texts and your own obligations "
                 "with counsel before launch.")
DISCLAIMER_ZH = "以下为附来源的信息，不构成法律意见：上线前请对照现行原文并咨询法律专业人士确认自身义务。"
EXPORT_EN = ("Part of the fleet runs outside mainland China while the users are in it: their prompts and logs can "
             "count as outbound data, so the data-export rules apply (PIPL art. 38-40: separate consent and a security "
             "assessment, certification or the standard contract). To keep the data in mainland China, plan with "
             "--market cn.")
EXPORT_ZH = ("部分机群部署在境外而用户在境内：用户的提示词和日志可能构成出境数据，适用数据出境规则"
             "（个人信息保护法第三十八至四十条：单独同意，并通过安全评估、认证或标准合同之一）。"
             "如需数据留在境内，请用 --market cn 规划。")


@dataclass(frozen=True, slots=True)
class Item:
    """One rule of the checklist, as the data file gives it."""

    id: str
    name_zh: str
    name_en: str
    authority_zh: str
    authority_en: str
    title: str
    issued: str
    in_force: str
    source: str
    date_checked: str
    verification: str
    asks_zh: str
    asks_en: str
    plan_effect: str
    notes: str = ""


@dataclass(frozen=True, slots=True)
class Checklist:
    """The items for one plan; ``abroad`` names the fleet's places outside mainland China."""

    items: tuple[Item, ...]
    abroad: tuple[str, ...] = ()

    def changes_plan(self, item: Item) -> bool:
        return item.plan_effect == "export" and bool(self.abroad)

    def as_dict(self) -> dict[str, Any]:
        return {"disclaimer": DISCLAIMER_EN, "disclaimer_zh": DISCLAIMER_ZH,
                "abroad": list(self.abroad), "data_export_applies": bool(self.abroad),
                "data_export_note": EXPORT_EN if self.abroad else None,
                "data_export_note_zh": EXPORT_ZH if self.abroad else None,
                "items": [{"id": i.id, "name_zh": i.name_zh, "name_en": i.name_en, "authority_zh": i.authority_zh,
                           "authority_en": i.authority_en, "title": i.title, "issued": i.issued,
                           "in_force": i.in_force, "source": i.source, "date_checked": i.date_checked,
                           "verification": i.verification, "asks_zh": i.asks_zh, "asks_en": i.asks_en,
                           "plan_effect": i.plan_effect, "changes_plan": self.changes_plan(i),
                           "notes": i.notes or None} for i in self.items]}


@functools.cache
def items(path: Path = DATA_FILE) -> tuple[Item, ...]:
    """The checklist's items, read and validated once (a date in force before the date issued is refused)."""
    out = []
    for r in read_table(path, COLUMNS, ["id"], "compliance_cn.csv"):
        v = r.values
        if v["in_force"] < v["issued"]:
            raise CatalogError("compliance_cn.csv", r.line, "in_force", v["in_force"].isoformat(),
                               "the date in force is before the date issued.", "give the dates from the text.")
        dates = {k: v[k].isoformat() for k in ("issued", "in_force", "date_checked")}
        out.append(Item(**{**{c.name: v[c.name] or "" for c in COLUMNS}, **dates}))
    return tuple(out)


def check_users(users: str) -> None:
    from gpuplan.errors import InputError

    if users not in USERS:
        raise InputError("--users", f"'{users}' is not a place of users gpuplan knows.",
                         "use cn (mainland China) or global.")


def checklist(market: str | None, users: str, places: Sequence[tuple[str, str]]) -> Checklist | None:
    """The checklist for a plan in ``market`` for ``users`` whose fleet runs in ``places`` ((market, provider
    and region) per group); None when neither the market nor the users are in mainland China."""
    if market != Market.CN and users != Market.CN:
        return None
    abroad = tuple(sorted({place for m, place in places if m != Market.CN}))
    return Checklist(items(), abroad)
