#!/usr/bin/env python3
"""Generate the raw seed CSVs of the acme_sf example project (stdlib only, deterministic).

    python scripts/generate_seeds.py [--out seeds]

Same output on every run and every platform: a fixed-seed linear congruential generator (not
`random`), fixed epoch dates, '\\n' line endings. The data deliberately carries the mess the models
clean up: mixed-case statuses and emails, empty strings, 'free'/'N/A' in numeric text columns,
DD/MM/YYYY date text, late-arriving duplicate order versions, JSON arrays/objects as text.
"""
from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
from pathlib import Path


class Lcg:
    """Numerical Recipes LCG; deterministic everywhere."""

    def __init__(self, seed: int):
        self.state = seed & 0xFFFFFFFF

    def next(self) -> int:
        self.state = (1664525 * self.state + 1013904223) & 0xFFFFFFFF
        return self.state

    def below(self, n: int) -> int:
        return (self.next() >> 8) % n

    def pick(self, seq):
        return seq[self.below(len(seq))]

    def chance(self, pct: int) -> bool:
        return self.below(100) < pct


FIRST = ["ada", "Grace", "ALAN", "Edsger", "barbara", "Donald", "Katherine", "Linus", "Margaret", "Ken",
         "Frances", "John", "Radia", "Tim", "Shafi", "Leslie", "Hedy", "Dennis", "Sophie", "Guido"]
LAST = ["Lovelace", "Hopper", "turing", "Dijkstra", "Liskov", "KNUTH", "Johnson", "Torvalds", "Hamilton",
        "Thompson", "Allen", "Backus", "Perlman", "Berners-Lee", "Goldwasser", "Lamport", "Lamarr",
        "Ritchie", "Wilson", "van Rossum"]
COUNTRIES = ["us", "US", "Us", "ca", "CA", "gb", "GB", "de", "fr"]
TAGS = ["vip", "newsletter", "wholesale", "beta", "churn_risk", "student"]
CATEGORIES = [("Hardware", "Widgets"), ("Hardware", "Gadgets"), ("Software", "Licenses"),
              ("Software", "Subscriptions"), ("Services", "Support"), ("Services", "Training")]
ADJ = ["Basic", "Pro", "Ultra", "Mini", "Max", "Eco", "Smart", "Classic"]
STATUSES = ["completed", "Completed", "COMPLETED", "shipped", "Shipped", "returned", "Returned",
            "pending", "cancelled"]
DEVICES = ["mobile", "desktop", "tablet"]
SOURCES = ["google", "newsletter", "direct", "partner"]
EVENT_TYPES = ["page_view", "add_to_cart", "wishlist"]

N_CUSTOMERS = 80
N_PRODUCTS = 24
N_ORDERS = 220
N_EVENTS = 300
BASE = dt.datetime(2024, 1, 1, 0, 0, 0)


def ts(value: dt.datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S")


def customers(r: Lcg) -> list[dict]:
    rows = []
    for cid in range(1, N_CUSTOMERS + 1):
        first, last = FIRST[(cid * 7) % len(FIRST)], LAST[(cid * 3) % len(LAST)]
        if r.chance(8):
            email = ""
        else:
            email = f"{first}.{last}{cid}@Example.COM" if r.chance(40) else f"{first.lower()}.{last.lower()}{cid}@example.com"
            email = email.replace(" ", "")
        signup = dt.date(2022, 6, 1) + dt.timedelta(days=r.below(570))
        birth = "" if r.chance(10) else ("unknown" if r.chance(5) else
                                         (dt.date(1960, 1, 1) + dt.timedelta(days=r.below(15000))).isoformat())
        ntags = r.below(4) if cid % 9 else 0
        tags = sorted({r.pick(TAGS) for _ in range(ntags)})
        tags_text = "" if cid % 17 == 0 else json.dumps(tags)
        referred = str(r.below(cid - 1) + 1) if cid > 5 and r.chance(25) else ""
        rows.append({
            "customer_id": cid, "first_name": first, "last_name": last, "email": email,
            "signup_date": signup.strftime("%d/%m/%Y"), "birth_date": birth,
            "country_code": r.pick(COUNTRIES), "tags": tags_text, "referred_by_customer_id": referred,
        })
    return rows


def products(r: Lcg) -> list[dict]:
    rows = []
    for pid in range(1, N_PRODUCTS + 1):
        cat, sub = CATEGORIES[(pid - 1) % len(CATEGORIES)]
        price = "N/A" if pid in (7, 19) else ("" if pid == 23 else f"{5 + r.below(19500) / 100:.2f}")
        rows.append({
            "product_id": pid, "product_name": f"{ADJ[pid % len(ADJ)]} {sub.rstrip('s')} {pid:02d}",
            "category_path": f"{cat} > {sub}", "list_price": price,
            "is_active": "N" if pid % 11 == 0 else "Y",
        })
    return rows


def orders(r: Lcg) -> list[dict]:
    rows = []
    for oid in range(1, N_ORDERS + 1):
        cid = 1 + r.below(N_CUSTOMERS - 6)            # the last customers never order
        ordered = BASE + dt.timedelta(minutes=r.below(300 * 24 * 60))
        status = r.pick(STATUSES)
        fee = r.pick(["4.99", "9.99", "0", "", "free", "12.50"])
        coupon = r.pick(["", "", "", "WELCOME10", "SPRING", "VIP20"])
        shipped = "" if status.lower() in ("pending", "cancelled") else ts(ordered + dt.timedelta(hours=6 + r.below(200)))
        loaded = ordered + dt.timedelta(hours=1)
        base = {"order_id": oid, "customer_id": cid, "ordered_at_utc": ts(ordered), "status": status,
                "shipping_fee": fee, "coupon_code": coupon, "shipped_at_utc": shipped, "_loaded_at": ts(loaded)}
        if oid % 6 == 0:
            # a stale earlier version of the same order (loaded first, superseded later)
            rows.append({**base, "status": "pending", "shipped_at_utc": "", "_loaded_at": ts(loaded - dt.timedelta(minutes=30))})
        rows.append(base)
    return rows


def order_items(r: Lcg) -> list[dict]:
    rows = []
    item_id = 0
    for oid in range(1, N_ORDERS + 1):
        used = set()
        for _ in range(1 + r.below(4)):
            pid = 1 + r.below(N_PRODUCTS)
            if pid in used:
                continue
            used.add(pid)
            item_id += 1
            disc = "" if r.chance(60) else r.pick(["0.05", "0.10", "0.15", "0.25"])
            rows.append({"order_item_id": item_id, "order_id": oid, "product_id": pid,
                         "quantity": 1 + r.below(5), "discount_pct": disc})
    return rows


def events(r: Lcg) -> list[dict]:
    rows = []
    for eid in range(1, N_EVENTS + 1):
        items = [{"product_id": 1 + r.below(N_PRODUCTS), "qty": 1 + r.below(3)} for _ in range(1 + r.below(3))]
        payload = {"device": r.pick(DEVICES), "items": items}
        if r.chance(70):
            payload["utm"] = {"source": r.pick(SOURCES), "campaign": f"c{1 + r.below(5)}"}
        rows.append({
            "event_id": eid, "customer_id": 1 + r.below(N_CUSTOMERS),
            "event_type": r.pick(EVENT_TYPES),
            "occurred_at_utc": ts(BASE + dt.timedelta(seconds=r.below(300 * 86400))),
            "payload": json.dumps(payload, separators=(",", ":")),
        })
    return rows


def write(path: Path, rows: list[dict]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "seeds"))
    out = Path(ap.parse_args().out)
    out.mkdir(parents=True, exist_ok=True)
    tables = {
        "raw_customers": customers(Lcg(11)),
        "raw_products": products(Lcg(22)),
        "raw_orders": orders(Lcg(33)),
        "raw_order_items": order_items(Lcg(44)),
        "raw_events": events(Lcg(55)),
    }
    for name, rows in tables.items():
        write(out / f"{name}.csv", rows)
        print(f"{name}: {len(rows)} rows")


if __name__ == "__main__":
    main()
