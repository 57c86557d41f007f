"""The one exception base class of harness_world.

Every error the library raises on purpose derives from `HarnessWorldError`, so a caller can
catch them all in one place; each keeps the more specific built-in base it had (`ValueError`
for malformed input) so existing ``except ValueError`` code keeps working.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = ["HarnessWorldError"]


class HarnessWorldError(Exception):
    """Base class of every exception harness_world raises deliberately.

    Attributes:
        exit_code: The command line's exit code when it ends a command: 2 (input refused)
            unless the error is a failed check (1).
    """

    exit_code: ClassVar[int] = 2
