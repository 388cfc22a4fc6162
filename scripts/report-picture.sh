#!/bin/bash
# The README's picture of report.html, made from a real run's report rather than drawn by hand:
#   scripts/report-picture.sh [RUN_DIR [CASE]]
# RUN_DIR defaults to the newest run `make demo` left under out/demo/reports; CASE (default
# pfc_storm: senders' rates, the switch ports' PFC and the mirrors' CNP/PFC timeline) is the test
# whose section is shown under the verdict table, the other tests' sections hidden. The page is
# rendered by headless Chromium (installed by scripts/install-deps.sh, as the report's system
# test uses it), trimmed of the blank below it and written to docs/images/report.png.
set -euo pipefail
cd "$(dirname "$0")/.."
run_dir=${1:-$(ls -d out/demo/reports/*/ 2>/dev/null | sort | tail -n 1)}
if [[ -z $run_dir || ! -f $run_dir/report.html ]]; then
  echo "report-picture: no report.html in '${run_dir:-out/demo/reports/*}': run 'make demo' first, or name a run directory" >&2
  exit 2
fi
command -v chromium > /dev/null || { echo "report-picture: chromium is missing: apt-get install chromium" >&2; exit 2; }
case_name=${2:-pfc_storm}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The same page with one stylesheet more: only the chosen test's section, its charts open.
sed "s|</head>|<style>section[id^=test-]:not(#test-${case_name}){display:none} details.nics,details.switches{display:none} body>h2:last-of-type,body>h2:last-of-type~*{display:none}</style></head>|" \
  "$run_dir/report.html" > "$work/report.html"
grep -q "id=\"test-${case_name}\"" "$work/report.html" ||
  { echo "report-picture: $run_dir/report.html has no test '$case_name'" >&2; exit 2; }
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1200,3000 \
  --screenshot="$work/shot.png" "file://$work/report.html" > /dev/null 2>&1
mkdir -p docs/images
/usr/bin/python3 - "$work/shot.png" docs/images/report.png << 'PY'
import sys
from PIL import Image, ImageChops
image = Image.open(sys.argv[1]).convert("RGB")
# Trim the white below the page's end (and at its right), keeping a margin.
blank = Image.new("RGB", image.size, (255, 255, 255))
box = ImageChops.difference(image, blank).getbbox()
image = image.crop((0, 0, min(image.width, box[2] + 16), min(image.height, box[3] + 16)))
image = image.resize((image.width * 3 // 4, image.height * 3 // 4), Image.LANCZOS)
image.convert("P", palette=Image.ADAPTIVE, colors=128).save(sys.argv[2], optimize=True)
PY
echo "report-picture: docs/images/report.png from $run_dir/report.html"
