"""skill-evolution-harness: evolve SKILL.md files with DSPy optimizers under objective fitness.

The code map (README, "Code map") names each subpackage's job; importing this package has no side effects.
"""

__version__ = "0.1.0"
