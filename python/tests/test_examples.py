"""Every example in examples/ and the Python worked examples of README.md and docs/ run and exit 0,
each in its smallest form (CPU backend, small or insecure parameter sets, few iterations), as a
user runs them: a new interpreter, the package from PYTHONPATH, the packages of the pinned list.
The examples check their own results against plaintext computation and exit non-zero when a check
fails."""

from __future__ import annotations

import concurrent.futures
import os
import pathlib
import re
import subprocess
import sys
import threading

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
STDERR_MARK = "\n---- stderr ----\n"
EXAMPLES = ROOT / "examples"

# (script, arguments, checks). The quickest configurations each script offers; the default ones
# are the GPU / 128-bit runs of the README. A check is (pattern, minimum): the pattern must match
# the output and every number it captures must reach the minimum -- the precision in bits of the
# encrypted result against the same computation in plaintext, an agreement rate, a count. Listed
# longest first: they run two at a time (the machine's two cores; much of each run is
# single-threaded Python or waiting for Ray), each test waiting for its own; the two that start a
# local Ray cluster take turns.
BITS = r"(-?[0-9.]+|inf) bits"
RUNS = [
    ("serve_client.py", ["--local", "--preset", "test_n12", "--insecure", "--jobs", "2"],
     [(r"max error ([0-9.e+-]+) against the polynomial", None), (r"^(OK)", None)]),
    ("resnet20_train.py", ["--tiny", "--epochs", "1", "--out", "{tmp}/tiny.theocnn"],
     [(r"test accuracy ([0-9.]+)", 0.0)]),
    ("serve_http_client.py", ["--local", "--preset", "test_n12", "--insecure", "--jobs", "2"],
     [(r"max error ([0-9.e+-]+) against the polynomial", None), (r"^(OK)", None)]),
    ("resnet20_inference.py", ["--tiny", "--backend", "cpu"],
     [(r"logits precision " + BITS, 10.0), (r"inference: .* (\d+) bootstrapping", 1)]),
    ("resnet20_relu_inference.py", ["--tiny", "--backend", "cpu", "--count", "1"],
     [(r"logits " + BITS, 10.0), (r"(\d+) bootstrappings per image", 1),
      (r"class = plaintext AppReLU (\d+)/1", 1)]),
    # Both layouts; 5 iterations reach a bootstrapping in each (Han's after 3, the sparse
    # variant's after 4).
    ("helr_training.py", ["--small", "--backend", "cpu", "--iterations", "5", "--batch", "16"],
     [(r"encrypted vs numpy " + BITS, 12.0), (r"\((\d+) bootstrappings\)", 1)]),
    ("bootstrapping.py", ["--backend", "cpu", "--rounds", "2"],
     [(r"precision vs numpy\s+" + BITS, 15.0)]),
    ("logistic_regression.py", ["--preset", "test_n12", "--insecure", "--backend", "cpu"],
     [(r"linear layer\s*: precision vs numpy\s+" + BITS, 15.0),
      (r"precision vs polynomial\s+" + BITS, 15.0), (r"agree with sklearn on ([0-9.]+)", 0.95)]),
    ("polynomial_activation.py", ["--preset", "test_n12", "--insecure", "--backend", "cpu"],
     [(r"precision vs polynomial\s+" + BITS, 15.0),
      (r"^\s+(?:sigmoid|tanh|silu|gelu)\s+\d+\s+\d+\s+[0-9.]+\s+([0-9.]+|inf)", 15.0)]),
]


def run(args: list[str], cwd: pathlib.Path, timeout: int = 900) -> str:
    env = dict(os.environ, THEO_BACKEND="cpu", PYTHONUNBUFFERED="1")
    # The scripts run in a scratch folder: the package's path must not be relative.
    env["PYTHONPATH"] = os.pathsep.join(
        os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p)
    r = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=timeout)
    out = r.stdout + STDERR_MARK + r.stderr
    assert r.returncode == 0, f"{' '.join(args)} exited {r.returncode}:\n{out[-4000:]}"
    return out


@pytest.fixture(scope="module")
def example_runs(tmp_path_factory):
    """Every example started at once on a pool of two: script -> future output. The examples that
    start a local Ray cluster take turns."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)
    ray_turn = threading.Lock()

    def run_example(script: str, argv: list[str], cwd: pathlib.Path) -> str:
        if script.startswith("serve_"):
            with ray_turn:
                return run(argv, cwd)
        return run(argv, cwd)

    runs = {}
    for script, args, _ in RUNS:
        cwd = tmp_path_factory.mktemp(script.removesuffix(".py"))
        argv = [str(EXAMPLES / script), *(a.format(tmp=cwd) for a in args)]
        runs[script] = pool.submit(run_example, script, argv, cwd)
    yield runs
    pool.shutdown(wait=True, cancel_futures=True)


def test_every_example_has_a_run_here():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(name for name, _, _ in RUNS)


@pytest.mark.parametrize("script,checks", [(r[0], r[2]) for r in RUNS], ids=[r[0] for r in RUNS])
def test_example_runs(script, checks, example_runs):
    out = example_runs[script].result()
    stdout = out.split(STDERR_MARK)[0]
    print(stdout[-3000:])  # shown with pytest -rP
    for pattern, minimum in checks:
        found = re.findall(pattern, stdout, re.MULTILINE)
        assert found, f"{script}: no line matches {pattern!r}:\n{stdout[-3000:]}"
        if minimum is not None:
            values = [float(v) for v in found]
            assert min(values) >= minimum, f"{script}: {pattern!r} gave {values} < {minimum}"


def test_readme_python_quick_check(tmp_path):
    out = run(["-c", "import theodosian as th; print(th.__version__, th.presets())"], tmp_path)
    assert "n16_s40_boot" in out


def test_sim_worked_example(tmp_path):
    """docs/sim.md's worked example (and README.md's), the timeline plot included, and
    docs/trace-format.md's synthetic trace. (The whole study, `sim study`, takes minutes: run by
    hand.)"""
    run(["-m", "theodosian.sim", "machines"], tmp_path)
    run(["-m", "theodosian.sim", "affinity", "bootparam_40-c6-hmult", "--machine",
         "paper-gpu-hmc"], tmp_path)
    run(["-m", "theodosian.sim", "run", "bootparam_40-c6-hmult", "--machine", "paper-baseline",
         "--techniques", "baseline"], tmp_path)
    out = run(["-m", "theodosian.sim", "run", "bootparam_40-c6-hmult", "--machine",
               "paper-gpu-hmc", "--techniques", "full", "--model-variant", "lean-innerp",
               "--compare", "--timeline", "hmult.png"], tmp_path)
    assert "techniques full" in out
    png = tmp_path / "hmult.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # docs/trace-format.md: a synthetic ResNet-20 trace.
    out = run(["-m", "theodosian.sim", "synth", "resnet20", "--out", "resnet20.json"], tmp_path)
    assert "synthetic" in out and (tmp_path / "resnet20.json").stat().st_size > 0
