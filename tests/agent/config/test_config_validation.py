"""Bad config and bad task input: one line naming the file, the key, the value and the fix,
exit 2, nothing written to the ledger; a broken task folder breaks only itself."""

from __future__ import annotations

import os

import pytest

from agent.config import MAX_CONCURRENCY, load_config
from tests.conftest import FIXTURES
from tuiapp.cli import main
from verifiers.tasks import load_suite

SMOKE = FIXTURES / "smoke"
RUN = f'[run]\nsuites = ["{SMOKE}"]\n'
ARM = '[[arms]]\nname = "A"\nkind = "scripted"\nmodel = "solver"\n'

# (case, config text, key named in the message, a word of the problem)
CASES = [
    ("tasks is a string", RUN + 'tasks = "py-add"\n' + ARM, "run.tasks", "array"),
    ("stream is a word", RUN + ARM + 'stream = "yes"\n', "arms[0].stream", "bool"),
    ("temperature is a word", RUN + ARM + 'temperature = "hot"\n', "arms[0].temperature", "float"),
    (
        "extra_args is a string",
        RUN + ARM + '[arms.llamacpp]\nmodel_path = "m.gguf"\nextra_args = "--foo"\n',
        "arms[0].llamacpp.extra_args",
        "array",
    ),
    ("max_turns zero", RUN + "[run.limits]\nmax_turns = 0\n" + ARM, "run.limits.max_turns", ">= 1"),
    ("max_turns negative", RUN + "[run.limits]\nmax_turns = -5\n" + ARM, "run.limits.max_turns", ">= 1"),
    ("cap_tokens a float", RUN + ARM + "cap_tokens = 1.5e3\n", "arms[0].cap_tokens", "int"),
    (
        "max_concurrency huge",
        RUN + ARM + "max_concurrency = 1000000\n",
        "arms[0].max_concurrency",
        f"<= {MAX_CONCURRENCY}",
    ),
    ("cap past 2**63", RUN + ARM + "cap_tokens = 9223372036854775808\n", "arms[0].cap_tokens", "<="),
    ("seed past 2**64", RUN + ARM + "seed = 36893488147419103232\n", "arms[0].seed", "<="),
    ("header value an int", RUN + ARM + "headers = {X = 5}\n", "arms[0].headers", "str"),
    ("max_retries negative", RUN + ARM + "max_retries = -1\n", "arms[0].max_retries", ">= 0"),
    ("suites of numbers", "[run]\nsuites = [123]\n" + ARM, "run.suites[0]", "path"),
    ("arms of numbers", "arms = [1, 2]\n" + RUN, "arms[0]", "not a table"),
    ("timeout inf", RUN + "[run.limits]\nattempt_timeout_s = inf\n" + ARM, "run.limits.attempt_timeout_s", "<="),
    ("timeout nan", RUN + "[run.limits]\nattempt_timeout_s = nan\n" + ARM, "run.limits.attempt_timeout_s", "> 0"),
    ("max_attempts a bool", RUN + "max_attempts = true\n" + ARM, "run.max_attempts", "int"),
    ("price a word", RUN + ARM + 'price = { input_per_mtok = "cheap" }\n', "arms[0].price", "float"),
    (
        "a name with a newline",
        RUN + '[[arms]]\nname = "A\\nB"\nkind = "scripted"\nmodel = "solver"\n',
        "arms[0].name",
        "regex",
    ),
    (
        "base_url without scheme",
        RUN + '[[arms]]\nname = "A"\nmodel = "m"\nbase_url = "localhost:8000"\n',
        "arms[0].base_url",
        "regex",
    ),
    ("unknown key", RUN + ARM + "temprature = 0.2\n", "arms[0].temprature", "unknown key"),
    ("preflight mode unknown", RUN + 'preflight = "maybe"\n' + ARM, "run.preflight", "not a preflight mode"),
    ("preflight a bool", RUN + "preflight = true\n" + ARM, "run.preflight", "str"),
    ("context_tokens tiny", RUN + ARM + "context_tokens = 10\n", "arms[0].context_tokens", ">= 256"),
    (
        "gguf_sha256 not hex",
        RUN + ARM.replace('"scripted"', '"llamacpp"') + '[arms.llamacpp]\nmodel_path = "m.gguf"\ngguf_sha256 = "abc"\n',
        "arms[0].llamacpp.gguf_sha256",
        "regex",
    ),
    (
        "context twice",
        RUN + ARM.replace('"scripted"', '"llamacpp"') + "context_tokens = 4096\n[arms.llamacpp]\n"
        'model_path = "m.gguf"\nn_ctx = 2048\n',
        "arms[0].context_tokens",
        "differs from llamacpp.n_ctx",
    ),
    (
        "scripted switches on an openai arm",
        RUN + '[[arms]]\nname = "A"\nmodel = "m"\nbase_url = "http://x/v1"\n[arms.scripted]\ntool_calls = false\n',
        "arms[0].scripted",
        "only a scripted arm",
    ),
    (
        "session_seeds of words",
        RUN + ARM + '[arms.scripted]\nsession_seeds = ["a"]\n',
        "arms[0].scripted.session_seeds",
        "int",
    ),
    ("prompt template unknown", RUN + 'prompt_template = "v2"\n' + ARM, "run.prompt_template", "not a prompt template"),
    ("price key misspelt", RUN + ARM + "price = { input = 0.15 }\n", "arms[0].price.input", "not a price key"),
    (
        "price without output",
        RUN + ARM + "price = { input_per_mtok = 0.15 }\n",
        "arms[0].price = { input_per_mtok = 0.15 }",
        "lacks output_per_mtok",
    ),
    (
        "price of both kinds",
        RUN + ARM + "price = { gpu_hour = 1.6, input_per_mtok = 0.15 }\n",
        "arms[0].price",
        "mixes gpu_hour with input_per_mtok",
    ),
    ("utilization zero", RUN + ARM + "price = { gpu_hour = 1.6, utilization = 0 }\n", "arms[0].price", "(0, 1]"),
    ("utilization alone", RUN + ARM + "price = { utilization = 0.5 }\n", "arms[0].price", "without gpu_hour"),
    (
        "one server priced twice",
        RUN
        + ARM.replace('"scripted"', '"openai"')
        + 'base_url = "http://h/v1"\nprice = { gpu_hour = 1 }\n'
        + ARM.replace('"A"', '"B"').replace('"scripted"', '"openai"')
        + 'base_url = "http://h/v1"\nprice = { gpu_hour = 2 }\n',
        "arms.price",
        "share one server but price it differently",
    ),
    ("a suite twice", RUN.replace(f'"{SMOKE}"]', f'"{SMOKE}", "{SMOKE}/../smoke"]') + ARM, "run.suites", "twice"),
    ("preflight budget zero", RUN + "preflight_budget_tokens = 0\n" + ARM, "run.preflight_budget_tokens", ">= 1000"),
    ("unknown run key", RUN + "max_attempt = 2\n" + ARM, "run.max_attempt", "unknown key"),
    # keys the loader fills itself were silently overwritten
    ("run.path", RUN + 'path = "/etc"\n' + ARM, "run.path", "unknown key"),
    ("arms under run", RUN + "arms = []\n" + ARM, "run.arms", "not a [run] key — write it as an [[arms]] table"),
    ("validate under run", RUN + "validate = { mutants = true }\n" + ARM, "run.validate", "not a [run] key"),
    ("arms empty", "arms = []\n" + RUN, "arms", "no [[arms]] tables"),
]


@pytest.mark.parametrize("case,text,key,problem", CASES, ids=[c[0] for c in CASES])
def test_bad_config_is_one_line_exit_2_and_nothing_written(tmp_path, capsys, case, text, key, problem):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(text)
    db = tmp_path / "l.sqlite"
    assert main(["run", str(cfg), "--db", str(db), "--headless"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert str(cfg) in err and f"{key}" in err and problem in err and " — " in err, err
    assert not db.exists()


def test_an_unknown_run_key_lists_the_keys_a_file_may_set(tmp_path, capsys):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(RUN + 'path = "/etc"\n' + ARM)
    assert main(["preflight", str(cfg)]) == 2
    valid = capsys.readouterr().err.strip().rpartition("valid keys are ")[2].split(", ")
    assert "limits" in valid and "suites" in valid
    assert not {"path", "arms", "validate"} & set(valid), valid


def test_a_config_that_is_not_utf8_is_one_line(tmp_path, capsys):
    cfg = tmp_path / "latin1.toml"
    cfg.write_bytes((RUN + ARM).encode() + b"# caf\xe9\n")
    assert main(["run", str(cfg), "--db", str(tmp_path / "l.sqlite"), "--headless"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "UTF-8" in err and not (tmp_path / "l.sqlite").exists()


def test_a_good_config_still_loads_with_its_types(tmp_path):
    cfg = tmp_path / "ok.toml"
    cfg.write_text(
        RUN
        + 'tasks = ["py-word-count"]\n[run.limits]\nattempt_timeout_s = 30\n'
        + ARM
        + 'headers = { "X-Team" = "qb" }\nprice = { input_per_mtok = 1, output_per_mtok = 2.5 }\n'
    )
    config = load_config(cfg)
    assert config.tasks == ("py-word-count",) and config.limits.attempt_timeout_s == 30.0
    assert config.arms[0].headers == {"X-Team": "qb"} and config.arms[0].price["input_per_mtok"] == 1.0
    assert config.suites == (SMOKE,) and config.path == cfg


def test_db_in_a_config_is_relative_to_its_folder_and_the_default_to_the_working_folder(tmp_path):
    (tmp_path / "sub").mkdir()
    cfg = tmp_path / "sub" / "run.toml"
    cfg.write_text(RUN + 'db = "ledgers/runs.sqlite"\nprompt_template = "v1"\n' + ARM)
    assert load_config(cfg).db == tmp_path / "sub" / "ledgers" / "runs.sqlite"
    cfg.write_text(RUN + f'db = "{tmp_path / "abs.sqlite"}"\n' + ARM)
    assert load_config(cfg).db == tmp_path / "abs.sqlite"
    cfg.write_text(RUN + ARM)
    assert str(load_config(cfg).db) == "quotabench.sqlite"  # no db key: ./quotabench.sqlite, where report looks


def _task(root, name, **files):
    folder = root / name
    for rel, content in {
        "task.toml": f'id = "{name}"\nlanguage = "python"\nkind = "bugfix"\n'
        'visible_cmd = "true"\nhidden_cmd = "true"\n',
        "workspace/a.py": "x = 1\n",
        "hidden/test_a.py": "def test(): pass\n",
        "reference/a.py": "x = 2\n",
        **files,
    }.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return folder


def test_broken_task_folders_break_only_themselves(tmp_path):
    suite = tmp_path / "suite"
    base = 'language = "python"\nkind = "bugfix"\nvisible_cmd = "true"\nhidden_cmd = "true"\n'
    _task(suite, "good", **{"task.toml": 'id = "good"\nprompt = "fix it"\n' + base})
    _task(suite, "latin1", **{"task.toml": 'id = "latin1"\n' + base, "prompt.md": b"caf\xe9 au lait\n"})
    _task(suite, "nan", **{"task.toml": 'id = "nan"\nprompt = "p"\ntimeout_s = nan\n' + base})
    _task(suite, "inf", **{"task.toml": 'id = "inf"\nprompt = "p"\ntimeout_s = inf\n' + base})
    _task(suite, "intprompt", **{"task.toml": 'id = "intprompt"\nprompt = 5\n' + base})
    _task(suite, "memory", **{"task.toml": 'id = "memory"\nprompt = "p"\nmemory_mb = 99999999999\n' + base})
    looped = _task(suite, "looped", **{"task.toml": 'id = "looped"\nprompt = "p"\n' + base})
    os.symlink(looped / "workspace" / "loop", looped / "workspace" / "loop")
    os.symlink("prompt.md", looped / "prompt.md")
    loaded = load_suite(suite)
    assert [t.id for t in loaded.tasks] == ["good"]
    problems = {p.path.name: str(p) for p in loaded.problems}
    assert set(problems) == {"latin1", "nan", "inf", "intprompt", "memory", "looped"}, problems
    assert "UTF-8" in problems["latin1"] and "timeout_s" in problems["nan"] and "memory_mb" in problems["memory"]
    assert all("\n" not in text and " — " in text for text in problems.values())


def test_validate_lists_broken_tasks_as_broken_lines(tmp_path, capsys):
    suite = tmp_path / "suite"
    _task(
        suite,
        "latin1",
        **{
            "task.toml": 'id = "latin1"\nlanguage = "python"\nkind = "bugfix"\n'
            'visible_cmd = "true"\nhidden_cmd = "true"\n',
            "prompt.md": b"\xff\xfe\n",
        },
    )
    assert main(["validate", str(suite)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("BROKEN ") and "UTF-8" in err and "Traceback" not in err


def test_percent_and_underscore_in_a_run_id_prefix_are_literal(tmp_path):
    from agent.ledger import Ledger

    ledger = Ledger(tmp_path / "l.sqlite")
    ledger.insert("runs", {"id": "01ABC", "created_utc": "2026-01-01", "status": "finished"})
    ledger.insert("runs", {"id": "01ABD", "created_utc": "2026-01-02", "status": "finished"})
    assert ledger.resolve_run_id("01ABC") == "01ABC"
    for prefix in ("%", "01AB_", "_"):
        with pytest.raises(Exception, match="no run with id starting"):
            ledger.resolve_run_id(prefix)


def test_each_endpoint_knob_is_documented_reaches_the_client_and_sampling_is_recorded():
    """One definition (agent.config.EndpointKnobs): the docs list each knob, the client gets each
    one as configured, and the ledger's sampling_json is derived from the same fields."""
    from dataclasses import fields

    from agent.config import ArmConfig, EndpointKnobs
    from agent.run.arms import settings_for

    doc = (FIXTURES.parent / "docs" / "config.md").read_text()
    keys = " ".join(line.split("|")[1] for line in doc.splitlines() if line.startswith("| `"))  # first cells
    assert [f.name for f in fields(EndpointKnobs) if f"`{f.name}`" not in keys] == []
    arm = ArmConfig(
        name="A",
        base_url="http://x/v1",
        model="m",
        temperature=0.3,
        top_p=0.9,
        max_tokens=77,
        seed=5,
        headers={"X": "y"},
        request_timeout_s=9.0,
        max_concurrency=3,
        max_retries=1,
        stream=False,
        tool_choice="auto",
    )
    settings = settings_for(arm, "http://y/v1")
    assert {f.name: getattr(settings, f.name) for f in fields(EndpointKnobs)} == {
        f.name: getattr(arm, f.name) for f in fields(EndpointKnobs)
    }
    assert (settings.base_url, settings.model) == ("http://y/v1", "m")
    assert arm.sampling() == {
        "temperature": 0.3,
        "top_p": 0.9,
        "max_tokens": 77,
        "seed": 5,
        "stream": False,
        "tool_choice": "auto",
        "retry_seed": False,
        "retry_temperature": None,
    }


def test_every_arm_kind_the_config_accepts_has_a_factory_and_no_factory_lacks_a_name():
    """agent.config owns the kind names; agent/run/arms.py keys its factories by them."""
    from agent.config import ARM_KINDS
    from agent.run.arms import FACTORIES

    assert list(FACTORIES) == list(ARM_KINDS)
