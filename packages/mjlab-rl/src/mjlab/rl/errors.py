"""`UserError`: a mistake of the user's, which a command shows as one line, not a traceback."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


class UserError(Exception):
    """A mistake the user can fix: a bad task id, config value, file, device or robot model.

    `mjlab.rl.cli.run_command` prints it as `PROG: error: MESSAGE` and exits with status 2;
    any other exception keeps its traceback. The error it stands for is its `__cause__`, which
    `--debug` raises with its traceback. `user_errors()` turns the errors of a command's
    set-up into this type.
    """


def setup_error_types() -> tuple[type[BaseException], ...]:
    """The exception types that mean a user's mistake while a command sets up: `KeyError`,
    `ValueError` (including `mjlab.utils.config.ConfigError`), `FileNotFoundError` (including
    `mjlab.deploy.menagerie.RobotModelError`, a robot model that could not be loaded) and
    `mjlab.deploy.headless.HeadlessGLError`."""
    from mjlab.deploy.headless import HeadlessGLError

    return (KeyError, ValueError, FileNotFoundError, HeadlessGLError)


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """Re-raise a set-up error (`setup_error_types`) raised inside as a `UserError` with the
    same message (a KeyError's key text without quotes), chained to it.

    Raises:
        UserError: in place of a set-up error.
    """
    try:
        yield
    except UserError:
        raise
    except Exception as err:
        if not isinstance(err, setup_error_types()):
            raise
        text = err.args[0] if isinstance(err, KeyError) and err.args else str(err)
        raise UserError(text) from err
