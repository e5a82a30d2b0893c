"""skill-evolution-harness: evolve SKILL.md files with DSPy optimizers under objective fitness."""

import os as _os

# LiteLLM fetches its model cost map from the network at import time unless told to use the copy it
# ships; an offline machine would wait for retries.  Users can still override the variable.
_os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

__version__ = "0.1.0"
