#!/usr/bin/env bash
# Times calibrate and validate on the largest points file the reader admits
# (2 MiB), built from data/measured/calibration.csv: once with its own 15
# sources, once with a source per row (the most folds a file can ask for).
#   benchmarks/validate_limits.sh build/release/llmroof [BYTES]
# BYTES (default the reader's 2 MiB limit) makes the files smaller: scripts/test.sh
# runs it at 64 KiB so that the script cannot break unseen.
set -euo pipefail
cli="${1:-build/release/llmroof}"
bytes="${2:-2097152}"
here="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 - "$here/data/measured/calibration.csv" "$work" "$bytes" <<'PY'
import csv, io, sys
from pathlib import Path
src, out = sys.argv[1], Path(sys.argv[2])
with open(src, newline="") as f:
    header, *rows = list(csv.reader(f))
limit = int(sys.argv[3]) - 4096
for name, unique in (("same_sources.csv", False), ("source_per_row.csv", True)):
    b = io.StringIO()
    w = csv.writer(b, lineterminator="\n")
    w.writerow(header)
    i = 0
    while b.tell() < limit:
        r = list(rows[i % len(rows)])
        r[0] = f"X{i}"
        if unique:
            r[1] = f"src{i}"
        w.writerow(r)
        i += 1
    (out / name).write_text(b.getvalue())
    print(f"{name}: {i} rows, {b.tell()} bytes")
PY
run() {  # label, then the command's arguments
  local label="$1"; shift
  if ! /usr/bin/time -f "$label: %e s, %M KB" "$cli" "$@" --json >/dev/null 2>"$work/err"; then
    cat "$work/err" >&2; exit 1
  fi
  tail -1 "$work/err"
}
for f in same_sources source_per_row; do
  run "$f.csv: calibrate" calibrate "$work/$f.csv"
  run "$f.csv: validate --no-refit" validate "$work/$f.csv" --no-refit
  run "$f.csv: validate (cross-validated)" validate "$work/$f.csv"
done
