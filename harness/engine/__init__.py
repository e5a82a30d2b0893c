"""The evolution engine: the skill program, the graders and their registry, proposers, the optimizers behind one
protocol, and holdout evaluation.  It imports no concrete verifier and no tracking code."""
