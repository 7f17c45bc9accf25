"""The command line under bad input: the four tracebacks of the robustness issue and its accepted absurdities
end in an error that names the option and what to give, every numeric option states a range that is
enforced, and the exit statuses keep "nothing fits" (1), "you typed it wrong" (2) and "a bug" (3) apart.
Runs ``gpuplan`` in-process (``cli.main``), as the fuzzer does."""

from __future__ import annotations

import contextlib
import contextvars
import io
import json
from pathlib import Path
from typing import Any

import pytest
import typer.main

from gpuplan import cli
from gpuplan.catalog import BUNDLED_DIR
from gpuplan.options import RANGES

REPO = Path(__file__).resolve().parent.parent
HUGE = "9" * 400


def run(*argv: str) -> tuple[int, str, str]:
    """``gpuplan ARGV`` in-process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code: Any = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            contextvars.copy_context().run(cli.main, list(argv))
        except SystemExit as exc:
            code = exc.code
    return (code if isinstance(code, int) else 0), out.getvalue(), err.getvalue()


def refused(argv: tuple[str, ...], *needles: str) -> str:
    """``argv`` exits 2 with ``error: …`` and ``To fix: …`` containing every needle, and no traceback."""
    code, out, err = run(*argv)
    assert code == 2, (argv, code, out[-500:], err[-500:])
    assert err.startswith("error: ") and "To fix: " in err and "Traceback" not in out + err, err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


# ---------------------------------------------------------------- the four tracebacks


LONG = "a" * 300  # over the 255-byte limit of a file name


@pytest.mark.parametrize(("argv", "option"), [
    (("estimate", LONG), "model"),
    (("model", LONG), "model"),
    (("fit", "x/" * 2100), "model"),  # over the 4096-byte limit of a path
    (("--catalog", LONG, "gpus"), "--catalog"),
    (("plan", "infer", "Qwen2.5-0.5B", "--export", "vllm", "--out", f"{LONG}.sh"), "--out"),
], ids=["estimate", "model", "path", "catalog", "out"])
def test_names_and_paths_too_long_for_the_file_system_name_the_option(argv: tuple[str, ...], option: str) -> None:
    err = refused(argv, f"error: {option}: ", "too long for a name or a path")
    assert len(err) < 600  # the 300 characters are echoed at most 200 long


def test_a_home_folder_of_a_user_this_machine_lacks_is_an_input_error() -> None:
    # found by the 48,853-case fuzz run: Path('~0').expanduser() raises RuntimeError
    code, _, err = run("estimate", "~no-such-user-0")
    assert code == 2 and err.startswith("error: model: '~no-such-user-0' is not a model preset"), err


def test_buy_json_writes_an_infinite_break_even_as_null_like_the_api() -> None:
    # at European household power the 4090's electricity alone costs more than renting one
    code, out, err = run("buy", "--gpu", "RTX4090", "--electricity", "0.45USD", "--json")
    assert code == 0, err
    row = json.loads(out)[0]
    assert row["break_even_hours_per_month"] is None
    assert "renting is cheaper at any use" in row["verdict"]


@pytest.mark.parametrize("argv", [
    ("estimate", "Qwen2.5-0.5B", "--batch", HUGE), ("estimate", "Qwen2.5-0.5B", "--tp", HUGE),
    ("plan", "infer", "Qwen2.5-0.5B", "--top", HUGE), ("plan", "infer", "Qwen2.5-0.5B", "--max-gpus", HUGE),
    ("fit", "Qwen2.5-0.5B", "--context", HUGE), ("buy", "--gpu", "H100", "--n-gpus", HUGE),
    ("offers", "--limit", HUGE), ("web", "--port", HUGE),
], ids=lambda a: a[-2])
def test_integers_beyond_floats_are_refused_naming_the_option_and_range(argv: tuple[str, ...]) -> None:
    option = argv[-2]
    err = refused(argv, f"error: {option}: a 400-digit number is out of range", f"give {option} ")
    assert HUGE not in err


def test_a_port_beyond_65535_and_an_empty_host_are_refused() -> None:
    refused(("web", "--port", "99999"), "--port", "1 to 65,535")
    refused(("web", "--host", ""), "--host", "every interface", "127.0.0.1")


# ---------------------------------------------------------------- accepted absurdities


@pytest.mark.parametrize(("argv", "needles"), [
    (("buy", "--gpu", "H100", "--years", "1e308"), ("--years", "at most 50 years")),
    (("estimate", "Qwen2.5-0.5B", "--n-gpus", "1" + "0" * 40), ("--n-gpus", "1 to 100,000")),
    (("plan", "infer", "Qwen2.5-0.5B", "--deadline", "1e308"), ("--deadline", "'1e308' has no unit")),
    (("plan", "infer", "Qwen2.5-0.5B", "--deadline", "50"), ("--deadline", "'50' has no unit")),
    (("plan", "infer", "Qwen2.5-0.5B", "--deadline", "1h30"), ("--deadline", "'30' in '1h30' has no unit")),
    (("plan", "infer", "Qwen2.5-0.5B", "--deadline", "100000d"), ("--deadline", "(10 years)")),
    (("plan", "serve", "Qwen2.5-0.5B", "--ttft", "2h"), ("--ttft", "'2h' is out of range", "3,600 seconds")),
    (("offers", "--limit", "-1"), ("--limit", "0 to 1,000,000 (0: all)")),
    (("plan", "infer", "Qwen2.5-0.5B", "--out", "task.yaml"), ("--out", "no --export was given")),
    (("plan", "infer", "Qwen2.5-0.5B", "--budget", "1e400USD"), ("--budget", "not a finite number")),
    (("plan", "infer", "Qwen2.5-0.5B", "--budget", "1e13USD"), ("--budget", "out of range")),
    (("buy", "--gpu", "H100", "--electricity", "500USD"), ("--electricity", "per kWh")),
    (("buy", "--gpu", "H100", "--pue", "0.5"), ("--pue", "facility power over IT power")),
    (("gpus", "--min-memory", "1e30GB"), ("--min-memory", "1024 TiB")),
    (("offers", "--min-gpus", "nan"), ("--min-gpus", "nan is out of range")),
    (("estimate", "Qwen2.5-0.5B", "--task", "finetune", "--tokens", "1M", "--epochs", "inf"), ("--epochs",)),
    (("plan", "finetune", "Qwen2.5-0.5B", "--dataset-tokens", "1e20"), ("--dataset-tokens", "out of range")),
], ids=["years", "n-gpus", "deadline-1e308", "deadline-50", "deadline-1h30", "deadline-beyond", "ttft", "limit",
        "out-without-export", "budget-inf", "budget-huge", "electricity", "pue", "min-memory", "min-gpus-nan",
        "epochs-inf", "dataset-tokens"])
def test_absurd_values_are_refused_not_planned(argv: tuple[str, ...], needles: tuple[str, ...]) -> None:
    refused(argv, *needles)


def test_an_echoed_value_is_cut_to_200_characters() -> None:
    err = refused(("estimate", "Qwen2.5-0.5B", "--gpu", "x" * 5000), "--gpu", "unknown GPU")
    assert "x" * 200 + "…" in err and "x" * 201 not in err


# ---------------------------------------------------------------- one table of ranges


def _numeric_options() -> list[tuple[str, Any, Any]]:
    """(command path, command, option) for every int or float option of every command."""
    found = []

    def walk(cmd: Any, path: tuple[str, ...]) -> None:
        for name, sub in sorted((getattr(cmd, "commands", None) or {}).items()):
            walk(sub, (*path, name))
        if not getattr(cmd, "commands", None):
            for p in cmd.params:
                kind = getattr(getattr(p, "type_descriptor", None), "annotation", None)
                if p.param_type_name == "option" and kind in (int, float):
                    found.append((" ".join(path), cmd, p))

    walk(typer.main.get_command(cli.app), ())
    return found


NUMERIC = _numeric_options()
# the arguments each command needs before its options are looked at
NEEDS = {"estimate": ["Qwen2.5-0.5B"], "plan finetune": ["Qwen2.5-0.5B"], "plan infer": ["Qwen2.5-0.5B"],
         "plan serve": ["Qwen2.5-0.5B"], "plan pretrain": ["Qwen2.5-0.5B", "--tokens", "1B"],
         "fit": ["Qwen2.5-0.5B"], "compare": ["H100", "A100"], "model": ["Qwen2.5-0.5B"]}


def test_every_numeric_option_has_a_range_stated_in_its_help() -> None:
    assert len(NUMERIC) > 40
    for path, _, option in NUMERIC:
        assert option.opts[0] in RANGES, f"gpuplan {path} {option.opts[0]} has no range in gpuplan.requests.RANGES"
        assert f"Range: {RANGES[option.opts[0]].text()}." in (option.help or ""), (path, option.opts[0])


@pytest.mark.parametrize(("path", "option"), [(path, p.opts[0]) for path, _, p in NUMERIC],
                         ids=[f"{path}:{p.opts[0]}" for path, _, p in NUMERIC])
def test_every_numeric_option_refuses_a_value_past_either_end(path: str, option: str) -> None:
    r = RANGES[option]
    over = int(r.high) + 1 if r.high < 1e15 else 10**18
    under = r.low if r.above else r.low - 1
    for value in (over, under):
        text = f"{value:g}" if isinstance(value, float) else str(value)
        refused((*path.split(), *NEEDS.get(path, []), option, text), f"error: {option}: ", "out of range")


# ---------------------------------------------------------------- exit statuses


def test_a_bug_exits_3_with_one_line_not_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("list_gpus exploded")

    monkeypatch.setattr("gpuplan.listing.list_gpus", broken)
    code, _, err = run("gpus")
    assert code == 3 and "Traceback" not in err
    assert err.startswith("error: internal error (RuntimeError: list_gpus exploded)") and "report it" in err
    monkeypatch.setenv("GPUPLAN_DEBUG", "1")
    with pytest.raises(RuntimeError):
        run("gpus")


def test_the_statuses_are_distinct_and_documented() -> None:
    assert sorted(cli.EXIT_CODES) == [0, 1, 2, 3, 4, 130]
    doc = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    section = doc.split("## Exit status", 1)[1].split("\n## ", 1)[0]
    for code, meaning in cli.EXIT_CODES.items():
        assert f"| {code} | {meaning} |" in section


# ---------------------------------------------------------------- user catalogs


def test_rows_a_user_catalog_replaces_are_named(tmp_path: Path) -> None:
    lines = (BUNDLED_DIR / "gpus.csv").read_text(encoding="utf-8").splitlines()
    h100 = next(line for line in lines if line.startswith("H100,"))
    (tmp_path / "gpus.csv").write_text(lines[0] + "\n" + h100 + "\n", encoding="utf-8")
    code, out, err = run("--catalog", str(tmp_path), "gpus", "--json")
    assert code == 0, err
    assert err.startswith("note: your catalog replaces 1 bundled row(s): gpus.csv 'H100' (by ")
    assert json.loads(out)  # the notice is on stderr: the JSON stays parseable


# ---------------------------------------------------------------- options where they do not apply


FINETUNE = ("plan", "finetune", "Qwen2.5-0.5B", "--samples", "1k", "--tokens-per-sample", "256", "--top", "1")


@pytest.mark.parametrize(("argv", "option"), [
    ((*FINETUNE, "--method", "full", "--lora-rank", "16"), "--lora-rank"),  # 16 is the default: still given
    ((*FINETUNE, "--method", "full", "--lora-targets", "all-linear"), "--lora-targets"),
    (("estimate", "Qwen2.5-0.5B", "--task", "infer", "--zero", "0"), "--zero"),
    (("estimate", "Qwen2.5-0.5B", "--task", "finetune", "--samples", "1k", "--tokens-per-sample", "256",
      "--engine", "vllm"), "--engine"),
    (("estimate", "Qwen2.5-0.5B", "--task", "finetune", "--method", "lora", "--samples", "1k",
      "--tokens-per-sample", "256", "--prefix-len", "128"), "--prefix-len"),
], ids=["lora-rank", "lora-targets", "zero", "engine", "prefix-len"])
def test_an_option_given_where_it_does_not_apply_is_refused_even_at_its_default(argv: tuple[str, ...],
                                                                                 option: str) -> None:
    refused(argv, option, f"drop {option}")


def test_the_same_options_left_out_plan() -> None:
    code, _, err = run(*FINETUNE, "--method", "full")
    assert code == 0, err


def test_the_python_api_refuses_an_option_given_at_its_default_too() -> None:
    import gpuplan
    from gpuplan.errors import InputError

    with pytest.raises(InputError, match="--lora-rank applies to --method lora, qlora, dora, adalora or galore"):
        gpuplan.estimate("Qwen2.5-0.5B", "T4", "finetune", method="full", lora_rank=16, samples="1k",
                         tokens_per_sample=256)
    with pytest.raises(InputError, match="--zero applies to training"):
        gpuplan.estimate("Qwen2.5-0.5B", "T4", "infer", zero=0)


def test_qdora_is_refused_saying_why_and_what_to_use() -> None:
    import gpuplan
    from gpuplan.errors import InputError

    with pytest.raises(InputError, match=r"QDoRA .* not modelled") as err:
        gpuplan.estimate("Qwen2.5-0.5B", "T4", "finetune", method="dora", quant="bnb-nf4", samples="1k",
                         tokens_per_sample=256)
    assert err.value.field == "--quant" and "--method qlora" in err.value.fix


def test_llama_adapter_takes_a_4bit_base_and_counts_litgpts_trainable_parameters() -> None:
    import gpuplan

    # LitGPT's finetune_adapter_v2 --quantize bnb.nf4 on Llama-2-7B: 4,279,744 trainable parameters (its
    # tutorials/resource-tables.md @26857050), over a 4-bit base
    e = gpuplan.estimate("Llama-2-7B", "A100-40GB", "finetune", method="adapter-v2", quant="bnb-nf4", samples="1k",
                         tokens_per_sample=512)
    assert e.setup.base_quant == "bnb-nf4" and e.setup.method == "adapter-v2"
    assert e.memory.trained.trainable_params == 4_279_744


def test_adalora_takes_lora_rank_and_targets_as_its_initial_rank_and_modules() -> None:
    import gpuplan

    # Qwen2.5-0.5B (24 layers, hidden 896, 2 KV heads of 64), AdaLoRA at init_r 8 on q, k, v, o: per layer
    # A (8 x in) + B (out x 8) + Λ (8) = q 14,344 + k 8,200 + v 8,200 + o 14,344 = 45,088; x 24 = 1,082,112
    e = gpuplan.estimate("Qwen2.5-0.5B", "T4", "finetune", method="adalora", lora_rank=8, lora_targets="attention",
                         samples="1k", tokens_per_sample=256)
    assert e.memory.answers.trainable_params == 1_082_112


def test_adalora_on_a_quantized_base_is_refused_as_not_modelled_not_as_training_16bit_weights() -> None:
    import gpuplan
    from gpuplan.errors import InputError

    with pytest.raises(InputError, match="AdaLoRA on a quantized base is not modelled") as err:
        gpuplan.estimate("Qwen2.5-0.5B", "T4", "finetune", method="adalora", quant="bnb-nf4", samples="1k",
                         tokens_per_sample=256)
    assert err.value.field == "--quant" and "--method qlora" in err.value.fix
