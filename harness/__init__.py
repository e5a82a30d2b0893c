"""skill-evolution-harness: evolve SKILL.md files with DSPy optimizers under objective fitness."""

import os as _os

# LiteLLM fetches its model cost map from the network at import time unless told to use the copy it
# ships; an offline machine would wait for retries.  Users can still override the variable.
_os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# MLflow sends usage telemetry to its own host unless told not to; a run on the embedded model must make no
# network connection at all.  Users can still opt in by setting the variable to "false".
_os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

__version__ = "0.1.0"
