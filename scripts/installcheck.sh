#!/usr/bin/env bash
# Install aisimulate as a user would and replay the quickstart outside the checkout:
#   1. build the wheel in a fresh venv (`pip wheel .`: PEP 517, isolated build env, the
#      native core built by setup.py);
#   2. check its tag is a platform tag for this interpreter (cp311-cp311-linux_x86_64);
#   3. install it in another fresh venv and run `aisimulate replay` on the quickstart,
#      `aisimulate models` and `aisimulate systems` from a folder outside the checkout.
# Used by `make test` (make installcheck). Exits non-zero at the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
# A user's shell has no PYTHONPATH into the checkout (make exports one): with it, pip
# would find python/aisimulate.egg-info, call the package installed, and skip the wheel.
unset PYTHONPATH
PYTHON=${PYTHON:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/aisimulate-installcheck-XXXXXX")
trap 'rm -rf "$work"' EXIT

t0=$SECONDS
"$PYTHON" -m venv "$work/build-venv"
"$work/build-venv/bin/python" -m pip wheel -q --no-deps -w "$work/dist" . 2> "$work/build.log" \
	|| { tail -40 "$work/build.log" >&2; exit 1; }
wheel=$(ls "$work"/dist/aisimulate-*.whl)
tag=$("$PYTHON" -c 'import sys, sysconfig; v = "".join(map(str, sys.version_info[:2])); print(f"cp{v}-cp{v}-" + sysconfig.get_platform().replace("-", "_").replace(".", "_"))')
case "$(basename "$wheel")" in
	*-"$tag".whl) ;;
	*) echo "installcheck: the wheel $(basename "$wheel") is not tagged $tag" >&2; exit 1 ;;
esac
t1=$SECONDS

"$PYTHON" -m venv "$work/run-venv"
"$work/run-venv/bin/python" -m pip install -q "$wheel"
t2=$SECONDS

mkdir "$work/elsewhere"
cp examples/quickstart.yaml "$work/elsewhere/"
(
	cd "$work/elsewhere"
	unset PYTHONPATH AISIMULATE_DATA
	"$work/run-venv/bin/aisimulate" replay quickstart.yaml --format json > replay.json
	"$work/run-venv/bin/python" -c '
import json, sys
r = json.load(open("replay.json"))
s = r["summary"]
# examples/quickstart.yaml sends 500 requests; all complete
assert s["completed"] == 500 and s["failed"] == 0, s
import aisimulate, os
assert "site-packages" in aisimulate.__file__, aisimulate.__file__
'
	"$work/run-venv/bin/aisimulate" models --format csv > models.csv
	"$work/run-venv/bin/aisimulate" systems --format csv > systems.csv
	echo "installcheck: $(basename "$wheel"); $(($(wc -l < models.csv) - 1)) models, $(($(wc -l < systems.csv) - 1)) systems"
)
t3=$SECONDS
echo "installcheck: wheel built in $((t1 - t0)) s, installed in $((t2 - t1)) s, quickstart replayed in $((t3 - t2)) s"
