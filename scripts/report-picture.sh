#!/bin/bash
# The README's picture of report.html, made from a real run's report rather than drawn by hand:
#   scripts/report-picture.sh [RUN_DIR]
# RUN_DIR defaults to the newest run `make demo` left under out/demo/reports. The page is
# rendered by headless Chromium (installed by scripts/install-deps.sh, as the report's system
# test uses it), cut to its top (the verdicts and the first test's charts) and written to
# docs/images/report.png.
set -euo pipefail
cd "$(dirname "$0")/.."
run_dir=${1:-$(ls -d out/demo/reports/*/ 2>/dev/null | sort | tail -n 1)}
if [[ -z $run_dir || ! -f $run_dir/report.html ]]; then
  echo "report-picture: no report.html in '${run_dir:-out/demo/reports/*}': run 'make demo' first, or name a run directory" >&2
  exit 2
fi
command -v chromium > /dev/null || { echo "report-picture: chromium is missing: apt-get install chromium" >&2; exit 2; }
shot=$(mktemp --suffix=.png)
trap 'rm -f "$shot"' EXIT
# A 1200-pixel page: the report's own layout at a laptop's width; the crop keeps its top.
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1200,1500 \
  --screenshot="$shot" "file://$(realpath "$run_dir/report.html")" > /dev/null 2>&1
mkdir -p docs/images
/usr/bin/python3 - "$shot" docs/images/report.png << 'PY'
import sys
from PIL import Image
image = Image.open(sys.argv[1]).convert("RGB")
image = image.resize((image.width * 3 // 4, image.height * 3 // 4), Image.LANCZOS)
image.convert("P", palette=Image.ADAPTIVE, colors=128).save(sys.argv[2], optimize=True)
PY
echo "report-picture: docs/images/report.png from $run_dir/report.html"
