"""Errors a user can cause: shown as one clear message, exit code 2."""


class UserError(Exception):
    """Something the user can fix (bad plan, missing tool, not root, ...).

    The message names the cause and the fix; the CLI prints it and exits 2.
    """


class CommandFailed(Exception):
    """An external command exited non-zero; carries its result for the record."""

    def __init__(self, result, context: str = ""):  # result: proc.CommandResult
        self.result = result
        tail = (result.stderr or result.stdout).strip().splitlines()[-5:]
        super().__init__(
            f"{' '.join(result.argv)} exited {result.exit_code}: "
            + " | ".join(tail)
            + (f" || {context}" if context else "")
        )


class Interrupted(BaseException):
    """Raised from the SIGTERM handler so every cleanup block unwinds.

    A BaseException like KeyboardInterrupt, so ``except Exception`` in a
    workload does not swallow it.
    """

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(f"signal {signum}")


class ResultsUnwritable(Exception):
    """The results directory can no longer be written (full, read-only, gone).

    The campaign stops: nothing more could be recorded. What is already stored
    stays; the CLI says so in one line and exits 1.
    """
