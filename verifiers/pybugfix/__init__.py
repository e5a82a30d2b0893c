"""The python-bugfix verifier: small buggy Python functions, graded by hidden tests run in a sandbox.

Importing this package registers :class:`PythonBugfixVerifier` as the verifier of the ``python-bugfix``
skill.  Modules: :mod:`~verifiers.pybugfix.tasks` (the pool), :mod:`~verifiers.pybugfix.extract` (finding
the function in an answer), :mod:`~verifiers.pybugfix.sandbox` (running it confined),
:mod:`~verifiers.pybugfix.grading` (the grade), :mod:`~verifiers.pybugfix.verifier` (the verifier).
The sandbox mode comes from ``PythonBugfixVerifier(sandbox=...)`` or env ``HARNESS_SANDBOX``
(``auto`` | ``required`` | ``limits``).
"""

from verifiers.pybugfix.sandbox import (
    SANDBOX_ENV,
    Limits,
    Sandbox,
    SandboxUnavailableError,
    SandboxWarning,
)
from verifiers.pybugfix.verifier import PythonBugfixVerifier

__all__ = [
    "SANDBOX_ENV",
    "Limits",
    "PythonBugfixVerifier",
    "Sandbox",
    "SandboxUnavailableError",
    "SandboxWarning",
]
