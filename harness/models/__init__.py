"""Language models: ``build_lm`` and ``ModelSpec``, the embedded llama.cpp engine, usage counting per role, the
preflight probe, and the scripted offline test engines (which import nothing from the engine or tracking)."""
