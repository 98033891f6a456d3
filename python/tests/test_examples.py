"""Every example in examples/ and the Python worked examples of README.md and docs/ run and exit 0,
each in its smallest form (CPU backend, small or insecure parameter sets, few iterations), as a
user runs them: a new interpreter, the package from PYTHONPATH, the packages of the pinned list.
The examples check their own results against plaintext computation and exit non-zero when a check
fails."""

from __future__ import annotations

import concurrent.futures
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

# (script, arguments, a phrase its output must contain). The quickest configurations each script
# offers; the default ones are the GPU / 128-bit runs of the README. Listed longest first: they
# run two at a time (the machine's two cores; much of each run is single-threaded Python, or
# waiting for Ray), each test waiting for its own.
RUNS = [
    ("bootstrapping.py", ["--backend", "cpu", "--rounds", "2"], "precision vs numpy"),
    ("helr_training.py", ["--small", "--backend", "cpu", "--iterations", "2", "--batch", "16"],
     "held-out accuracy"),
    ("logistic_regression.py", ["--preset", "test_n12", "--insecure", "--backend", "cpu"],
     "encrypted predictions agree"),
    ("polynomial_activation.py", ["--preset", "test_n12", "--insecure", "--backend", "cpu"],
     "gelu"),
    ("resnet20_inference.py", ["--tiny", "--backend", "cpu"], "logits precision"),
    ("resnet20_train.py", ["--tiny", "--epochs", "1", "--out", "{tmp}/tiny.theocnn"],
     "test accuracy"),
    ("serve_client.py", ["--local", "--preset", "test_n12", "--insecure", "--jobs", "2"], "OK"),
]


def run(args: list[str], cwd: pathlib.Path, timeout: int = 900) -> str:
    env = dict(os.environ, THEO_BACKEND="cpu", PYTHONUNBUFFERED="1")
    # The scripts run in a scratch folder: the package's path must not be relative.
    env["PYTHONPATH"] = os.pathsep.join(
        os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p)
    r = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=timeout)
    out = r.stdout + r.stderr
    assert r.returncode == 0, f"{' '.join(args)} exited {r.returncode}:\n{out[-4000:]}"
    return out


@pytest.fixture(scope="module")
def example_runs(tmp_path_factory):
    """Every example started at once on a pool of two: script -> (future output, its folder)."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)
    runs = {}
    for script, args, _ in RUNS:
        cwd = tmp_path_factory.mktemp(script.removesuffix(".py"))
        argv = [str(EXAMPLES / script), *(a.format(tmp=cwd) for a in args)]
        runs[script] = pool.submit(run, argv, cwd)
    yield runs
    pool.shutdown(wait=True, cancel_futures=True)


def test_every_example_has_a_run_here():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(name for name, _, _ in RUNS)


@pytest.mark.parametrize("script,phrase", [(r[0], r[2]) for r in RUNS], ids=[r[0] for r in RUNS])
def test_example_runs(script, phrase, example_runs):
    out = example_runs[script].result()
    print(out[-3000:])  # shown with pytest -rP
    assert phrase in out, out[-4000:]


def test_readme_python_quick_check(tmp_path):
    out = run(["-c", "import theodosian as th; print(th.__version__, th.presets())"], tmp_path)
    assert "n16_s40_boot" in out


def test_sim_worked_example(tmp_path):
    """docs/sim.md's worked example (and README.md's), the timeline plot included."""
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
