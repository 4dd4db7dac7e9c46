#!/usr/bin/env bash
# Passes cargo test's output through and ends it with what did not run, so a test left out is
# never mistaken for one that passed (make test-rust, make test-backends):
#   cargo test … 2>&1 | scripts/test-summary.sh LABEL
# prints, after the output, one line with the totals of every "test result:" line, then one line
# per reason an #[ignore = "…"] gave, with how many tests it left out. Its status is 0; the
# Makefile's pipefail keeps cargo's.
set -euo pipefail
label="${1:-tests}"
exec awk -v label="$label" '
  { print; fflush() }
  # "test gcs::register_and_list ... ignored, no GCS emulator …"
  /^test .* \.\.\. ignored/ {
    why = $0
    if (sub(/^test .* \.\.\. ignored, /, "", why) == 0) why = "(no reason given)"
    reasons[why]++
  }
  # "test result: ok. 58 passed; 0 failed; 58 ignored; 0 measured; 0 filtered out; finished in …"
  /^test result: / {
    for (i = 1; i <= NF; i++) {
      if ($(i + 1) ~ /^passed;/) passed += $i
      if ($(i + 1) ~ /^failed;/) failed += $i
      if ($(i + 1) ~ /^ignored;/) ignored += $i
      if ($(i + 1) == "filtered" && $(i + 2) ~ /^out/) filtered += $i
    }
  }
  END {
    printf "%s: %d passed, %d failed, %d ignored (not run), %d filtered out (not run)\n", label, passed, failed, ignored, filtered
    for (why in reasons) printf "%s: %d ignored: %s\n", label, reasons[why], why
  }
'
