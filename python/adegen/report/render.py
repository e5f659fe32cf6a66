"""Render the page with jinja2 and write it atomically as `<output_dir>/report.html`.

The page is one self-contained file: the stylesheet (ours + Pygments') and the small filter
script are inlined, and a Content-Security-Policy of `default-src 'none'` forbids every fetch, so
it opens from the file system with no server and cannot reach the network."""
from __future__ import annotations

import os
import tempfile
from importlib import resources
from pathlib import Path

import jinja2
from markupsafe import Markup

from adegen.report.calibration import by_task, read_rows
from adegen.core.errors import AdegenError, InputError
from adegen.catalog.patterns import load_catalog
from adegen.report.assemble import Context, assemble
from adegen.report.dag import NODE_H
from adegen.report.folders import read_task_folders
from adegen.report.highlight import stylesheet
from adegen.report.model import Page
from adegen.report.records import RECORDS_DIR, load_records

REPORT_NAME = "report.html"


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("templates", name).read_text(encoding="utf-8")


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader(__package__, "templates"),
        autoescape=True, trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined,
    )
    env.filters["secs"] = lambda v: "" if v is None else f"{v:.1f} s"
    return env


def render_page(page: Page) -> str:
    """The page's HTML. Task details are kept as the text of inert script elements (see
    report.js), which is safe because every value is HTML-escaped: no `</script` can come from data."""
    css = Markup(_asset("report.css") + "\n" + stylesheet())
    return _environment().get_template("report.html.j2").render(
        page=page, css=css, js=Markup(_asset("report.js")), node_h=NODE_H)


def _catalog():
    """The shipped pattern catalog, for naming the pattern of a task without a record; None when it
    cannot be loaded (the page then shows what the patch alone tells)."""
    try:
        return load_catalog()
    except AdegenError:
        return None


def render_report(output_dir: Path, *, run_doc: dict | None = None, graph: dict | None = None) -> tuple[str, Page]:
    """The page's HTML and its view model, from what is under `output_dir` (plus `run_doc`)."""
    output_dir = Path(output_dir)
    if not output_dir.is_dir():
        raise InputError("is not a directory", file=output_dir)
    records = load_records(output_dir, run_doc)
    folders = read_task_folders(output_dir)
    if not folders and not records.runs:
        raise InputError(f"nothing to report: no task folders (tasks/) and no run record ({RECORDS_DIR})",
                         file=output_dir)
    measured = by_task(read_rows(output_dir))
    page = assemble(output_dir, folders, Context(records, _catalog(), graph, measured=measured))
    return render_page(page), page


def write_report(output_dir: Path, *, run_doc: dict | None = None, graph: dict | None = None) -> Path:
    """Write `<output_dir>/report.html` (atomically: a temp file renamed over it) and return its
    path. `run_doc`: the current run's record when the caller holds it in memory (a file under
    `.adegen/runs/` with the same run_id is not counted twice); `graph`: a discovery graph
    (`graph_from_discovery`) to draw the DAGs with, preferred over the records'."""
    html, _page = render_report(output_dir, run_doc=run_doc, graph=graph)
    target = Path(output_dir) / REPORT_NAME
    fd, tmp = tempfile.mkstemp(prefix=".report-", suffix=".html.tmp", dir=output_dir)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(html)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
