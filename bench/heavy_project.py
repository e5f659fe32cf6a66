#!/usr/bin/env python3
"""A heavy practice project for adegen (issue 30): the example project `integration_tests/` (acme,
33 models) at warehouse-sample scale, with its raw data loaded into the DuckDB file as source tables
(schema `raw`) instead of seed CSVs, and seven incremental models.

    python bench/heavy_project.py OUT [--orders 200000] [--seed 42] [--no-build]

writes OUT/ (a dbt project named `heavy`, profile `heavy`, target dev -> OUT/heavy.duckdb) and
loads the raw tables into OUT/heavy.duckdb. Unless --no-build, it then runs `dbt run` in OUT the
way a user would, so the file also holds the built model tables (incremental ones included), which
is what a user's `--db-path` gives adegen. Nothing is written inside the repository: keep OUT under
/tmp (the default --orders gives a ~100 MB file).

Rows at the default --orders 200000 (seed 42): raw_order_items ~420,000 (the largest source table),
raw_web_events ~430,000, raw_orders 200,000, raw_payments ~190,000, raw_customers 60,000,
raw_subscriptions 30,000. The counts scale with --orders (customers = 0.3x, subscriptions 0.15x and
sessions 0.48x the orders, the example project's ratios); tests use a few thousand.

Deterministic: stdlib random.Random(seed), a fixed calendar (2023-01-01 .. 2024-12-31), the same
messiness as the example project's seed generator (integration_tests/scripts/generate_seeds.py,
whose value lists it reuses): the same arguments give the same rows, and `dbt run` gives the same
tables. Its row loops are rewritten for scale (cumulative weights, no per-row list scans).

What differs from the example project, besides the scale:
- sources `shop`/`web`/`reference` read schema `raw` of the database; there are no seeds and no
  snapshot (the staging models lose their `-- depends_on: ref('raw_...')` hints);
- incremental models (unique_key + `is_incremental()` high-water-mark filter): int_orders_enriched,
  int_web_sessions, fct_orders, fct_order_items, fct_payments, fct_sessions and fct_web_events (the
  example project's one).
"""
from __future__ import annotations

import argparse
import bisect
import csv
import importlib.util
import itertools
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "integration_tests"
PROJECT_NAME = "heavy"
DB_NAME = "heavy"
RAW_SCHEMA = "raw"
DEFAULT_ORDERS = 200_000


def _example_generator():
    """integration_tests/scripts/generate_seeds.py as a module (its value lists and weights)."""
    path = EXAMPLE / "scripts" / "generate_seeds.py"
    spec = importlib.util.spec_from_file_location("acme_generate_seeds", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


G = _example_generator()


@dataclass(frozen=True)
class HeavyProject:
    """What `generate` wrote."""

    project_dir: Path
    db_file: Path
    rows: dict[str, int]                     # raw table -> rows
    incremental: tuple[str, ...]             # incremental model names
    built: bool = False                      # `dbt run` ran: the file holds the model tables
    seconds: dict[str, float] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------- data

class Weighted:
    """rng.choices over fixed weights in O(log n) (cumulative weights computed once)."""

    def __init__(self, pairs):
        self.values = [v for v, _ in pairs]
        self.cum = list(itertools.accumulate(w for _, w in pairs))

    def __call__(self, rng):
        return self.values[bisect.bisect_right(self.cum, rng.random() * self.cum[-1])]


def _ts(dt: datetime | None) -> str | None:
    return None if dt is None else dt.strftime("%Y-%m-%d %H:%M:%S")


def _between(rng, lo: datetime, hi: datetime) -> datetime:
    return lo + timedelta(seconds=rng.randint(0, max(int((hi - lo).total_seconds()), 0)))


# raw table -> (column, DuckDB type): the types `dbt seed` gives the example project's CSVs
SCHEMAS: dict[str, list[tuple[str, str]]] = {
    "ref_countries": [("country_code", "VARCHAR"), ("country_name", "VARCHAR"), ("region", "VARCHAR")],
    "raw_customers": [("customer_id", "INTEGER"), ("first_name", "VARCHAR"), ("last_name", "VARCHAR"),
                      ("email", "VARCHAR"), ("country_code", "VARCHAR"), ("customer_segment", "VARCHAR"),
                      ("referral_source", "VARCHAR"), ("signup_at", "TIMESTAMP"), ("updated_at", "TIMESTAMP")],
    "raw_products": [("product_id", "INTEGER"), ("sku", "VARCHAR"), ("product_name", "VARCHAR"),
                     ("category", "VARCHAR"), ("unit_price_cents", "INTEGER"), ("unit_cost_cents", "INTEGER"),
                     ("is_active", "BOOLEAN"), ("launched_on", "DATE")],
    "raw_orders": [("order_id", "INTEGER"), ("customer_id", "INTEGER"), ("ordered_at", "TIMESTAMP"),
                   ("status", "VARCHAR"), ("marketing_channel", "VARCHAR"), ("sales_platform", "VARCHAR"),
                   ("discount_code", "VARCHAR"), ("shipping_cents", "INTEGER")],
    "raw_order_items": [("order_item_id", "INTEGER"), ("order_id", "INTEGER"), ("product_id", "INTEGER"),
                        ("quantity", "INTEGER"), ("unit_price_cents", "INTEGER"), ("discount_cents", "INTEGER")],
    "raw_payments": [("payment_id", "INTEGER"), ("order_id", "INTEGER"), ("payment_method", "VARCHAR"),
                     ("payment_status", "VARCHAR"), ("amount_cents", "INTEGER"), ("created_at", "TIMESTAMP")],
    "raw_subscriptions": [("subscription_id", "INTEGER"), ("customer_id", "INTEGER"), ("plan", "VARCHAR"),
                          ("status", "VARCHAR"), ("monthly_price_cents", "INTEGER"), ("started_at", "TIMESTAMP"),
                          ("cancelled_at", "TIMESTAMP"), ("updated_at", "TIMESTAMP")],
    "raw_web_events": [("event_id", "VARCHAR"), ("session_id", "VARCHAR"), ("customer_id", "INTEGER"),
                       ("event_type", "VARCHAR"), ("page_url", "VARCHAR"), ("event_at", "TIMESTAMP"),
                       ("device", "VARCHAR"), ("utm_source", "VARCHAR"), ("_loaded_at", "TIMESTAMP")],
    "raw_ad_spend": [("month", "DATE"), ("channel", "VARCHAR"), ("spend_cents", "INTEGER"),
                     ("impressions", "INTEGER"), ("clicks", "INTEGER")],
}


class _Writer:
    """One CSV per raw table in a scratch directory (loaded into DuckDB with SCHEMAS' types)."""

    def __init__(self, tmp: Path):
        self.tmp, self.files, self.rows = tmp, {}, {}

    def open(self, name: str):
        fh = (self.tmp / f"{name}.csv").open("w", newline="", encoding="utf-8")
        self.files[name] = fh
        self.rows[name] = 0
        w = csv.writer(fh, lineterminator="\n")
        w.writerow([c for c, _ in SCHEMAS[name]])
        return w

    def row(self, w, name: str, values) -> None:
        w.writerow(["" if v is None else v for v in values])
        self.rows[name] += 1

    def close(self) -> None:
        for fh in self.files.values():
            fh.close()


def generate_data(tmp: Path, orders: int, seed: int) -> dict[str, int]:
    """The raw tables as CSVs in `tmp`: the example generator's logic at `orders` orders."""
    rng = __import__("random").Random(seed)
    n_customers, n_subs, n_sessions = max(30, orders * 3 // 10), max(15, orders * 15 // 100), max(48, orders * 48 // 100)
    out = _Writer(tmp)
    seg, ref, status_w, chan = (Weighted(G.SEGMENTS), Weighted(G.REFERRALS), Weighted(G.STATUSES), Weighted(G.CHANNELS))
    plat, disc_w, meth, dev, utm = (Weighted(G.PLATFORMS), Weighted(G.DISCOUNTS), Weighted(G.METHODS),
                                    Weighted(G.DEVICES), Weighted(G.UTM))
    country_w = Weighted([(c, w) for c, _, _, w in G.COUNTRIES])
    start, end = G.START, G.END

    w = out.open("ref_countries")
    for c, n, r, _ in G.COUNTRIES:
        out.row(w, "ref_countries", [c, n, r])

    customers = []
    w = out.open("raw_customers")
    cutoff = datetime(2024, 10, 31)
    for cid in range(1, n_customers + 1):
        first, last = rng.choice(G.FIRST_NAMES), rng.choice(G.LAST_NAMES)
        is_test = cid % 37 == 0
        domain = "acme-test.com" if is_test else rng.choice(G.DOMAINS)
        local = f"{first}.{last}{cid}".replace("ü", "u")
        local = local.upper() if rng.random() < 0.2 else local.lower() if rng.random() < 0.6 else local
        signup = _between(rng, G.SIGNUP_START, cutoff)
        country = None if rng.random() < 0.04 else country_w(rng)
        if country is not None and rng.random() < 0.08:
            country = country.lower()
        updated = min(signup + timedelta(days=rng.randint(0, 400), seconds=rng.randint(0, 86399)), end)
        customers.append((cid, signup, is_test))
        out.row(w, "raw_customers", [cid, first, last, f"{local}@{domain}", country, seg(rng), ref(rng),
                                     _ts(signup), _ts(updated)])

    products = []
    w = out.open("raw_products")
    for pid, (name, cat, price, ratio) in enumerate(G.PRODUCTS, start=1):
        launched = date(2022, 6, 1) + timedelta(days=rng.randint(0, 540))
        products.append((pid, cat, price))
        out.row(w, "raw_products", [pid, f"SKU-{1000 + pid}", name, cat if rng.random() < 0.8 else cat.upper(),
                                    price, int(round(price * ratio)), "false" if pid % 13 == 0 else "true",
                                    launched.isoformat()])

    # skewed activity, as in the example: some customers never buy, a few buy a lot
    buyer = Weighted([(i, rng.choice([0, 0, 1, 1, 1, 2, 3, 5, 8])) for i in range(len(customers))])
    n_items_w = Weighted([(1, 38), (2, 30), (3, 18), (4, 9), (5, 5)])
    qty_w = Weighted([(1, 70), (2, 20), (3, 7), (4, 3)])
    ok_w = Weighted([("success", 85), ("SUCCESS", 10), ("Success", 5)])
    wo, wi, wp = out.open("raw_orders"), out.open("raw_order_items"), out.open("raw_payments")
    item_id = payment_id = 0
    for oid in range(1, orders + 1):
        cid, signup, _ = customers[buyer(rng)]
        ordered_at = _between(rng, max(signup, start), end)
        status = status_w(rng)
        if ordered_at > datetime(2024, 12, 24) and rng.random() < 0.6:
            status = rng.choice(["pending", "Pending", "processing"])
        discount = disc_w(rng)
        shipping = rng.choice([0, 0, 499, 499, 999])
        out.row(wo, "raw_orders", [oid, cid, _ts(ordered_at), status, chan(rng), plat(rng), discount, shipping])
        n_items = 0 if rng.random() < 0.012 else n_items_w(rng)
        total = shipping
        for pid, cat, price in rng.sample(products, n_items):
            item_id += 1
            qty = 0 if rng.random() < 0.006 else qty_w(rng)
            if rng.random() < 0.07:
                price = int(price * 0.9)
            d = qty * price * G.DISCOUNT_PCT[discount.upper()] // 100 if discount and cat.lower() != "gift cards" else 0
            out.row(wi, "raw_order_items", [item_id, oid, pid, qty, price, d or None])
            total += qty * price - d
        norm = status.lower()
        if norm in ("pending", "processing") or n_items == 0 or total <= 0:
            continue
        if norm in ("cancelled", "canceled") and rng.random() < 0.5:
            continue
        pay_at = ordered_at + timedelta(minutes=rng.randint(0, 90))
        method = meth(rng)
        if rng.random() < 0.06:
            payment_id += 1
            out.row(wp, "raw_payments", [payment_id, oid, method, rng.choice(["failed", "FAILED"]),
                                         None if rng.random() < 0.5 else total, _ts(pay_at)])
            pay_at += timedelta(minutes=rng.randint(1, 30))
        if rng.random() < 0.08 and total > 3000:
            part = rng.randint(1, 4) * 500
            payment_id += 1
            out.row(wp, "raw_payments", [payment_id, oid, "gift_card", "success", part, _ts(pay_at)])
            payment_id += 1
            out.row(wp, "raw_payments", [payment_id, oid, method, rng.choice(["success", "Success"]), total - part,
                                         _ts(pay_at + timedelta(seconds=rng.randint(5, 120)))])
        else:
            payment_id += 1
            out.row(wp, "raw_payments", [payment_id, oid, method, ok_w(rng), total, _ts(pay_at)])
        if norm in ("cancelled", "canceled", "returned"):
            refund = total if (norm != "returned" or rng.random() < 0.6) else total * rng.randint(30, 90) // 100
            refund_at = pay_at + timedelta(days=rng.randint(1, 20), minutes=rng.randint(0, 600))
            payment_id += 1
            out.row(wp, "raw_payments", [payment_id, oid, method, rng.choice(["refunded", "Refunded"]), refund,
                                         _ts(min(refund_at, end))])

    real = [c for c in customers if not c[2]]
    plans = list(G.PLANS)
    w = out.open("raw_subscriptions")
    for sid, (cid, signup, _) in enumerate(rng.sample(real, min(n_subs, len(real))), start=1):
        plan = rng.choices(plans, weights=[50, 35, 15])[0]
        started = _between(rng, max(signup, start), datetime(2024, 11, 30))
        roll, cancelled = rng.random(), None
        if roll < 0.35:
            status = rng.choice(["cancelled", "Cancelled"])
            cancelled = min(_between(rng, started + timedelta(days=20), end), end)
            updated = cancelled
        elif roll < 0.42:
            status, updated = "paused", _between(rng, started, end)
        else:
            status = rng.choice(["active", "active", "Active"])
            updated = _between(rng, started, min(started + timedelta(days=60), end))
        out.row(w, "raw_subscriptions", [sid, cid, rng.choice(G.PLAN_SPELLINGS[plan]), status, G.PLANS[plan],
                                         _ts(started), _ts(cancelled), _ts(updated)])

    w = out.open("raw_web_events")
    event_id = 0
    skus = [f"SKU-{1000 + p[0]}" for p in products]
    for s in range(1, n_sessions + 1):
        session_id = f"s{s:07d}"
        cust = rng.choice(real) if rng.random() < 0.7 else None
        t = _between(rng, max(cust[1], start) if cust else start, end - timedelta(hours=2))
        device, src = dev(rng), utm(rng)
        path = ["/home"] + [f"/products/{rng.choice(skus).lower()}" for _ in range(rng.randint(0, 4))]
        kinds = ["page_view"] + ["product_view"] * (len(path) - 1)
        if len(path) > 1 and rng.random() < 0.45:
            path.append("/cart"); kinds.append("add_to_cart")  # noqa: E702
            if rng.random() < 0.55:
                path.append("/checkout"); kinds.append("checkout_started")  # noqa: E702
                if rng.random() < 0.7:
                    path.append("/checkout/confirmation"); kinds.append("purchase")  # noqa: E702
        logged_in_from = rng.randint(0, len(path)) if cust else len(path)
        for i, (page, kind) in enumerate(zip(path, kinds)):
            event_id += 1
            t += timedelta(seconds=rng.randint(5, 240))
            loaded = t + timedelta(minutes=rng.randint(5, 50))
            row = [f"ev-{event_id:08d}", session_id, cust[0] if cust and i >= logged_in_from else None,
                   kind.upper() if rng.random() < 0.04 else kind, page if rng.random() > 0.05 else page.upper(),
                   _ts(t), device, src, _ts(loaded)]
            out.row(w, "raw_web_events", row)
            if rng.random() < 0.035:
                row[-1] = _ts(loaded + timedelta(hours=rng.randint(1, 12), seconds=rng.randint(1, 59)))
                out.row(w, "raw_web_events", row)

    w = out.open("raw_ad_spend")
    for m in range(24):
        month = date(2023 + m // 12, m % 12 + 1, 1)
        for channel, (lo, hi) in G.AD_CHANNELS.items():
            if channel == "affiliate" and m in (4, 5, 6, 17):
                continue
            cents = rng.randint(lo, hi)
            impressions = cents // rng.randint(2, 6)
            out.row(w, "raw_ad_spend", [month.isoformat(), channel if rng.random() > 0.1 else channel.upper(),
                                        cents, impressions, impressions * rng.randint(8, 35) // 1000])
    out.close()
    return dict(out.rows)


def load_raw(db_file: Path, csv_dir: Path) -> None:
    """Load every CSV of `csv_dir` into `db_file` as raw.<table> with SCHEMAS' types."""
    import duckdb

    con = duckdb.connect(str(db_file))
    try:
        con.execute(f"create schema if not exists {RAW_SCHEMA}")
        for name, cols in SCHEMAS.items():
            spec = ", ".join(f"'{c}': '{t}'" for c, t in cols)
            path = str(csv_dir / f"{name}.csv").replace("'", "''")
            con.execute(f"create or replace table {RAW_SCHEMA}.{name} as select * from "
                        f"read_csv('{path}', header = true, columns = {{{spec}}}, nullstr = '')")
        con.execute("checkpoint")
    finally:
        con.close()


# ---------------------------------------------------------------------------------------- project

# model -> (config block, [(text to find, text that replaces it)]): the high-water-mark filters
INCREMENTAL: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "intermediate/int_orders_enriched.sql": (
        "{{ config(materialized='incremental', unique_key='order_id') }}\n\n",
        [("select * from {{ ref('stg_orders') }}\n",
          "select * from {{ ref('stg_orders') }}\n    {% if is_incremental() %}\n"
          "    where ordered_at > (select max(ordered_at) from {{ this }})\n    {% endif %}\n")]),
    "intermediate/int_web_sessions.sql": (
        "{{ config(materialized='incremental', unique_key='session_id') }}\n\n",
        [("select * from {{ ref('stg_web_events') }}\n",
          "select * from {{ ref('stg_web_events') }}\n    {% if is_incremental() %}\n"
          "    where session_id not in (select session_id from {{ this }})\n    {% endif %}\n")]),
    "marts/fct_orders.sql": (
        "{{ config(materialized='incremental', unique_key='order_id') }}\n\n",
        [("select * from {{ ref('int_order_financials') }}\n",
          "select * from {{ ref('int_order_financials') }}\n    {% if is_incremental() %}\n"
          "    where ordered_at > (select max(ordered_at) from {{ this }})\n    {% endif %}\n")]),
    "marts/fct_order_items.sql": (
        "{{ config(materialized='incremental', unique_key='order_item_id') }}\n\n",
        [("    on order_items.order_id = orders.order_id\n",
          "    on order_items.order_id = orders.order_id\n{% if is_incremental() %}\n"
          "where orders.order_date > (select max(order_date) from {{ this }})\n{% endif %}\n")]),
    "marts/fct_payments.sql": (
        "{{ config(materialized='incremental', unique_key='payment_id') }}\n",
        [("where payments.payment_status != 'failed'\n",
          "where payments.payment_status != 'failed'\n{% if is_incremental() %}\n"
          "    and payments.created_at > (select max(created_at) from {{ this }})\n{% endif %}\n")]),
    "marts/fct_sessions.sql": (
        "{{ config(materialized='incremental', unique_key='session_id') }}\n\n",
        [("select * from {{ ref('int_web_sessions') }}\n",
          "select * from {{ ref('int_web_sessions') }}\n    {% if is_incremental() %}\n"
          "    where session_started_at > (select max(session_started_at) from {{ this }})\n    {% endif %}\n")]),
}
DEPENDS_ON_HINT = re.compile(r"^-- depends_on: \{\{ ref\('raw_\w+'\) \}\}\n", re.M)

DBT_PROJECT = f"""name: {PROJECT_NAME}
version: "1.0.0"
config-version: 2
profile: {PROJECT_NAME}

model-paths: ["models"]
macro-paths: ["macros"]
test-paths: ["tests"]
target-path: "target"
clean-targets: ["target", "dbt_packages"]

flags:
  require_generic_test_arguments_property: false

# every date the models reason about is pinned here, so rebuilds are deterministic
vars:
  as_of_date: "2024-12-31"
  reporting_start_date: "2023-01-01"
  payment_methods: ["credit_card", "paypal", "bank_transfer", "gift_card"]
  high_value_threshold_dollars: 1000
  min_cohort_size: 3
  churn_after_days: 180
  include_test_accounts: false

models:
  {PROJECT_NAME}:
    staging:
      +materialized: view
    intermediate:
      +materialized: table
    marts:
      +materialized: table
"""

PROFILES = f"""{PROJECT_NAME}:
  target: dev
  outputs:
    dev:
      type: duckdb
      path: "./{DB_NAME}.duckdb"
      schema: main
      threads: 2
"""


def _sources_yml(text: str) -> str:
    """The example's sources on schema `raw`, plus `reference.countries` for the former seed."""
    text = text.replace("    schema: main\n", f"    schema: {RAW_SCHEMA}\n")
    text = text.replace("(loaded here as seeds)", f"(loaded into the `{RAW_SCHEMA}` schema)")
    return text + (f"\n  - name: reference\n    description: Reference data maintained by hand.\n"
                   f"    schema: {RAW_SCHEMA}\n    tables:\n      - name: countries\n"
                   f"        identifier: ref_countries\n        description: ISO country codes and regions.\n")


def write_project(out: Path) -> tuple[str, ...]:
    """The dbt project files in `out` (models, macros, singular tests from the example project)."""
    for sub in ("models", "macros", "tests"):
        shutil.copytree(EXAMPLE / sub, out / sub)
    (out / "dbt_project.yml").write_text(DBT_PROJECT)
    (out / "profiles.yml").write_text(PROFILES)
    (out / ".gitignore").write_text("target/\nlogs/\ndbt_packages/\n*.duckdb\n*.duckdb.wal\n")
    models = out / "models"
    for f in (models / "staging").glob("stg_*.sql"):
        f.write_text(DEPENDS_ON_HINT.sub("", f.read_text()))
    stg_countries = models / "staging" / "stg_countries.sql"
    stg_countries.write_text(stg_countries.read_text().replace("{{ ref('ref_countries') }}",
                                                               "{{ source('reference', 'countries') }}"))
    src = models / "staging" / "_sources.yml"
    src.write_text(_sources_yml(src.read_text()))
    staging_yml = models / "staging" / "_staging.yml"
    staging_yml.write_text(staging_yml.read_text().replace("(from the ref_countries seed)",
                                                           "(from the reference.countries source)"))
    for rel, (config, edits) in INCREMENTAL.items():
        path = models / rel
        text = path.read_text()
        for old, new in edits:
            if text.count(old) != 1:
                raise RuntimeError(f"{rel}: expected one {old!r} in the example model")
            text = text.replace(old, new)
        path.write_text(config + text)
    incremental = [p.stem for p in models.rglob("*.sql") if "materialized='incremental'" in p.read_text()]
    return tuple(sorted(incremental))


def dbt_run(project_dir: Path, *args: str) -> float:
    """`dbt run` in the project the way a user would (its own profiles.yml); seconds."""
    t0 = time.monotonic()
    cmd = [sys.executable, "-m", "dbt.cli.main", "run", "--profiles-dir", str(project_dir), *args]
    p = subprocess.run(cmd, cwd=project_dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"dbt run failed in {project_dir}:\n{p.stdout[-3000:]}")
    return time.monotonic() - t0


def generate(out: Path, *, orders: int = DEFAULT_ORDERS, seed: int = 42, build: bool = True) -> HeavyProject:
    """The project in `out` (must not exist or be empty), its raw data in out/heavy.duckdb, and
    (build=True) the models built there by `dbt run`."""
    out = Path(out).resolve()
    if out.exists() and any(out.iterdir()):
        raise SystemExit(f"{out} is not empty")
    out.mkdir(parents=True, exist_ok=True)
    seconds: dict[str, float] = {}
    t0 = time.monotonic()
    incremental = write_project(out)
    db = out / f"{DB_NAME}.duckdb"
    with tempfile.TemporaryDirectory(prefix="heavy-csv-") as tmp:
        rows = generate_data(Path(tmp), orders, seed)
        seconds["generate"] = time.monotonic() - t0
        t1 = time.monotonic()
        load_raw(db, Path(tmp))
        seconds["load"] = time.monotonic() - t1
    if build:
        seconds["dbt_run"] = dbt_run(out)
        shutil.rmtree(out / "target", ignore_errors=True)
        shutil.rmtree(out / "logs", ignore_errors=True)
    return HeavyProject(out, db, rows, incremental, build, seconds)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="a new directory (keep it outside the repository, e.g. /tmp/heavy/p)")
    ap.add_argument("--orders", type=int, default=DEFAULT_ORDERS, help=f"orders (default {DEFAULT_ORDERS:,})")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--no-build", action="store_true", help="only load the raw data (no `dbt run`)")
    a = ap.parse_args(argv)
    hp = generate(a.out, orders=a.orders, seed=a.seed, build=not a.no_build)
    for name, n in sorted(hp.rows.items(), key=lambda kv: -kv[1]):
        print(f"{name:20s} {n:9,d}")
    print(f"incremental models: {', '.join(hp.incremental)}")
    print(f"database: {hp.db_file} ({hp.db_file.stat().st_size / 1e6:.1f} MB); "
          + ", ".join(f"{k} {v:.1f}s" for k, v in hp.seconds.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
