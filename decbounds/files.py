"""Files written whole: one atomic write for every output of decbounds (figures, tables, reports, caches).

A killed run leaves the old file or the new one, never half a file, and the new file gets the permissions
any other file the user creates gets (``0o666`` less the umask), not the ``0o600`` of a temporary file.
"""

from __future__ import annotations

import os
import pathlib
import tempfile
import threading

__all__ = ["atomic_write_bytes", "user_file_mode"]

_UMASK_LOCK = threading.Lock()


def user_file_mode() -> int:
    """The mode a new regular file gets here: ``0o666 & ~umask``.

    Linux reports the umask in ``/proc/self/status``; elsewhere it is read by setting and restoring it
    (under a lock, so that two threads of this package never see the temporary zero).

    Returns
    -------
    int
        For example ``0o644`` under the common umask ``0o022``.

    Examples
    --------
    >>> user_file_mode() & 0o600
    384
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return 0o666 & ~mask


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> pathlib.Path:
    """Write `data` to `path` through a temporary file in the same folder and ``os.replace``.

    A killed run leaves the old file or the new one, never half a file; the folder is created, and the file
    gets the user's mode (`user_file_mode`).

    Parameters
    ----------
    path : str or os.PathLike
        The destination.
    data : bytes
        The whole content.

    Returns
    -------
    pathlib.Path
        `path`.

    Examples
    --------
    >>> import shutil
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> atomic_write_bytes(folder / "a" / "note.txt", b"done").read_text()
    'done'
    >>> oct((folder / "a" / "note.txt").stat().st_mode & 0o777) == oct(user_file_mode())
    True
    >>> shutil.rmtree(folder)
    """
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fchmod(handle.fileno(), user_file_mode())
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        pathlib.Path(temporary).unlink(missing_ok=True)
        raise
    return path
