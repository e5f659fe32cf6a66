"""Synthetic dbt project generator for adegen benchmarks.

    python bench/synth.py --models N --seed S --out DIR [--with-adegen] [--force]

Writes a dbt project named `synth` (DuckDB profile in the project dir, `path: ./synth.duckdb`,
schema `main`) with N models (10..5000), fully determined by (N, seed):

- seeds/ (six small CSVs) declared as two sources (`shop`, `web`) in models/staging/_sources.yml;
- staging (~30%): one source each, casts, COALESCE, CASE, a project macro, dedup windows,
  `{% if var(...) %}` filters, a `{% for %}` loop over a var list (payments);
- intermediate (~40%): joins of pre-aggregated parents (left/inner, single and multi-key),
  aggregations with HAVING, windows with frames, filters with CASE, UNION ALL, date_trunc;
- marts (~30%, tables): the same shapes over intermediate models, top-N windows, monthly facts.

Refs only point to models generated earlier (a DAG), fan-in 1-3. Every model compiles; for
small N `dbt seed && dbt run` (and `dbt test`) are green.
"""
from __future__ import annotations

import argparse
import hashlib
import random
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
MIN_MODELS, MAX_MODELS = 10, 5000

PAYMENT_METHODS = ["credit_card", "bank_transfer", "coupon", "gift_card"]
ORDER_STATUSES = ["placed", "shipped", "completed", "returned", "cancelled"]
START_DATE = "2022-01-01"

# --------------------------------------------------------------------------------------------
# column model


@dataclass(frozen=True)
class Col:
    name: str
    kind: str  # key | date | num | cat | text
    root: str = ""  # measure / date root word, used to name derived columns

    @property
    def sql_type(self) -> str:
        return {"key": "integer", "date": "date", "num": "double", "cat": "varchar",
                "text": "varchar"}[self.kind]


@dataclass
class Model:
    name: str
    layer: str  # staging | intermediate | marts
    folder: str  # path under models/
    kind: str
    sql: str
    columns: list[Col]
    entity: str
    refs: list[str] = field(default_factory=list)
    sources: list[tuple[str, str]] = field(default_factory=list)
    est_rows: float = 0.0
    pk: str | None = None  # a column known unique and not null (gets data tests)
    description: str = ""

    def cols(self, kind: str) -> list[Col]:
        return [c for c in self.columns if c.kind == kind]


# --------------------------------------------------------------------------------------------
# seeds / sources

# (source, table, rows, entity, staging columns: (raw expr, Col), raw pk, raw date column)
SOURCE_TABLES = [
    ("shop", "raw_orders", 400, "orders"),
    ("shop", "raw_customers", 120, "customers"),
    ("shop", "raw_payments", 480, "payments"),
    ("web", "raw_events", 600, "events"),
    ("shop", "raw_products", 40, "products"),
    ("shop", "raw_stores", 8, "stores"),
]

COUNTRIES = ["us", "ca", "gb", "de", "fr", "nl", "br", "jp"]
SEGMENTS = ["consumer", "smb", "enterprise"]
CATEGORIES = ["apparel", "electronics", "home", "garden", "toys", "books"]
REGIONS = ["north", "south", "east", "west"]
EVENT_TYPES = ["page_view", "add_to_cart", "checkout", "purchase", "search"]
FIRST = ["ana", "ben", "cara", "dev", "eli", "fay", "gus", "hana", "ivan", "jo", "kai", "lena"]
LAST = ["smith", "ng", "garcia", "kim", "okafor", "rossi", "muller", "silva", "tanaka"]


def _date(rng: random.Random, start_ord: int, span: int) -> str:
    import datetime as dt
    return dt.date.fromordinal(start_ord + rng.randrange(span)).isoformat()


def seed_tables(seed: int) -> dict[str, list[list[str]]]:
    """CSV rows (header first) of every seed table, deterministic from the seed."""
    import datetime as dt
    rng = random.Random(f"synth-data-{seed}")
    d0 = dt.date(2022, 1, 1).toordinal()
    span = 3 * 365
    n = {t: rows for _, t, rows, _ in SOURCE_TABLES}
    out: dict[str, list[list[str]]] = {}
    maybe = lambda v, p: "" if rng.random() < p else v  # noqa: E731 - null injection

    out["raw_customers"] = [["id", "first_name", "last_name", "email", "signup_date", "country",
                             "segment", "credit_limit_cents"]] + [
        [str(i), f, l, f"{f}.{l}{i}@example.com", _date(rng, d0, span),
         maybe(rng.choice(COUNTRIES), 0.05), maybe(rng.choice(SEGMENTS), 0.1),
         str(rng.randrange(0, 500_000, 500))]
        for i in range(1, n["raw_customers"] + 1)
        for f, l in [(rng.choice(FIRST), rng.choice(LAST))]]
    out["raw_stores"] = [["id", "name", "region", "opened_at"]] + [
        [str(i), f"store_{i:02d}", REGIONS[(i - 1) % len(REGIONS)], _date(rng, d0 - 700, 700)]
        for i in range(1, n["raw_stores"] + 1)]
    out["raw_products"] = [["id", "name", "category", "price_cents", "created_at"]] + [
        [str(i), f"product_{i:03d}", rng.choice(CATEGORIES), str(rng.randrange(199, 49_999)),
         f"{_date(rng, d0 - 400, 400)} {rng.randrange(24):02d}:{rng.randrange(60):02d}:00"]
        for i in range(1, n["raw_products"] + 1)]
    out["raw_orders"] = [["id", "customer_id", "product_id", "store_id", "order_date", "status",
                          "amount_cents", "quantity"]] + [
        [str(i), str(rng.randrange(1, n["raw_customers"] + 1)),
         str(rng.randrange(1, n["raw_products"] + 1)), str(rng.randrange(1, n["raw_stores"] + 1)),
         _date(rng, d0, span), maybe(rng.choice(ORDER_STATUSES), 0.03),
         str(rng.randrange(100, 60_000)), maybe(str(rng.randrange(1, 8)), 0.05)]
        for i in range(1, n["raw_orders"] + 1)]
    out["raw_payments"] = [["id", "order_id", "payment_method", "amount_cents", "paid_at"]] + [
        [str(i), str(rng.randrange(1, n["raw_orders"] + 1)), rng.choice(PAYMENT_METHODS),
         str(rng.randrange(0, 60_000)),
         f"{_date(rng, d0, span)} {rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}"]
        for i in range(1, n["raw_payments"] + 1)]
    out["raw_events"] = [["id", "customer_id", "session_id", "event_type", "event_ts",
                          "revenue_cents"]] + [
        [str(i), str(rng.randrange(1, n["raw_customers"] + 1)), str(rng.randrange(1, 250)), et,
         f"{_date(rng, d0, span)} {rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}",
         str(rng.randrange(100, 30_000)) if et == "purchase" else maybe("0", 0.5)]
        for i in range(1, n["raw_events"] + 1)
        for et in [rng.choice(EVENT_TYPES)]]
    return out


# --------------------------------------------------------------------------------------------
# SQL helpers

IND = "    "


def _uniq(name: str, taken: set[str]) -> str:
    base, i = name, 2
    while name in taken:
        name = f"{base}_{i}"
        i += 1
    taken.add(name)
    return name


def _cte(name: str, body: str) -> str:
    return f"{name} as (\n\n{_indent(body)}\n\n)"


def _indent(text: str, n: int = 1) -> str:
    pad = IND * n
    return "\n".join(pad + line if line.strip() else line for line in text.splitlines())


def _select_list(items: list[str], n: int = 2) -> str:
    return ",\n".join(IND * n + it for it in items)


def _with(ctes: list[str], final: str = "final") -> str:
    return "with " + ",\n\n".join(ctes) + f"\n\nselect * from {final}\n"


def _ref_cte(alias: str, parent: str) -> str:
    return _cte(alias, f"select * from {{{{ ref('{parent}') }}}}")


def _cap(cols: list[Col], limit: int = 12) -> list[Col]:
    """Keep a model from growing ever wider: keys and dates first, then a few others."""
    if len(cols) <= limit:
        return list(cols)
    keep = [c for c in cols if c.kind in ("key", "date")][: limit // 2]
    rest = [c for c in cols if c not in keep]
    return [c for c in cols if c in keep or c in rest[: limit - len(keep)]]


# --------------------------------------------------------------------------------------------
# staging


def staging_model(rng: random.Random, idx: int, source: str, table: str, rows: int,
                  entity: str, variant: int) -> Model:
    src = f"{{{{ source('{source}', '{table}') }}}}"
    dedup = rng.random() < 0.35
    date_filter = rng.random() < 0.3
    items: list[str]
    cols: list[Col]
    where: list[str] = ["id is not null"]
    pk = None
    if table == "raw_orders":
        cols = [Col("order_id", "key"), Col("customer_id", "key"), Col("product_id", "key"),
                Col("store_id", "key"), Col("order_date", "date", "order"),
                Col("status", "cat"), Col("amount", "num", "amount"),
                Col("quantity", "num", "quantity"), Col("order_size", "cat")]
        items = ["cast(id as integer) as order_id",
                 "cast(customer_id as integer) as customer_id",
                 "cast(product_id as integer) as product_id",
                 "cast(store_id as integer) as store_id",
                 "cast(order_date as date) as order_date",
                 "lower(coalesce(status, 'placed')) as status",
                 "{{ cents_to_dollars('amount_cents') }} as amount",
                 "coalesce(cast(quantity as integer), 0) as quantity",
                 "case\n" + IND * 2 + "when amount_cents >= 20000 then 'large'\n" + IND * 2
                 + "when amount_cents >= 5000 then 'medium'\n" + IND * 2 + "else 'small'\n"
                 + IND * 1 + "end as order_size"]
        raw_date = "order_date"
        if rng.random() < 0.6:
            where.append("{% if var('exclude_cancelled', true) %}coalesce(status, '') <> 'cancelled'"
                         "{% else %}1 = 1{% endif %}")
    elif table == "raw_customers":
        cols = [Col("customer_id", "key"), Col("full_name", "text"), Col("email", "text"),
                Col("signup_date", "date", "signup"), Col("country", "cat"),
                Col("segment", "cat"), Col("credit_limit", "num", "credit_limit")]
        items = ["cast(id as integer) as customer_id",
                 "first_name || ' ' || last_name as full_name",
                 "lower(email) as email",
                 "cast(signup_date as date) as signup_date",
                 "coalesce(upper(country), 'UNKNOWN') as country",
                 "coalesce(segment, 'consumer') as segment",
                 "{{ cents_to_dollars('credit_limit_cents') }} as credit_limit"]
        raw_date = "signup_date"
    elif table == "raw_payments":
        cols = [Col("payment_id", "key"), Col("order_id", "key"),
                Col("payment_method", "cat"), Col("amount", "num", "amount")]
        cols += [Col(f"{m}_amount", "num", f"{m}_amount") for m in PAYMENT_METHODS]
        cols += [Col("paid_date", "date", "paid")]
        items = ["cast(id as integer) as payment_id",
                 "cast(order_id as integer) as order_id",
                 "lower(payment_method) as payment_method",
                 "{{ cents_to_dollars('amount_cents') }} as amount",
                 "{%- for method in var('payment_methods') %}\n" + IND * 1
                 + "case when lower(payment_method) = '{{ method }}' then "
                 "{{ cents_to_dollars('amount_cents') }} else 0 end as {{ method }}_amount,\n"
                 + IND * 1 + "{%- endfor %}\n" + IND * 1 + "cast(paid_at as date) as paid_date"]
        raw_date = "paid_at"
        if rng.random() < 0.5:
            where.append("amount_cents > 0")
    elif table == "raw_events":
        cols = [Col("event_id", "key"), Col("customer_id", "key"), Col("session_id", "key"),
                Col("event_type", "cat"), Col("event_date", "date", "event"),
                Col("revenue", "num", "revenue"), Col("is_purchase", "num", "purchase")]
        items = ["cast(id as integer) as event_id",
                 "cast(customer_id as integer) as customer_id",
                 "cast(session_id as integer) as session_id",
                 "event_type",
                 "cast(date_trunc('day', cast(event_ts as timestamp)) as date) as event_date",
                 "coalesce({{ cents_to_dollars('revenue_cents') }}, 0) as revenue",
                 "case when event_type = 'purchase' then 1 else 0 end as is_purchase"]
        raw_date = "event_ts"
    elif table == "raw_products":
        cols = [Col("product_id", "key"), Col("product_name", "text"), Col("category", "cat"),
                Col("price", "num", "price"), Col("created_date", "date", "created")]
        items = ["cast(id as integer) as product_id",
                 "name as product_name",
                 "coalesce(category, 'other') as category",
                 "{{ cents_to_dollars('price_cents') }} as price",
                 "cast(created_at as date) as created_date"]
        raw_date = "created_at"
    else:  # raw_stores
        cols = [Col("store_id", "key"), Col("store_name", "text"), Col("region", "cat"),
                Col("opened_date", "date", "opened")]
        items = ["cast(id as integer) as store_id", "name as store_name",
                 "upper(region) as region", "cast(opened_at as date) as opened_date"]
        raw_date = "opened_at"
    pk = cols[0].name
    if date_filter and table not in ("raw_products", "raw_stores"):
        where.append(f"cast({raw_date} as date) >= cast('{{{{ var(\"start_date\") }}}}' as date)")

    ctes = [_cte("source", f"select * from {src}")]
    frm = "source"
    if dedup:
        ctes.append(_cte("deduplicated", "select\n" + IND + "*,\n" + IND
                         + f"row_number() over (partition by id order by {raw_date} desc) as row_num\n"
                         "from source"))
        frm = "deduplicated"
        where.append("row_num = 1")
    body = ("select\n" + _select_list(items, 1) + f"\nfrom {frm}\nwhere "
            + ("\n" + IND + "and ").join(where))
    ctes.append(_cte("renamed", body))
    name = f"stg_{source}__{table[4:]}" + (f"_v{variant}" if variant else "")
    return Model(name=name, layer="staging", folder=f"staging/{source}", kind="staging",
                 sql=_with(ctes, "renamed"), columns=cols, entity=entity, sources=[(source, table)],
                 est_rows=rows, pk=pk,
                 description=f"Cleaned {table[4:]} from the {source} source.")


# --------------------------------------------------------------------------------------------
# intermediate / marts shapes


def _keys_shared(a: Model, b: Model) -> list[str]:
    bk = {c.name for c in b.cols("key")}
    return [c.name for c in a.cols("key") if c.name in bk]


def shape_join(rng, name, layer, folder, base: Model, secs: list[Model]) -> Model:
    taken: set[str] = set()
    ctes = [_ref_cte(base.name, base.name)]
    base_cols = _cap(base.columns, 10)
    select = [f"{base.name}.{c.name}" for c in base_cols]
    out = list(base_cols)
    for c in base_cols:
        taken.add(c.name)
    joins = []
    for s in secs:
        keys = _keys_shared(base, s)
        if len(keys) >= 2 and rng.random() < 0.5:
            keys = keys[:2]  # multi-key join
        else:
            keys = [rng.choice(keys)]
        alias = f"{s.name}_agg"
        short = s.entity
        agg_items = list(keys)
        rc = _uniq(f"{short}_row_count", taken)
        agg_items.append(f"count(*) as {rc}")
        sel_new = [f"coalesce({alias}.{rc}, 0) as {rc}"]
        out.append(Col(rc, "num", "row_count"))
        nums = s.cols("num")
        rng.shuffle(nums)
        tot = None
        for n in nums[:2]:
            agg = rng.choice(["sum", "max", "avg"])
            word = {"sum": "total", "max": "max", "avg": "avg"}[agg]
            nm = _uniq(f"{short}_{word}_{n.root or n.name}", taken)
            agg_items.append(f"{agg}({n.name}) as {nm}")
            sel_new.append(f"coalesce({alias}.{nm}, 0) as {nm}" if agg == "sum" else f"{alias}.{nm}")
            out.append(Col(nm, "num", n.root or n.name))
            if agg == "sum" and tot is None:
                tot = nm
        other_keys = [k for k in s.cols("key") if k.name not in keys]
        if other_keys:
            k = rng.choice(other_keys)
            nm = _uniq(f"{short}_distinct_{k.name}s", taken)
            agg_items.append(f"count(distinct {k.name}) as {nm}")
            sel_new.append(f"coalesce({alias}.{nm}, 0) as {nm}")
            out.append(Col(nm, "num", "distinct"))
        dates = s.cols("date")
        if dates:
            d = rng.choice(dates)
            nm = _uniq(f"{short}_last_{d.root or d.name}_date", taken)
            agg_items.append(f"max({d.name}) as {nm}")
            sel_new.append(f"{alias}.{nm}")
            out.append(Col(nm, "date", d.root or d.name))
        if tot is not None:
            nm = _uniq(f"{short}_avg_per_row", taken)
            sel_new.append("{{ safe_divide('" + f"{alias}.{tot}', '{alias}.{rc}'" + ") }} as " + nm)
            out.append(Col(nm, "num", "avg_per_row"))
        band = _uniq(f"{short}_activity_band", taken)
        sel_new.append("case\n" + IND * 2 + f"when coalesce({alias}.{rc}, 0) = 0 then 'none'\n"
                       + IND * 2 + f"when {alias}.{rc} < 3 then 'low'\n" + IND * 2
                       + "else 'high'\n" + IND * 1 + f"end as {band}")
        out.append(Col(band, "cat"))
        ctes.append(_cte(alias, "select\n" + _select_list(agg_items, 1)
                         + f"\nfrom {{{{ ref('{s.name}') }}}}\ngroup by " + ", ".join(keys)))
        jt = "inner join" if rng.random() < 0.25 else "left join"
        cond = ("\n" + IND * 1 + "and ").join(f"{base.name}.{k} = {alias}.{k}" for k in keys)
        joins.append(f"{jt} {alias}\n{IND * 1}on {cond}")
        select += sel_new
    body = ("select\n" + _select_list(select, 1) + f"\nfrom {base.name}\n" + "\n".join(joins))
    ctes.append(_cte("final", body))
    return Model(name, layer, folder, "join", _with(ctes), out, base.entity,
                 refs=[base.name] + [s.name for s in secs], est_rows=base.est_rows, pk=None,
                 description=f"{base.entity.title()} enriched with "
                             + ", ".join(s.entity for s in secs) + ".")


def shape_aggregate(rng, name, layer, folder, base: Model) -> Model:
    taken: set[str] = set()
    keys = base.cols("key")
    key = rng.choice(keys)
    group_items = [key.name]
    out = [Col(key.name, "key")]
    taken.add(key.name)
    dates, cats, nums = base.cols("date"), base.cols("cat"), base.cols("num")
    period = None
    if dates and rng.random() < 0.6:
        d = rng.choice(dates)
        grain = rng.choice(["month", "month", "week", "quarter"])
        period = _uniq(f"{d.root or d.name}_{grain}", taken)
        group_items.append(f"cast(date_trunc('{grain}', {d.name}) as date) as {period}")
        out.append(Col(period, "date", d.root or d.name))
    elif cats and rng.random() < 0.5:
        c = rng.choice(cats)
        group_items.append(c.name)
        taken.add(c.name)
        out.append(c)
    items = list(group_items)
    rc = _uniq(f"{base.entity}_count", taken)
    items.append(f"count(*) as {rc}")
    out.append(Col(rc, "num", "count"))
    others = [k for k in keys if k.name != key.name]
    if others:
        k = rng.choice(others)
        nm = _uniq(f"distinct_{k.name}s", taken)
        items.append(f"count(distinct {k.name}) as {nm}")
        out.append(Col(nm, "num", "distinct"))
    nums = list(nums)
    rng.shuffle(nums)
    first_sum = None
    for n in nums[:2]:
        r = n.root or n.name
        for agg, word in rng.sample([("sum", "total"), ("avg", "avg"), ("min", "min"),
                                     ("max", "max")], 2):
            nm = _uniq(f"{word}_{r}", taken)
            items.append(f"{agg}({n.name}) as {nm}")
            out.append(Col(nm, "num", r))
            if agg == "sum" and first_sum is None:
                first_sum = n.name
    if dates:
        d = rng.choice(dates)
        for agg in ("min", "max"):
            nm = _uniq(f"{'first' if agg == 'min' else 'last'}_{d.root or d.name}_date", taken)
            items.append(f"{agg}({d.name}) as {nm}")
            out.append(Col(nm, "date", d.root or d.name))
    colnames = {c.name for c in base.columns}
    amt = next((n.name for n in base.cols("num")), None)
    if "status" in colnames:
        items.append("{%- for status in var('order_statuses') %}\n" + IND * 1
                     + "sum(case when status = '{{ status }}' then 1 else 0 end) as {{ status }}_count"
                     + "{{ ',' if not loop.last }}\n" + IND * 1 + "{%- endfor %}")
        for s in ORDER_STATUSES:
            assert f"{s}_count" not in taken
            taken.add(f"{s}_count")
            out.append(Col(f"{s}_count", "num", "count"))
    elif "payment_method" in colnames and amt:
        items.append("{%- for method in var('payment_methods') %}\n" + IND * 1
                     + f"sum(case when payment_method = '{{{{ method }}}}' then {amt} else 0 end)"
                     " as {{ method }}_total" + "{{ ',' if not loop.last }}\n" + IND * 1
                     + "{%- endfor %}")
        for m in PAYMENT_METHODS:
            assert f"{m}_total" not in taken
            taken.add(f"{m}_total")
            out.append(Col(f"{m}_total", "num", f"{m}_total"))
    where = ""
    if nums and rng.random() < 0.4:
        where = f"\nwhere {nums[0].name} >= 0"
    elif dates and rng.random() < 0.4:
        where = (f"\nwhere {dates[0].name} >= cast('{{{{ var(\"start_date\") }}}}' as date)")
    having = ""
    if rng.random() < 0.5:
        having = (f"\nhaving sum({first_sum}) >= 0" if first_sum and rng.random() < 0.5
                  else "\nhaving count(*) >= 1")
    body = ("select\n" + _select_list(items, 1) + "\nfrom src" + where + "\ngroup by "
            + ", ".join(str(i + 1) for i in range(len(group_items))) + having)
    ctes = [_ref_cte("src", base.name), _cte("final", body)]
    return Model(name, layer, folder, "aggregate", _with(ctes), out, base.entity,
                 refs=[base.name], est_rows=max(1.0, base.est_rows / 3),
                 pk=key.name if len(group_items) == 1 else None,
                 description=f"{base.entity.title()} aggregated by {key.name}"
                             + (f" and {period}" if period else "") + ".")


def shape_window(rng, name, layer, folder, base: Model, top_n: bool = False) -> Model:
    taken: set[str] = set()
    cols = _cap(base.columns, 10)
    for c in cols:
        taken.add(c.name)
    keys, dates, nums, cats = base.cols("key"), base.cols("date"), base.cols("num"), base.cols("cat")
    part = rng.choice(keys[1:] or cats or keys)
    order_col = dates[0].name if dates else keys[0].name
    tie = keys[0].name
    order = f"{order_col}, {tie}" if order_col != tie else tie
    over = f"partition by {part.name} order by {order}"
    items = [c.name for c in cols]
    out = list(cols)
    seq = _uniq(f"{part.name}_seq", taken)
    items.append(f"row_number() over ({over}) as {seq}")
    out.append(Col(seq, "num", "seq"))
    if nums:
        n = rng.choice(nums)
        r = n.root or n.name
        nm = _uniq(f"running_{r}", taken)
        items.append(f"sum({n.name}) over (\n{IND * 2}{over}\n{IND * 2}rows between unbounded "
                     f"preceding and current row\n{IND * 1}) as {nm}")
        out.append(Col(nm, "num", r))
        k = rng.choice([3, 7])
        nm = _uniq(f"{r}_{k}_row_avg", taken)
        items.append(f"avg({n.name}) over (\n{IND * 2}{over}\n{IND * 2}rows between {k - 1} "
                     f"preceding and current row\n{IND * 1}) as {nm}")
        out.append(Col(nm, "num", r))
        nm = _uniq(f"{r}_rank", taken)
        rp = f"partition by {cats[0].name} " if cats else ""
        items.append(f"dense_rank() over ({rp}order by {n.name} desc) as {nm}")
        out.append(Col(nm, "num", "rank"))
    if dates:
        nm = _uniq(f"previous_{dates[0].root or dates[0].name}_date", taken)
        items.append(f"lag({dates[0].name}) over ({over}) as {nm}")
        out.append(Col(nm, "date", dates[0].root or dates[0].name))
    ctes = [_ref_cte("src", base.name),
            _cte("windowed", "select\n" + _select_list(items, 1) + "\nfrom src")]
    final = "select *\nfrom windowed"
    rows = base.est_rows
    if top_n:
        final += f"\nwhere {seq} <= {rng.choice([1, 3, 5])}"
        rows = max(1.0, rows / 4)
    ctes.append(_cte("final", final))
    return Model(name, layer, folder, "window", _with(ctes), out, base.entity, refs=[base.name],
                 est_rows=rows, description=f"{base.entity.title()} with running metrics per "
                                            f"{part.name}.")


def shape_filter(rng, name, layer, folder, base: Model) -> Model:
    taken: set[str] = set()
    cols = _cap(base.columns, 12)
    for c in cols:
        taken.add(c.name)
    items = [c.name for c in cols]
    out = list(cols)
    nums, cats, dates = base.cols("num"), base.cols("cat"), base.cols("date")
    conds = []
    if nums:
        n = rng.choice(nums)
        lo, hi = sorted(rng.sample([0, 5, 20, 50, 100, 250], 2))
        tier = _uniq(f"{n.root or n.name}_tier", taken)
        items.append(f"case\n{IND * 2}when {n.name} >= {hi} then 'high'\n{IND * 2}when {n.name} >= "
                     f"{lo} then 'mid'\n{IND * 2}when {n.name} is null then 'unknown'\n{IND * 2}"
                     f"else 'low'\n{IND * 1}end as {tier}")
        out.append(Col(tier, "cat"))
        conds.append(f"coalesce({n.name}, 0) {rng.choice(['>=', '>', '<>'])} {rng.choice([-1, 0])}")
    if cats:
        c = rng.choice(cats)
        nm = _uniq(f"{c.name}_label", taken)
        items.append(f"coalesce(cast({c.name} as varchar), 'n/a') as {nm}")
        out.append(Col(nm, "cat"))
        conds.append(f"{c.name} is not null")
    if dates:
        d = rng.choice(dates)
        conds.append(f"{d.name} >= cast('{{{{ var(\"start_date\") }}}}' as date) - interval 2 year")
    k = rng.choice(base.cols("key"))
    conds.append(f"{k.name} {rng.choice(['>', '>='])} 0")
    if_block = ""
    if rng.random() < 0.5:
        if_block = "\n{% if target.name == 'prod' %}\n" + f"{IND}and {k.name} is not null\n" + "{% endif %}"
    body = ("select\n" + _select_list(items, 1) + "\nfrom src\nwhere "
            + ("\n" + IND + "and ").join(conds) + if_block)
    ctes = [_ref_cte("src", base.name), _cte("final", body)]
    return Model(name, layer, folder, "filter", _with(ctes), out, base.entity, refs=[base.name],
                 est_rows=base.est_rows * 0.8, pk=base.pk if base.pk in {c.name for c in out} else None,
                 description=f"Filtered and labelled {base.entity}.")


def shape_union(rng, name, layer, folder, parents: list[Model]) -> Model:
    common = set(c.name for c in parents[0].cols("key"))
    for p in parents[1:]:
        common &= {c.name for c in p.cols("key")}
    key = sorted(common)[0]
    with_date = all(p.cols("date") for p in parents)
    ctes, selects = [], []
    for p in parents:
        ctes.append(_ref_cte(p.name, p.name))
        nums = p.cols("num")
        meas = rng.choice(nums).name if nums else "1"
        parts = [f"cast({key} as integer) as {key}"]
        if with_date:
            parts.append(f"cast({rng.choice(p.cols('date')).name} as date) as activity_date")
        parts.append(f"cast({meas} as double) as measure_value")
        parts.append(f"'{p.name}' as record_source")
        selects.append("select\n" + _select_list(parts, 1) + f"\nfrom {p.name}")
    ctes.append(_cte("unioned", "\n\nunion all\n\n".join(selects)))
    ctes.append(_cte("final", "select *\nfrom unioned\nwhere measure_value is not null"))
    out = [Col(key, "key")] + ([Col("activity_date", "date", "activity")] if with_date else [])
    out += [Col("measure_value", "num", "measure"), Col("record_source", "cat")]
    return Model(name, layer, folder, "union", _with(ctes), out, parents[0].entity,
                 refs=[p.name for p in parents], est_rows=sum(p.est_rows for p in parents),
                 description="Activity of " + " and ".join(p.entity for p in parents) + " stacked.")


# --------------------------------------------------------------------------------------------
# the project


def layer_counts(n: int) -> tuple[int, int, int]:
    s = max(1, round(n * 0.3))
    m = max(1, round(n * 0.3))
    return s, n - s - m, m


INT_TOPICS = {"orders": "sales", "customers": "customers", "payments": "finance",
              "events": "engagement", "products": "catalog", "stores": "operations"}
MART_TOPICS = {"orders": "core", "customers": "core", "payments": "finance",
               "events": "marketing", "products": "core", "stores": "operations"}


def build_models(n: int, seed: int) -> list[Model]:
    if not MIN_MODELS <= n <= MAX_MODELS:
        raise ValueError(f"--models must be between {MIN_MODELS} and {MAX_MODELS}, got {n}")
    rng = random.Random(f"synth-models-{seed}-{n}")
    n_stg, n_int, n_mart = layer_counts(n)
    models: list[Model] = []
    variants: dict[str, int] = {}
    for i in range(n_stg):
        if i < len(SOURCE_TABLES):
            source, table, rows, entity = SOURCE_TABLES[i]
        else:
            source, table, rows, entity = rng.choice(SOURCE_TABLES)
        v = variants.get(table, 0)
        variants[table] = v + 1
        models.append(staging_model(rng, i, source, table, rows, entity, v))

    def pick(cands: list[Model], layer: str, idx: int) -> Model:
        name_prefix = "int" if layer == "intermediate" else ("dim" if rng.random() < 0.4 else "fct")
        # fan-in 1-3: mostly 1-2
        fan = rng.choices([1, 2, 3], weights=[45, 40, 15])[0]
        # Prefer recent parents a little (deeper DAGs), but reach everywhere.
        base = cands[min(len(cands) - 1, int(len(cands) * (rng.random() ** 0.7)))]
        secs: list[Model] = []
        if fan > 1:
            pool = [c for c in cands if c is not base and _keys_shared(base, c)]
            rng.shuffle(pool)
            secs = pool[: fan - 1]
        topic = (INT_TOPICS if layer == "intermediate" else MART_TOPICS)[base.entity]
        folder = f"{layer}/{topic}"
        r = rng.random()
        if secs:
            union_ok = (len(secs) == 1 and base.est_rows + secs[0].est_rows < 20_000
                        and layer == "intermediate")
            if union_ok and r < 0.25:
                nm = f"{name_prefix}_{base.entity}_unioned_{idx:04d}"
                return shape_union(rng, nm, layer, folder, [base] + secs)
            nm = f"{name_prefix}_{base.entity}_enriched_{idx:04d}"
            return shape_join(rng, nm, layer, folder, base, secs)
        if layer == "marts":
            shapes = [("aggregate", 0.5), ("window_top", 0.25), ("filter", 0.25)]
        else:
            shapes = [("aggregate", 0.4), ("window", 0.3), ("filter", 0.3)]
        kind = rng.choices([s for s, _ in shapes], weights=[w for _, w in shapes])[0]
        if kind == "aggregate":
            nm = f"{name_prefix}_{base.entity}_summary_{idx:04d}"
            return shape_aggregate(rng, nm, layer, folder, base)
        if kind.startswith("window"):
            nm = f"{name_prefix}_{base.entity}_{'ranked' if kind == 'window_top' else 'running'}_{idx:04d}"
            return shape_window(rng, nm, layer, folder, base, top_n=kind == "window_top")
        nm = f"{name_prefix}_{base.entity}_filtered_{idx:04d}"
        return shape_filter(rng, nm, layer, folder, base)

    for i in range(n_int):
        cands = models[:]  # staging + earlier intermediate
        models.append(pick(cands, "intermediate", n_stg + i))
    for i in range(n_mart):
        inter = [m for m in models if m.layer != "staging"]
        cands = inter if rng.random() < 0.85 else models[:]
        models.append(pick(cands, "marts", n_stg + n_int + i))
    return models


def _yaml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_project(n: int, seed: int, with_adegen: bool = False) -> dict[str, str]:
    """All files of the project as {relative path: text}."""
    models = build_models(n, seed)
    files: dict[str, str] = {}
    files["dbt_project.yml"] = f"""name: synth
version: "1.0.0"
config-version: 2
profile: synth

model-paths: ["models"]
seed-paths: ["seeds"]
macro-paths: ["macros"]
test-paths: ["tests"]
analysis-paths: ["analyses"]
target-path: "target"
clean-targets: ["target", "dbt_packages"]

vars:
  start_date: "{START_DATE}"
  exclude_cancelled: true
  payment_methods: [{", ".join(PAYMENT_METHODS)}]
  order_statuses: [{", ".join(ORDER_STATUSES)}]

models:
  synth:
    staging:
      +materialized: view
    intermediate:
      +materialized: view
    marts:
      +materialized: table
"""
    files["profiles.yml"] = """synth:
  target: dev
  outputs:
    dev:
      type: duckdb
      path: ./synth.duckdb
      schema: main
      threads: 1
"""
    if with_adegen:
        files["packages.yml"] = f"packages:\n  - local: {REPO_ROOT}\n"
    files["macros/cents_to_dollars.sql"] = """{% macro cents_to_dollars(column_name, scale=2) -%}
    round(cast({{ column_name }} as double) / 100, {{ scale }})
{%- endmacro %}
"""
    files["macros/safe_divide.sql"] = """{% macro safe_divide(numerator, denominator) -%}
    case
        when {{ denominator }} is null or {{ denominator }} = 0 then null
        else cast({{ numerator }} as double) / {{ denominator }}
    end
{%- endmacro %}
"""
    for table, rows in seed_tables(seed).items():
        files[f"seeds/{table}.csv"] = "\n".join(",".join(r) for r in rows) + "\n"
    src_lines = ["version: 2", "", "sources:"]
    for source in ("shop", "web"):
        src_lines += [f"  - name: {source}", "    schema: main", "    tables:"]
        src_lines += [f"      - name: {t}" for s, t, _, _ in SOURCE_TABLES if s == source]
    files["models/staging/_sources.yml"] = "\n".join(src_lines) + "\n"
    by_folder: dict[str, list[Model]] = {}
    for m in models:
        files[f"models/{m.folder}/{m.name}.sql"] = m.sql
        by_folder.setdefault(m.folder, []).append(m)
    for folder, ms in sorted(by_folder.items()):
        lines = ["version: 2", "", "models:"]
        for m in ms:
            lines += [f"  - name: {m.name}", f"    description: {_yaml_str(m.description)}",
                      "    columns:"]
            for c in m.columns:
                lines.append(f"      - name: {c.name}")
                if c.name == m.pk:
                    lines += ["        data_tests:", "          - not_null", "          - unique"]
        files[f"models/{folder}/_{folder.split('/')[-1]}__models.yml"] = "\n".join(lines) + "\n"
    files[".gitignore"] = "target/\nlogs/\ndbt_packages/\n*.duckdb\n*.duckdb.wal\n"
    return files


def tree_hash(root: Path) -> str:
    """sha256 over (relative path, bytes) of every file, ignoring dbt/DuckDB artifacts."""
    h = hashlib.sha256()
    skip = {"target", "logs", "dbt_packages"}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if p.is_dir() or rel.parts[0] in skip or p.suffix in (".duckdb", ".wal"):
            continue
        h.update(rel.as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def generate(n: int, seed: int, out: Path | str, *, with_adegen: bool = False,
             force: bool = False) -> dict:
    """Write the project to `out`; returns a summary {models, layers, files, path}."""
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        if not force:
            raise FileExistsError(f"{out} exists and is not empty (use --force)")
        shutil.rmtree(out)
    files = render_project(n, seed, with_adegen)
    for rel, text in sorted(files.items()):
        p = out / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8", newline="\n")
    s, i, m = layer_counts(n)
    return {"path": str(out.resolve()), "models": n, "seed": seed,
            "layers": {"staging": s, "intermediate": i, "marts": m}, "files": len(files)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", type=int, required=True, help=f"{MIN_MODELS}..{MAX_MODELS}")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True)
    ap.add_argument("--with-adegen", action="store_true",
                    help="write packages.yml with `- local: <adegen repo root>`")
    ap.add_argument("--force", action="store_true", help="replace a non-empty --out")
    a = ap.parse_args(argv)
    try:
        info = generate(a.models, a.seed, a.out, with_adegen=a.with_adegen, force=a.force)
    except (ValueError, FileExistsError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {info['models']} models ({info['layers']}) to {info['path']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
