"""--prompt-command: an external program writes the prompts from a JSON document on stdin; adegen
still checks every text and keeps its own on failure, timeout or a text that fails a check."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from adegen.propose.model import Proposal

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_prompts import obs, request, value_table  # noqa: E402

from adegen import prompts  # noqa: E402
from adegen.cli.build_args import parse_args
from adegen.core.errors import InputError  # noqa: E402
from adegen.prompts.command import PromptCommand, apply, parse_output, rewrite_proposals  # noqa: E402


def fake(tmp_path: Path, body: str) -> str:
    """A command line running a small Python program that reads the document on stdin."""
    script = tmp_path / f"fake_{abs(hash(body))}.py"
    script.write_text("import json, sys, time\ndoc = json.load(sys.stdin)\n" + body)
    return f"{sys.executable} {script}"


@pytest.fixture()
def pset():
    tables = [value_table("int_accounts", 0, column="csat_score"), value_table("mart_account_360", 1)]
    return prompts.write_prompts(request(obs(*tables), model="int_accounts"))


def test_command_texts_used_and_the_document_it_reads(tmp_path, pset):
    seen = tmp_path / "doc.json"
    cmd = fake(tmp_path, f"""
open({str(seen)!r}, "w").write(json.dumps(doc))
print(json.dumps({{"base": "CSAT in int_accounts is far too high for Helio Systems: 18, should be 4.5.",
                   "medium": "mart_account_360 shows inflated CSAT numbers.",
                   "hard": "Customer satisfaction in mart_account_360 looks too good to be true."}}))
""")
    new = apply(PromptCommand(cmd, timeout=30), pset)
    assert new.sources == {"base": "command", "medium": "command", "hard": "command"}
    assert new.prompts["base"].startswith("CSAT in int_accounts")
    assert new.tables == ["int_accounts", "mart_account_360"]
    doc = json.loads(seen.read_text())
    assert doc["changed_tables"] == ["int_accounts", "mart_account_360"]
    assert [lv["key"] for lv in doc["levels"]] == ["base", "medium", "hard"]
    assert doc["levels"][0]["adegen_prompt"] == pset.prompts["base"] and doc["levels"][0]["hint"]
    assert "sum" in doc["forbidden"] and "avg" in doc["forbidden"]  # the changed tokens
    assert doc["diff"][0]["table"] == "int_accounts" and doc["diff"][0]["columns"][0]["sample"]


def test_texts_failing_a_check_keep_adegens(tmp_path, pset):
    cmd = fake(tmp_path, """
print(json.dumps({"base": "Someone changed avg to sum in int_accounts.",
                  "medium": "dim_accounts has 1 rows; the intact build has 4",
                  "hard": "stg_accounts looks wrong."}))
""")
    new = apply(PromptCommand(cmd, timeout=30), pset)
    assert new.prompts == pset.prompts
    assert "mentions 'sum'" in new.sources["base"] and new.sources["base"].startswith("adegen (command:")
    assert "tool words" in new.sources["medium"]
    assert "does not differ in the broken state" in new.sources["hard"]


def test_timeout_and_failure_fall_back(tmp_path, pset):
    slow = fake(tmp_path, "time.sleep(30)\nprint('too late')\n")
    t0 = time.monotonic()
    new = apply(PromptCommand(slow, timeout=1), pset)
    assert time.monotonic() - t0 < 20
    assert new.prompts == pset.prompts and all("timed out after 1 s" in s for s in new.sources.values())
    broken = fake(tmp_path, "sys.stderr.write('no model available\\n')\nsys.exit(3)\n")
    new = apply(PromptCommand(broken, timeout=30), pset)
    assert new.prompts == pset.prompts and "exit 3: no model available" in new.sources["base"]
    empty = fake(tmp_path, "print('')\n")
    assert "no prompt in its output" in apply(PromptCommand(empty, timeout=30), pset).sources["base"]


def test_plain_text_is_the_base_prompt_and_keys_stay_adegens(tmp_path, pset):
    assert parse_output("  just text \n") == {"base": "just text"}
    assert parse_output('{"prompts": {"base": "x", "extra": "y"}}') == {"base": "x"}
    cmd = fake(tmp_path, "print('The CSAT numbers in int_accounts look inflated. Can you fix it?')\n")
    new = apply(PromptCommand(cmd, timeout=30), pset)
    assert new.sources["base"] == "command" and new.sources["medium"].startswith("adegen (command: no text")
    assert list(new.prompts) == list(pset.prompts)


def test_repeats_are_refused(tmp_path, pset):
    cmd = fake(tmp_path, "print(json.dumps({'base': 'Same text.', 'medium': 'Same text.'}))\n")
    new = apply(PromptCommand(cmd, timeout=30), pset, avoid={"Same text."})
    assert new.sources["base"].startswith("adegen (command: repeats")


def test_rewrite_proposals_updates_in_place(tmp_path, pset):
    p = Proposal(number=1, model="int_accounts", model_unique_id="model.p.int_accounts",
                 model_path="models/int_accounts.sql", layer="intermediate", pattern_id="p", pattern_name="p",
                 family="f", difficulty="easy", why_model="", realistic="", prompt="", prompt_source="",
                 description="", assertion_tests=[], novelty="", closest_task=None, site=None, original=b"",
                 mutant=b"", compared_table="int_accounts", test_setup_models=[], solution_rebuild=[], tags=[])
    p.use_prompt_set(pset)
    assert p.prompt == pset.base and [lv.key for lv in p.levels] == list(pset.prompts)
    cmd = fake(tmp_path, "print(json.dumps({'base': 'CSAT in int_accounts is way too high.'}))\n")
    lines = []
    rewrite_proposals(cmd, [p], progress=lines.append)
    assert p.prompt == "CSAT in int_accounts is way too high." and p.prompt_source == "command"
    assert p.prompts["medium"] == pset.prompts["medium"] and lines
    assert p.levels[0].text == p.prompt and p.prompt_set.sources["base"] == "command"


def test_cli_option(tmp_path):
    proj = Path(__file__).resolve().parent / "fixtures" / "shopfix"
    opts = parse_args([str(proj), "--prompt-command", "my-llm --level x", "--output-dir", str(tmp_path / "o")])
    assert opts.prompt_command == "my-llm --level x"
    with pytest.raises(InputError):
        parse_args([str(proj), "--prompt-command", " ", "--output-dir", str(tmp_path / "o")])

