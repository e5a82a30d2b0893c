#!/usr/bin/env bash
# The keyword trap, offline: four hand-written variants of the bundled arxiv skill against the baseline, on the
# embedded SmolLM2-135M model, in one `harness ab` parent run (one child per variant).  The parent ranks them by
# the verifier's paired delta and lists every variant that keyword grading rates up while the verifier does not.
#
#   experiments/ab/keyword_trap.sh                       # the demo (README: "Compare two skill versions")
#   experiments/ab/keyword_trap.sh --judge-model embedded   # with the (weak) embedded judge as well: twice as long
#
# Extra arguments go to `harness ab` (the last spelling of an option wins).  The judge is off by default: the
# 135M model leaves most judge replies unparseable (README, "Keyword, judge and verifier side by side").
# --max-tokens 64: an arxiv answer is one sentence; restating the longest question (44 tokens) and giving the longest
# answer (a 19-token title) fits in 63.  The default 128 only lengthens the 135M model's loops (greedy decoding: a
# capped answer is the first 64 tokens of the uncapped one), and generation is most of the demo's time.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec harness ab --skill arxiv --candidates experiments/skills/arxiv/variants --task-model embedded \
    --judge-model "" --max-tokens 64 --num-threads 2 "$@"
