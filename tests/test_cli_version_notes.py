"""What stands in for the engine release a config names is said on the command line,
not only in ``metadata.backend_version.notes``: vLLM 0.6.0 runs the V0 engine, which is
not modelled (V1's scheduler stands in), and its batch defaults and CUDA-graph capture
sizes are not tabulated (the rule of 0.9.0 and later, the sizes of 0.12.0 stand in). ``replay`` and ``bench`` print each note on stderr as
``aisimulate: note: engine.backend_version 0.6.0: …`` (``-q`` hides it, as their other
notes), ``validate`` adds it to its description; a release without notes prints none."""

from __future__ import annotations

from conftest import REPO, run_cli

QUICKSTART = str(REPO / "examples" / "quickstart.yaml")
ENGINE = str(REPO / "examples" / "bench" / "engine.yaml")
SMALL = ("--set", "traffic.source.num_requests=4")
V0 = ("engine.backend_version 0.6.0: vLLM 0.6.0 runs the V0 engine by default, which is not "
      "modelled (the V1 scheduler stands in; prefix caching off, V0's default)")
DEFAULTS = ("engine.backend_version 0.6.0: vLLM 0.6.0's default max_num_seqs and "
            "max_num_batched_tokens are not tabulated: the rule of 0.9.0 and later stands in")
GRAPHS = ("engine.backend_version 0.6.0: vLLM 0.6.0's default CUDA-graph capture sizes are not "
          "tabulated: those of 0.12.0 stand in")


def test_replay_says_what_stands_in_for_the_release(tmp_path):
    proc = run_cli("replay", QUICKSTART, *SMALL, "--set", "engine.backend_version=0.6.0", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [f"aisimulate: note: {V0}", f"aisimulate: note: {DEFAULTS}",
                                        f"aisimulate: note: {GRAPHS}"]
    quiet = run_cli("replay", QUICKSTART, *SMALL, "--set", "engine.backend_version=0.6.0", "-q", cwd=tmp_path)
    assert quiet.returncode == 0 and quiet.stderr == ""
    assert quiet.stdout == proc.stdout  # the report is the same: only what is said changes


def test_a_release_without_notes_prints_none(tmp_path):
    proc = run_cli("replay", QUICKSTART, *SMALL, "--set", "engine.backend_version=0.15.1", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == ""


def test_validate_describes_the_stand_ins(tmp_path):
    proc = run_cli("validate", QUICKSTART, "--set", "engine.backend_version=0.6.0", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-3:] == [f"  note: {V0}", f"  note: {DEFAULTS}", f"  note: {GRAPHS}"]


def test_bench_says_a_nightly_is_the_newest_release_known(tmp_path):
    proc = run_cli("bench", ENGINE, "--set", "engine.backend_version=nightly", "--", "vllm", "bench", "serve",
                   "--dataset-name", "random", "--random-input-len", "64", "--random-output-len", "4",
                   "--num-prompts", "4", "--ignore-eos", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    notes = [ln for ln in proc.stderr.splitlines() if ln.startswith("aisimulate: note: engine.backend_version")]
    assert notes and notes[0].startswith(
        'aisimulate: note: engine.backend_version nightly: "nightly" is a build from main: the newest release known, ')
