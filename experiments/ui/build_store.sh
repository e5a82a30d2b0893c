#!/usr/bin/env bash
# A store of test-LM runs for the UI screenshot pass (experiments/ui/screenshots.py), issue 16.
#
# Usage: experiments/ui/build_store.sh /tmp/ui16      (a fresh folder outside the repository)
#
# Every run uses the offline test LMs (harness/models/testing.py): the figures say nothing about any model;
# the pages only show where the verdict and its evidence are. About 2 minutes on 2 cores. Then:
#   mlflow server --host 127.0.0.1 --port 5055 --backend-store-uri sqlite:///$DIR/mlflow.db
#   python experiments/ui/screenshots.py --url http://127.0.0.1:5055 --out $DIR/shots --extra-skill tool-choice
# (add --remote for 10b and 10f without MLflow's Assistant panel; the server then needs
#  --cors-allowed-origins http://10.0.0.16:5055)
set -euo pipefail
DIR=${1:?usage: build_store.sh FOLDER}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
case "$DIR/" in "$REPO"/*) echo "FOLDER must lie outside the repository" >&2; exit 2;; esac
export MLFLOW_TRACKING_URI="sqlite:///$DIR/mlflow.db"
cd "$DIR"  # the experiments' artifacts go to ./mlruns here
common=(--judge-model test/judge --cache-dir "$DIR/dspy-cache" --quiet)
# the README's main job: evolve arxiv under the verifier (test/lessons learns from the feedback proposer's lessons)
harness evolve --skill arxiv --fitness verifier --task-model test/lessons --output-dir "$DIR/out/evolve" "${common[@]}"
# an evolved skill equal to the baseline (test/oracle answers everything right: nothing to learn)
harness evolve --skill arxiv --fitness verifier --task-model test/oracle --output-dir "$DIR/out/unchanged" \
  "${common[@]}"
# side-by-side with 2 seeds (the parent's seeds claim report)
harness compare --skill arxiv --fitness keyword,judge,verifier --seeds 2 --task-model test/lessons \
  --output-dir "$DIR/out/compare" "${common[@]}"
# the hand-written variants, ranked
harness ab --skill arxiv --candidates "$REPO/experiments/skills/arxiv/variants" --task-model test/lessons \
  --output-dir "$DIR/out/ab" "${common[@]}"
# a task-file skill (experiments/skills/tool-choice/evals)
harness evolve --skill tool-choice --task-model test/lessons --output-dir "$DIR/out/tool-choice" "${common[@]}"
harness versions --skill arxiv
