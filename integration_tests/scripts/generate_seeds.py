#!/usr/bin/env python3
"""Deterministic generator for the acme example project's raw seed CSVs.

Stdlib only, seeded with random.Random(42), fixed calendar (2023-01-01 .. 2024-12-31):
running it twice produces byte-identical files. Output goes to ../seeds/.

The data is deliberately a little messy, the way raw exports are: mixed-case status
strings, a spelling variant ("canceled"), NULL channels/referrers/countries, failed
payment attempts with NULL amounts, refunds, cancelled and returned orders, orders with
no line items, zero-quantity line items, test accounts, and duplicated web events
(same event_id, later _loaded_at). No empty strings other than NULLs, and no values
such as "NA"/"null"/"none" that the seed loader would read as NULL.

Usage: python scripts/generate_seeds.py [--out DIR]
"""
from __future__ import annotations

import argparse
import csv
import random
from datetime import date, datetime, timedelta
from pathlib import Path

START = datetime(2023, 1, 1)
END = datetime(2024, 12, 31, 23, 59, 59)
SIGNUP_START = datetime(2022, 7, 1)

N_CUSTOMERS = 300
N_ORDERS = 1000
N_SUBSCRIPTIONS = 150
N_SESSIONS = 480

FIRST_NAMES = [
    "Ava", "Liam", "Noah", "Emma", "Olivia", "Mia", "Lucas", "Sofia", "Ethan", "Isla",
    "Mateo", "Chloe", "Leo", "Hannah", "Omar", "Priya", "Kenji", "Freya", "Diego", "Nora",
    "Jonas", "Elena", "Amir", "Grace", "Felix", "Zoe", "Hugo", "Maya", "Arjun", "Lena",
]
LAST_NAMES = [
    "Smith", "Garcia", "Müller", "Johnson", "Tanaka", "Silva", "Brown", "Martin", "Rossi",
    "Nguyen", "Kowalski", "Andersson", "Dubois", "Lopez", "Patel", "Kim", "Wilson", "Novak",
    "Fischer", "Moreau", "Santos", "Clarke", "Berg", "Costa", "Murphy",
]
DOMAINS = ["gmail.com", "outlook.com", "yahoo.com", "proton.me", "fastmail.com", "icloud.com"]

# (code, name, region, weight)
COUNTRIES = [
    ("US", "United States", "North America", 30),
    ("CA", "Canada", "North America", 8),
    ("MX", "Mexico", "Latin America", 5),
    ("BR", "Brazil", "Latin America", 5),
    ("GB", "United Kingdom", "Europe", 12),
    ("DE", "Germany", "Europe", 10),
    ("FR", "France", "Europe", 7),
    ("ES", "Spain", "Europe", 4),
    ("NL", "Netherlands", "Europe", 4),
    ("SE", "Sweden", "Europe", 3),
    ("AU", "Australia", "Asia Pacific", 6),
    ("JP", "Japan", "Asia Pacific", 6),
]

SEGMENTS = [("Consumer", 30), ("consumer", 25), ("CONSUMER", 5), ("SMB", 15), ("smb", 8),
            ("Small Business", 5), ("Enterprise", 8), ("enterprise", 4)]
REFERRALS = [("google", 30), ("facebook", 15), ("friend", 15), ("newsletter", 10),
             ("podcast", 5), (None, 25)]

# (name, category, price_cents, cost_ratio)
PRODUCTS = [
    ("Trail Runner 2", "Footwear", 12900, 0.48), ("Road Racer", "Footwear", 14900, 0.50),
    ("Everyday Sneaker", "Footwear", 8900, 0.45), ("Hiking Boot", "Footwear", 17900, 0.52),
    ("Recovery Slide", "Footwear", 3900, 0.40), ("Track Spike", "Footwear", 11900, 0.55),
    ("Merino Tee", "Apparel", 4900, 0.35), ("Rain Shell", "Apparel", 15900, 0.42),
    ("Thermal Tight", "Apparel", 5900, 0.38), ("Running Short", "Apparel", 3900, 0.33),
    ("Fleece Hoodie", "Apparel", 7900, 0.40), ("Wool Sock 3-Pack", "Apparel", 2400, 0.30),
    ("Sun Cap", "Apparel", 2900, 0.28), ("Packable Vest", "Apparel", 9900, 0.44),
    ("Headlamp 400", "Equipment", 4500, 0.50), ("Trekking Poles", "Equipment", 8900, 0.47),
    ("Hydration Vest", "Equipment", 11900, 0.49), ("GPS Watch", "Equipment", 29900, 0.62),
    ("Foam Roller", "Equipment", 3400, 0.36), ("Yoga Mat", "Equipment", 4400, 0.34),
    ("Resistance Bands", "Equipment", 2200, 0.25), ("Kettlebell 12kg", "Equipment", 5900, 0.55),
    ("Water Bottle", "Accessories", 1900, 0.22), ("Gym Bag", "Accessories", 6400, 0.41),
    ("Phone Armband", "Accessories", 1700, 0.26), ("Sunglasses", "Accessories", 8900, 0.30),
    ("Reflective Band", "Accessories", 900, 0.20), ("Blister Kit", "Accessories", 1200, 0.27),
    ("Energy Gel 12-Pack", "Nutrition", 2600, 0.45), ("Protein Bar Box", "Nutrition", 3200, 0.47),
    ("Electrolyte Tabs", "Nutrition", 1400, 0.35), ("Recovery Shake", "Nutrition", 3900, 0.50),
    ("Trail Mix Pouch", "Nutrition", 800, 0.40), ("Caffeine Chews", "Nutrition", 1100, 0.38),
    ("Gift Card 50", "Gift Cards", 5000, 0.00), ("Gift Card 100", "Gift Cards", 10000, 0.00),
    ("Camp Stove", "Equipment", 7900, 0.53), ("Bivy Sack", "Equipment", 21900, 0.58),
    ("Compression Sleeve", "Apparel", 2900, 0.31), ("Insulated Jacket", "Apparel", 24900, 0.46),
]

STATUSES = [("completed", 40), ("Completed", 12), ("COMPLETED", 4), ("delivered", 4),
            ("shipped", 10), ("Shipped", 5), ("cancelled", 4), ("Cancelled", 2),
            ("canceled", 2), ("returned", 5), ("Returned", 2)]
CHANNELS = [("organic", 25), ("paid_search", 25), ("social", 18), ("email", 12),
            ("affiliate", 8), ("Paid_Search", 3), (None, 9)]
PLATFORMS = [("web", 55), ("mobile_app", 35), ("marketplace", 10)]
DISCOUNTS = [(None, 75), ("WELCOME10", 10), ("spring15", 5), ("BFCM25", 6), ("Loyal5", 4)]
DISCOUNT_PCT = {"WELCOME10": 10, "SPRING15": 15, "BFCM25": 25, "LOYAL5": 5}
METHODS = [("credit_card", 42), ("Credit_Card", 6), ("paypal", 16), ("PayPal", 4),
           ("bank_transfer", 12), ("gift_card", 8), ("apple_pay", 12)]
PLANS = {"basic": 900, "pro": 1900, "premium": 4900}
PLAN_SPELLINGS = {"basic": ["basic", "Basic"], "pro": ["pro", "Pro", "PRO"], "premium": ["premium", "Premium"]}
AD_CHANNELS = {"paid_search": (180000, 420000), "social": (90000, 260000),
               "affiliate": (30000, 90000), "email": (8000, 20000)}
DEVICES = [("desktop", 45), ("mobile", 35), ("Mobile", 5), ("tablet", 8), (None, 7)]
UTM = [("google", 35), ("facebook", 15), ("instagram", 10), ("newsletter", 8), (None, 32)]


def pick(rng: random.Random, weighted):
    values = [v for v, _ in weighted]
    weights = [w for _, w in weighted]
    return rng.choices(values, weights=weights, k=1)[0]


def ts(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%d %H:%M:%S")


def rand_between(rng: random.Random, lo: datetime, hi: datetime) -> datetime:
    span = int((hi - lo).total_seconds())
    return lo + timedelta(seconds=rng.randint(0, max(span, 0)))


def write(out: Path, name: str, header: list[str], rows: list[list]) -> int:
    path = out / f"{name}.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        for row in rows:
            w.writerow(["" if v is None else v for v in row])
    return len(rows)


def generate(out: Path) -> dict[str, int]:
    rng = random.Random(42)
    out.mkdir(parents=True, exist_ok=True)
    counts: dict[str, int] = {}

    # ---- reference: countries ------------------------------------------------------
    counts["ref_countries"] = write(
        out, "ref_countries", ["country_code", "country_name", "region"],
        [[c, n, r] for c, n, r, _ in COUNTRIES])

    # ---- customers -----------------------------------------------------------------
    customers = []
    signup_cutoff = datetime(2024, 10, 31)
    for cid in range(1, N_CUSTOMERS + 1):
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        is_test = cid % 37 == 0
        domain = "acme-test.com" if is_test else rng.choice(DOMAINS)
        local = f"{first}.{last}{cid}".replace("ü", "u")
        if rng.random() < 0.2:
            local = local.upper()
        elif rng.random() < 0.6:
            local = local.lower()
        # some accounts predate the two-year window the order data covers
        signup = rand_between(rng, SIGNUP_START, signup_cutoff)
        country = None if rng.random() < 0.04 else pick(rng, [(c, w) for c, _, _, w in COUNTRIES])
        if country is not None and rng.random() < 0.08:
            country = country.lower()
        updated = min(signup + timedelta(days=rng.randint(0, 400), seconds=rng.randint(0, 86399)), END)
        customers.append({
            "customer_id": cid, "first_name": first, "last_name": last,
            "email": f"{local}@{domain}", "country_code": country,
            "customer_segment": pick(rng, SEGMENTS), "referral_source": pick(rng, REFERRALS),
            "signup_at": signup, "updated_at": updated, "is_test": is_test,
        })
    counts["raw_customers"] = write(
        out, "raw_customers",
        ["customer_id", "first_name", "last_name", "email", "country_code", "customer_segment",
         "referral_source", "signup_at", "updated_at"],
        [[c["customer_id"], c["first_name"], c["last_name"], c["email"], c["country_code"],
          c["customer_segment"], c["referral_source"], ts(c["signup_at"]), ts(c["updated_at"])]
         for c in customers])

    # ---- products ------------------------------------------------------------------
    products = []
    for pid, (name, cat, price, ratio) in enumerate(PRODUCTS, start=1):
        launched = date(2022, 6, 1) + timedelta(days=rng.randint(0, 540))
        products.append({
            "product_id": pid, "sku": f"SKU-{1000 + pid}", "product_name": name,
            "category": cat if rng.random() < 0.8 else cat.upper(),
            "unit_price_cents": price, "unit_cost_cents": int(round(price * ratio)),
            "is_active": "false" if pid % 13 == 0 else "true",
            "launched_on": launched.isoformat(),
        })
    counts["raw_products"] = write(
        out, "raw_products",
        ["product_id", "sku", "product_name", "category", "unit_price_cents", "unit_cost_cents",
         "is_active", "launched_on"],
        [[p[k] for k in ("product_id", "sku", "product_name", "category", "unit_price_cents",
                         "unit_cost_cents", "is_active", "launched_on")] for p in products])

    # ---- orders, order items, payments ----------------------------------------------
    # Customer activity is skewed: a few loyal buyers, many one-off buyers, some never buy.
    weights = [rng.choice([0, 0, 1, 1, 1, 2, 3, 5, 8]) for _ in customers]
    orders, items, payments = [], [], []
    item_id, payment_id = 0, 0
    for oid in range(1, N_ORDERS + 1):
        cust = customers[rng.choices(range(len(customers)), weights=weights, k=1)[0]]
        ordered_at = rand_between(rng, max(cust["signup_at"], START), END)
        status = pick(rng, STATUSES)
        if ordered_at > datetime(2024, 12, 24) and rng.random() < 0.6:
            status = rng.choice(["pending", "Pending", "processing"])
        discount = pick(rng, DISCOUNTS)
        shipping = rng.choice([0, 0, 499, 499, 999])
        orders.append([oid, cust["customer_id"], ts(ordered_at), status, pick(rng, CHANNELS),
                       pick(rng, PLATFORMS), discount, shipping])

        # line items (about 1% of orders have none: abandoned / data glitch)
        n_items = 0 if rng.random() < 0.012 else rng.choices([1, 2, 3, 4, 5], weights=[38, 30, 18, 9, 5])[0]
        total = shipping
        for prod in rng.sample(products, n_items):
            item_id += 1
            qty = rng.choices([1, 2, 3, 4], weights=[70, 20, 7, 3])[0]
            if rng.random() < 0.006:
                qty = 0  # bad line from the POS integration; filtered in staging
            price = prod["unit_price_cents"]
            if rng.random() < 0.07:
                price = int(price * 0.9)  # ran a markdown that day
            disc = 0
            if discount is not None and prod["category"].lower() != "gift cards":
                disc = qty * price * DISCOUNT_PCT[discount.upper()] // 100
            items.append([item_id, oid, prod["product_id"], qty, price, disc if disc else None])
            total += qty * price - disc

        # payments
        norm = status.lower()
        if norm in ("pending", "processing") or n_items == 0 or total <= 0:
            continue
        if norm in ("cancelled", "canceled") and rng.random() < 0.5:
            continue  # cancelled before capture
        pay_at = ordered_at + timedelta(minutes=rng.randint(0, 90))
        method = pick(rng, METHODS)
        if rng.random() < 0.06:  # failed first attempt, sometimes without an amount
            payment_id += 1
            payments.append([payment_id, oid, method, rng.choice(["failed", "FAILED"]),
                             None if rng.random() < 0.5 else total, ts(pay_at)])
            pay_at += timedelta(minutes=rng.randint(1, 30))
        if rng.random() < 0.08 and total > 3000:  # split tender: gift card + card
            part = rng.randint(1, 4) * 500
            payment_id += 1
            payments.append([payment_id, oid, "gift_card", "success", part, ts(pay_at)])
            payment_id += 1
            payments.append([payment_id, oid, method, rng.choice(["success", "Success"]), total - part,
                             ts(pay_at + timedelta(seconds=rng.randint(5, 120)))])
        else:
            payment_id += 1
            payments.append([payment_id, oid, method, pick(rng, [("success", 85), ("SUCCESS", 10), ("Success", 5)]),
                             total, ts(pay_at)])
        if norm in ("cancelled", "canceled", "returned"):
            refund = total if (norm != "returned" or rng.random() < 0.6) else total * rng.randint(30, 90) // 100
            refund_at = pay_at + timedelta(days=rng.randint(1, 20), minutes=rng.randint(0, 600))
            payment_id += 1
            payments.append([payment_id, oid, method, rng.choice(["refunded", "Refunded"]), refund,
                             ts(min(refund_at, END))])
    counts["raw_orders"] = write(
        out, "raw_orders",
        ["order_id", "customer_id", "ordered_at", "status", "marketing_channel", "sales_platform",
         "discount_code", "shipping_cents"], orders)
    counts["raw_order_items"] = write(
        out, "raw_order_items",
        ["order_item_id", "order_id", "product_id", "quantity", "unit_price_cents", "discount_cents"], items)
    counts["raw_payments"] = write(
        out, "raw_payments",
        ["payment_id", "order_id", "payment_method", "payment_status", "amount_cents", "created_at"], payments)

    # ---- subscriptions -------------------------------------------------------------
    real_customers = [c for c in customers if not c["is_test"]]
    subs = []
    for sid, cust in enumerate(rng.sample(real_customers, N_SUBSCRIPTIONS), start=1):
        plan = rng.choices(list(PLANS), weights=[50, 35, 15])[0]
        started = rand_between(rng, max(cust["signup_at"], START), datetime(2024, 11, 30))
        roll = rng.random()
        if roll < 0.35:
            status = rng.choice(["cancelled", "Cancelled"])
            cancelled = rand_between(rng, started + timedelta(days=20), END)
            if cancelled > END:
                cancelled = END
            updated = cancelled
        elif roll < 0.42:
            status, cancelled = "paused", None
            updated = rand_between(rng, started, END)
        else:
            status, cancelled = rng.choice(["active", "active", "Active"]), None
            updated = rand_between(rng, started, min(started + timedelta(days=60), END))
        subs.append([sid, cust["customer_id"], rng.choice(PLAN_SPELLINGS[plan]), status, PLANS[plan],
                     ts(started), ts(cancelled) if cancelled else None, ts(updated)])
    counts["raw_subscriptions"] = write(
        out, "raw_subscriptions",
        ["subscription_id", "customer_id", "plan", "status", "monthly_price_cents", "started_at",
         "cancelled_at", "updated_at"], subs)

    # ---- web events ----------------------------------------------------------------
    events = []
    event_id = 0
    skus = [p["sku"] for p in products]
    for s in range(1, N_SESSIONS + 1):
        session_id = f"s{s:05d}"
        cust = rng.choice(real_customers) if rng.random() < 0.7 else None
        lo = max(cust["signup_at"], START) if cust else START
        t = rand_between(rng, lo, END - timedelta(hours=2))
        device, utm = pick(rng, DEVICES), pick(rng, UTM)
        path = ["/home"] + [f"/products/{rng.choice(skus).lower()}" for _ in range(rng.randint(0, 4))]
        kinds = ["page_view"] + ["product_view"] * (len(path) - 1)
        if len(path) > 1 and rng.random() < 0.45:
            path.append("/cart"); kinds.append("add_to_cart")
            if rng.random() < 0.55:
                path.append("/checkout"); kinds.append("checkout_started")
                if rng.random() < 0.7:
                    path.append("/checkout/confirmation"); kinds.append("purchase")
        logged_in_from = rng.randint(0, len(path)) if cust else len(path)
        for i, (page, kind) in enumerate(zip(path, kinds)):
            event_id += 1
            t += timedelta(seconds=rng.randint(5, 240))
            loaded = t + timedelta(minutes=rng.randint(5, 50))
            kind_out = kind.upper() if rng.random() < 0.04 else kind
            row = [f"ev-{event_id:06d}", session_id, cust["customer_id"] if cust and i >= logged_in_from else None,
                   kind_out, page if rng.random() > 0.05 else page.upper(), ts(t), device, utm, ts(loaded)]
            events.append(row)
            if rng.random() < 0.035:  # at-least-once delivery: the same event loaded again later
                dup = list(row)
                dup[-1] = ts(loaded + timedelta(hours=rng.randint(1, 12), seconds=rng.randint(1, 59)))
                events.append(dup)
    counts["raw_web_events"] = write(
        out, "raw_web_events",
        ["event_id", "session_id", "customer_id", "event_type", "page_url", "event_at", "device",
         "utm_source", "_loaded_at"], events)

    # ---- ad spend (monthly, per paid channel; affiliate paused for a few months) -----
    spend = []
    for m in range(24):
        month = date(2023 + m // 12, m % 12 + 1, 1)
        for channel, (lo, hi) in AD_CHANNELS.items():
            if channel == "affiliate" and m in (4, 5, 6, 17):
                continue
            cents = rng.randint(lo, hi)
            impressions = cents // rng.randint(2, 6)
            clicks = impressions * rng.randint(8, 35) // 1000
            spend.append([month.isoformat(), channel if rng.random() > 0.1 else channel.upper(),
                          cents, impressions, clicks])
    counts["raw_ad_spend"] = write(
        out, "raw_ad_spend", ["month", "channel", "spend_cents", "impressions", "clicks"], spend)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "seeds")
    args = parser.parse_args()
    counts = generate(args.out)
    for name, n in counts.items():
        print(f"{name:20s} {n:6d}")
    print(f"{'total':20s} {sum(counts.values()):6d}")


if __name__ == "__main__":
    main()
